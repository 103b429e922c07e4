import type { Scene } from '../scene/schema.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { isHeld } from '../task/verify.ts';
import {
  enter,
  nearestEquivalent,
  nearXY,
  yawClose,
  yawOf,
  Z_TOL,
  XY_TOL,
  type Goal,
  type Memory,
} from './expert-util.ts';
import { YAW_LIMIT } from './sim.ts';

/** TCP heights (m): hover above the object before descending, carry height. */
const HOVER_ABOVE = 0.08;
const CARRY_Z = 0.13;
const CLOSE_STEPS = 3;
const RELEASE_STEPS = 3;

/** pick_place / stack / put_in_bin: approach above, descend, close, lift, carry, lower, release,
 *  retreat; after a missed grasp or a drop: open, rise and start over. */
export function pickGoal(scene: Scene, s: TabletopState, task: TaskInstance, mem: Memory): Goal {
  const obj = scene.objects[task.object];
  const o = s.objects[task.object];
  const held = isHeld(obj, o, s);
  const ee = s.eePos;
  const grasp = obj.shape === 'box' ? nearestEquivalent(yawOf(o.quat), Math.PI / 2, s.eeYaw, YAW_LIMIT) : s.eeYaw;
  const hover = o.pos[2] + HOVER_ABOVE;
  const [gx, gy, placeZ, placeYaw] = placeGoal(scene, task, s);
  // Keep the grasp offset: bring the object (not the TCP) over the goal.
  const tx = gx + ee[0] - o.pos[0],
    ty = gy + ee[1] - o.pos[1];
  const at = (x: number, y: number, z: number, yaw: number) =>
    nearXY(ee, x, y) && Math.abs(ee[2] - z) < Z_TOL && yawClose(yaw, s.eeYaw);
  mem.timer++;
  switch (mem.phase) {
    case 'approach':
      if (at(o.pos[0], o.pos[1], hover, grasp)) enter(mem, 'descend');
      return { pos: [o.pos[0], o.pos[1], hover], yaw: grasp, grip: 0 };
    case 'descend':
      if (!nearXY(ee, o.pos[0], o.pos[1], 3 * XY_TOL)) enter(mem, 'approach');
      else if (Math.abs(ee[2] - o.pos[2]) < Z_TOL) enter(mem, 'close');
      return { pos: [o.pos[0], o.pos[1], o.pos[2]], yaw: grasp, grip: 0 };
    case 'close':
      if (mem.timer > CLOSE_STEPS) enter(mem, held ? 'lift' : 'recover');
      return { pos: [ee[0], ee[1], ee[2]], yaw: s.eeYaw, grip: 1 };
    case 'lift':
      if (!held) enter(mem, 'recover');
      else if (ee[2] > CARRY_Z - Z_TOL) enter(mem, 'carry');
      return { pos: [ee[0], ee[1], CARRY_Z], yaw: s.eeYaw, grip: 1 };
    case 'carry':
      if (!held) enter(mem, 'recover');
      else if (at(tx, ty, CARRY_Z, placeYaw)) enter(mem, 'lower');
      return { pos: [tx, ty, CARRY_Z], yaw: placeYaw, grip: 1 };
    case 'lower':
      if (!held) enter(mem, 'recover');
      else if (Math.abs(ee[2] - placeZ) < Z_TOL) enter(mem, 'release');
      return { pos: [tx, ty, placeZ], yaw: placeYaw, grip: 1 };
    case 'release':
      if (mem.timer > RELEASE_STEPS) enter(mem, 'retreat');
      return { pos: [ee[0], ee[1], ee[2]], yaw: s.eeYaw, grip: 0 };
    case 'retreat':
      return { pos: [ee[0], ee[1], CARRY_Z], yaw: s.eeYaw, grip: 0 };
    default: // recover
      if (ee[2] > hover - Z_TOL && s.fingers[0] + s.fingers[1] > scene.robot.finger.maxOpening) enter(mem, 'approach');
      return { pos: [ee[0], ee[1], hover], yaw: s.eeYaw, grip: 0 };
  }
}

/** Where the carried object goes: goal xy, TCP height to release at, and tool yaw. */
function placeGoal(scene: Scene, task: TaskInstance, s: TabletopState): [number, number, number, number] {
  const half = scene.objects[task.object].halfExtents[2];
  const { kind, index } = task.target;
  if (kind === 'zone') {
    const z = scene.zones[index];
    return [z.centre[0], z.centre[1], half + 0.003, s.eeYaw];
  }
  if (kind === 'bin') {
    const b = scene.bins[index];
    return [b.centre[0], b.centre[1], b.height + 0.01, s.eeYaw];
  }
  const t = s.objects[index];
  const tq = scene.objects[index];
  // Align with the target cube's faces: its yaw modulo a quarter turn nearest the current yaw.
  const yaw = tq.shape === 'box' ? nearestEquivalent(yawOf(t.quat), Math.PI / 2, s.eeYaw, YAW_LIMIT) : s.eeYaw;
  return [t.pos[0], t.pos[1], t.pos[2] + tq.halfExtents[2] + half + 0.004, yaw];
}
