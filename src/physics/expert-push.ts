import { datan2 } from '../core/dmath.ts';
import type { Scene } from '../scene/schema.ts';
import { binOuterHalf, distToRect, distXY, footprintRadius, supportAlong } from '../task/geometry.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { isHeld } from '../task/verify.ts';
import { label, nearestEquivalent, nearXY, yawClose, XY_TOL, Z_TOL, type Goal, type Memory } from './expert-util.ts';
import { YAW_LIMIT } from './sim.ts';

const PUSH_Z = 0.02;
const HOVER_Z = 0.07;
/** Gap between pusher and object before contact. */
const GAP = 0.006;
/** A push goes on while the pusher is this far off the line through the object, and turned this far
 *  from square to the push; it starts only when square to within DESCEND_YAW. */
const SLIP = 0.012;
const PUSH_YAW = 0.3;
const DESCEND_YAW = 0.08;
/** How far a pushed object coasts after the pusher stops (m): the push eases off this much early. */
const COAST = 0.004;
/** Room between a pushed object's footprint and a bin wall; a detour passes a bin corner this far out. */
const BIN_CLEARANCE = 0.015;
/** How far from the object the pusher backs off once the object is in the zone. */
const RETREAT = 0.03;

/** push, a function of the state alone (no memory between steps): the closed fingers form a flat pusher
 *  held square to the line from the object to where it should go (the zone centre, or a point beside a
 *  bin that stands in the way) and pushed along that line through the object's centre. The line is
 *  re-drawn from where the object is at every step, so sideways drift is corrected by the next step's
 *  line, and a box pushed on a corner turns until a face lies flat on the pusher. Pusher low behind the
 *  object on its line: push; over the point behind it: descend; else approach at hover height, rising
 *  straight up first when low (so it never sweeps the object back at table height; open fingers around
 *  the object stay open; a held object is let go first). In the zone: back off and rise. */
export function pushGoal(scene: Scene, s: TabletopState, task: TaskInstance, mem: Memory): Goal {
  const obj = scene.objects[task.object];
  const o = s.objects[task.object];
  const zone = scene.zones[task.target.index];
  const ee = s.eePos;
  if (isHeld(obj, o, s)) {
    label(mem, 'release');
    return { pos: [ee[0], ee[1], ee[2]], yaw: s.eeYaw, grip: 0 };
  }
  if (distToRect(o.pos[0], o.pos[1], zone.centre, [zone.halfSize[0] / 2, zone.halfSize[1] / 2]) === 0)
    return retreat(mem, s, o.pos);
  const [gx, gy] = waypoint(scene, task, s);
  const dist = Math.hypot(gx - o.pos[0], gy - o.pos[1]);
  const px = (gx - o.pos[0]) / dist,
    py = (gy - o.pos[1]) / dist;
  const reach = supportAlong(obj, o.quat, [px, py, 0]) + scene.robot.finger.halfExtents[1];
  const bx = o.pos[0] - px * (reach + GAP),
    by = o.pos[1] - py * (reach + GAP);
  const yaw = nearestEquivalent(datan2(py, px) + Math.PI / 2, Math.PI, s.eeYaw, YAW_LIMIT);
  const along = (ee[0] - bx) * px + (ee[1] - by) * py;
  const lateral = Math.abs((ee[0] - bx) * -py + (ee[1] - by) * px);
  if (
    ee[2] < PUSH_Z + Z_TOL &&
    along > -3 * XY_TOL &&
    along < GAP + 3 * XY_TOL &&
    lateral < SLIP &&
    yawClose(yaw, s.eeYaw, PUSH_YAW)
  ) {
    label(mem, 'push');
    // A full step along the line (fine direction resolution at the largest token), easing off near the
    // end: the object slides on for a few millimetres after contact ends.
    const advance = GAP + Math.min(Math.max(dist - COAST, 0), scene.control.maxTranslation);
    return { pos: [bx + px * advance, by + py * advance, PUSH_Z], yaw, grip: 1 };
  }
  const square = yawClose(yaw, s.eeYaw, DESCEND_YAW);
  if (
    square &&
    ((nearXY(ee, bx, by, 1.5 * XY_TOL) && ee[2] < HOVER_Z + Z_TOL) ||
      (nearXY(ee, bx, by, 3 * XY_TOL) && ee[2] < HOVER_Z - Z_TOL))
  ) {
    label(mem, 'descend');
    return { pos: [bx, by, PUSH_Z], yaw, grip: 1 };
  }
  label(mem, 'approach');
  if (ee[2] < HOVER_Z - Z_TOL && !nearXY(ee, bx, by, 3 * XY_TOL)) {
    // Open fingers around the object rise open rather than close on it.
    const around = distXY(ee, o.pos) < Math.min(obj.halfExtents[0], obj.halfExtents[1]) + 0.005;
    return { pos: [ee[0], ee[1], HOVER_Z], yaw: s.eeYaw, grip: around ? 0 : 1 };
  }
  return { pos: [bx, by, HOVER_Z], yaw, grip: 1 };
}

/** Rise to hover height, moving away from the object while low. */
function retreat(mem: Memory, s: TabletopState, obj: readonly number[]): Goal {
  const ee = s.eePos;
  label(mem, 'retreat');
  if (ee[2] >= HOVER_Z - Z_TOL) return { pos: [ee[0], ee[1], ee[2]], yaw: s.eeYaw, grip: 1 };
  const d = Math.max(distXY(ee, obj), 1e-9);
  const ux = (ee[0] - obj[0]) / d,
    uy = (ee[1] - obj[1]) / d;
  return { pos: [ee[0] + ux * RETREAT, ee[1] + uy * RETREAT, HOVER_Z], yaw: s.eeYaw, grip: 1 };
}

/** Where the object is pushed next: the zone centre when the straight way there keeps clear of every bin,
 *  else the point out from a bin's corner (two distances tried) with a clear way to it and on from it to
 *  the zone centre, the shortest such detour. Once the object is there, the way to the zone is clear. */
function waypoint(scene: Scene, task: TaskInstance, s: TabletopState): [number, number] {
  const o = s.objects[task.object].pos;
  const zone = scene.zones[task.target.index];
  const goal: [number, number] = [zone.centre[0], zone.centre[1]];
  const room = footprintRadius(scene.objects[task.object]) + BIN_CLEARANCE;
  const clear = (a: readonly number[], b: readonly number[]) => segmentClearance(scene, a, b) >= room;
  if (clear(o, goal)) return goal;
  let best: [number, number] = goal;
  let bestLength = Infinity;
  for (const bin of scene.bins) {
    const [hx, hy] = binOuterHalf(bin);
    for (const out of [room, room + 0.02])
      for (const [sx, sy] of CORNERS) {
        const c: [number, number] = [bin.centre[0] + sx * (hx + out), bin.centre[1] + sy * (hy + out)];
        const length = distXY(o, c) + distXY(c, goal);
        if (length < bestLength && clear(o, c) && clear(c, goal)) [best, bestLength] = [c, length];
      }
  }
  return best;
}

const CORNERS = [
  [-1, -1],
  [1, -1],
  [-1, 1],
  [1, 1],
] as const;

/** Smallest distance from the segment a-b (xy) to any bin's outer rectangle. */
function segmentClearance(scene: Scene, a: readonly number[], b: readonly number[]): number {
  let best = Infinity;
  for (let k = 0; k <= 32; k++) {
    const x = a[0] + ((b[0] - a[0]) * k) / 32,
      y = a[1] + ((b[1] - a[1]) * k) / 32;
    for (const bin of scene.bins) best = Math.min(best, distToRect(x, y, bin.centre, binOuterHalf(bin)));
  }
  return best;
}
