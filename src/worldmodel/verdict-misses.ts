// The parts of a family's final stage (the verifier's last predicate) taken apart, for diagnosing why a
// predicted state misses it: a world model's state may miss one part by a little. Reads the verifier's
// tolerances; the verdict itself stays src/task/verify.ts's.
import type { Scene } from '../scene/schema.ts';
import { distToRect, distXY, restHeight, uprightness } from '../task/geometry.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { isHeld, isRestingOnTable, TOL } from '../task/verify.ts';

export interface FinalMisses {
  /** Each part of the final stage and whether it holds: let_go, over_target, then per target kind
   *  height (at the resting / stacked height, or inside the bin), upright, still, target_resting. */
  holds: Record<string, boolean>;
  /** The task object's speed (m/s) and |z - the height the final stage wants| (m; 0 for a bin). */
  speed: number;
  zError: number;
}

export function finalMisses(scene: Scene, task: TaskInstance, state: TabletopState): FinalMisses {
  const obj = scene.objects[task.object];
  const o = state.objects[task.object];
  const { kind, index } = task.target;
  const v = o.linVel;
  const speed = Math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  const letGo = !isHeld(obj, o, state);
  if (kind === 'bin') {
    const bin = scene.bins[index];
    const over = distToRect(o.pos[0], o.pos[1], bin.centre, bin.halfSize) <= 0;
    const inside = o.pos[2] >= 0 && o.pos[2] <= bin.height;
    return { holds: { let_go: letGo, over_target: over, height: inside }, speed, zError: 0 };
  }
  const upright = uprightness(obj, o.quat) >= TOL.uprightCos;
  const still = speed <= TOL.restSpeed;
  if (kind === 'zone') {
    const zone = scene.zones[index];
    const zError = Math.abs(o.pos[2] - restHeight(obj, o.quat));
    const over = distToRect(o.pos[0], o.pos[1], zone.centre, zone.halfSize) <= 0;
    return {
      holds: { let_go: letGo, over_target: over, height: zError <= TOL.restZ, upright, still },
      speed,
      zError,
    };
  }
  const t = scene.objects[index];
  const ts = state.objects[index];
  const wantZ = ts.pos[2] + restHeight(t, ts.quat) + restHeight(obj, o.quat);
  const zError = Math.abs(o.pos[2] - wantZ);
  const over = distXY(o.pos, ts.pos) <= TOL.stackXYFrac * 2 * Math.min(t.halfExtents[0], t.halfExtents[1]);
  return {
    holds: {
      let_go: letGo,
      over_target: over,
      height: zError <= TOL.stackZ,
      upright,
      still,
      target_resting: isRestingOnTable(t, ts),
    },
    speed,
    zError,
  };
}
