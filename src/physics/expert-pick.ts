import { dcos, dsin } from '../core/dmath.ts';
import type { Scene } from '../scene/schema.ts';
import { distToRect, distXY, supportAlong } from '../task/geometry.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { isHeld, TOL } from '../task/verify.ts';
import {
  label,
  nearestEquivalent,
  nearXY,
  yawClose,
  yawOf,
  Z_TOL,
  XY_TOL,
  YAW_TOL,
  type Goal,
  type Memory,
} from './expert-util.ts';
import { YAW_LIMIT } from './sim.ts';

/** TCP heights (m): hover above the object before descending, carry height. */
const HOVER_ABOVE = 0.08;
const CARRY_Z = 0.13;
/** A grip is firm once the finger gap is within this of the object's width (the fingers press on it). */
const FIRM = 0.0015;
/** Closing this many actions without a grip is a missed grasp (a finger against a wall; rare). */
const CLOSE_LIMIT = 8;
/** A finger gap (sum of both openings) at least this share of the full opening counts as open. */
const OPEN_SHARE = 0.75;
/** An object this close to its place height (m) counts as put down there. */
const PLACED_Z = 0.01;

/** pick_place / stack / put_in_bin, with the phase read from the state at every step:
 *  - held: lift straight up, carry at CARRY_Z, lower over the place, release there (never open elsewhere);
 *  - not held and at its place: retreat upwards;
 *  - TCP at the object with the gripper not closed past it: close;
 *  - gripper not open (a missed grasp, a drop, a half-closed gripper anywhere): open and rise first;
 *  - else approach above the object (rising first when low), descend onto it.
 *  Close and release are read from the finger gap: a held object is lifted once the fingers press on
 *  it, a placed one is left once they are open. Memory only keeps a missed grasp rising until open, the
 *  yaw of a missed grasp so the next one takes the other pair of faces (a finger may have met a wall),
 *  and gives up a close that never grips. */
export function pickGoal(scene: Scene, s: TabletopState, task: TaskInstance, mem: Memory): Goal {
  const obj = scene.objects[task.object];
  const o = s.objects[task.object];
  const held = isHeld(obj, o, s);
  const ee = s.eePos;
  const gap = s.fingers[0] + s.fingers[1];
  const stay = (phase: string, grip: number): Goal => {
    label(mem, phase);
    return { pos: [ee[0], ee[1], ee[2]], yaw: s.eeYaw, grip };
  };
  const [gx, gy, placeZ] = placeGoal(scene, task, s);
  // Keep the grasp offset: bring the object (not the TCP) over the goal.
  const tx = gx + ee[0] - o.pos[0],
    ty = gy + ee[1] - o.pos[1];
  const atPlace = nearXY(ee, tx, ty, 3 * XY_TOL) && Math.abs(ee[2] - placeZ) < Z_TOL;
  const width = 2 * supportAlong(obj, o.quat, [dcos(s.eeYaw), dsin(s.eeYaw), 0]);
  const open = gap > OPEN_SHARE * 2 * scene.robot.finger.maxOpening;

  if (held) {
    if (atPlace) return stay('release', 0);
    if (gap > width + FIRM) return stay('close', 1);
    const lowering =
      (nearXY(ee, tx, ty) && ee[2] < CARRY_Z + Z_TOL) || (nearXY(ee, tx, ty, 3 * XY_TOL) && ee[2] < CARRY_Z - Z_TOL);
    if (lowering) {
      label(mem, 'lower');
      return { pos: [tx, ty, placeZ], yaw: s.eeYaw, grip: 1 };
    }
    if (ee[2] < CARRY_Z - Z_TOL) {
      label(mem, 'lift');
      return { pos: [ee[0], ee[1], CARRY_Z], yaw: s.eeYaw, grip: 1 };
    }
    label(mem, 'carry');
    return { pos: [tx, ty, CARRY_Z], yaw: s.eeYaw, grip: 1 };
  }

  // Let go at the place: the fingers open there before the tool rises.
  if (!open && distXY(o.pos, [gx, gy]) < 0.02 && Math.abs(ee[2] - placeZ) < 2 * Z_TOL) return stay('release', 0);
  if (placedAt(scene, task, s)) {
    label(mem, 'retreat');
    return { pos: [ee[0], ee[1], Math.max(ee[2], CARRY_Z)], yaw: s.eeYaw, grip: 0 };
  }
  const hover = o.pos[2] + HOVER_ABOVE;
  const rising = mem.phase === 'recover' && !(open && ee[2] > hover - Z_TOL);
  // The face pair nearest the tool's yaw; after a failed grasp, the pair a quarter turn from that one.
  const m = mem.missedYaw;
  const near = m === null ? s.eeYaw : m > 0 ? m - Math.PI / 2 : m + Math.PI / 2;
  const grasp = obj.shape === 'box' ? nearestEquivalent(yawOf(o.quat), Math.PI / 2, near, YAW_LIMIT) : s.eeYaw;
  const atObject =
    nearXY(ee, o.pos[0], o.pos[1], 3 * XY_TOL) &&
    Math.abs(ee[2] - o.pos[2]) < Z_TOL &&
    yawClose(grasp, s.eeYaw, 2 * YAW_TOL);
  if (!rising && atObject) {
    // Closed past the object's width, or no grip after a while (a finger against a wall): missed.
    if (gap > width - TOL.holdGap && !(mem.phase === 'close' && mem.timer >= CLOSE_LIMIT)) return stay('close', 1);
    mem.missedYaw = s.eeYaw;
  }
  if (rising || !open || atObject) {
    label(mem, 'recover');
    return { pos: [ee[0], ee[1], Math.max(ee[2], hover)], yaw: s.eeYaw, grip: 0 };
  }
  const descending =
    (nearXY(ee, o.pos[0], o.pos[1]) && ee[2] < hover + Z_TOL && yawClose(grasp, s.eeYaw)) ||
    (nearXY(ee, o.pos[0], o.pos[1], 3 * XY_TOL) && ee[2] < hover - Z_TOL && yawClose(grasp, s.eeYaw, 2 * YAW_TOL));
  if (descending) {
    label(mem, 'descend');
    return { pos: [o.pos[0], o.pos[1], o.pos[2]], yaw: grasp, grip: 0 };
  }
  label(mem, 'approach');
  // Low and off to the side: straight up first, so the fingers do not sweep the object on the way.
  if (ee[2] < hover - Z_TOL && !nearXY(ee, o.pos[0], o.pos[1], 3 * XY_TOL))
    return { pos: [ee[0], ee[1], hover], yaw: grasp, grip: 0 };
  return { pos: [o.pos[0], o.pos[1], hover], yaw: grasp, grip: 0 };
}

/** Where the carried object goes: goal xy and the TCP height to release at. The held object keeps its
 *  yaw: success asks none, and a cube rests on a cube at any relative yaw. */
function placeGoal(scene: Scene, task: TaskInstance, s: TabletopState): [number, number, number] {
  const half = scene.objects[task.object].halfExtents[2];
  const { kind, index } = task.target;
  if (kind === 'zone') {
    const z = scene.zones[index];
    return [z.centre[0], z.centre[1], half + 0.003];
  }
  if (kind === 'bin') {
    const b = scene.bins[index];
    return [b.centre[0], b.centre[1], b.height + 0.01];
  }
  const t = s.objects[index];
  return [t.pos[0], t.pos[1], t.pos[2] + scene.objects[index].halfExtents[2] + half + 0.004];
}

/** The (not held) object is down on its target (on the zone, inside the bin, on the target cube): leave it. */
function placedAt(scene: Scene, task: TaskInstance, s: TabletopState): boolean {
  const o = s.objects[task.object].pos;
  const half = scene.objects[task.object].halfExtents[2];
  const { kind, index } = task.target;
  if (kind === 'zone')
    return (
      distToRect(o[0], o[1], scene.zones[index].centre, scene.zones[index].halfSize) === 0 && o[2] < half + PLACED_Z
    );
  if (kind === 'bin') {
    const b = scene.bins[index];
    return distToRect(o[0], o[1], b.centre, b.halfSize) === 0 && o[2] <= b.height;
  }
  const t = s.objects[index];
  const th = scene.objects[index].halfExtents;
  return (
    distXY(o, t.pos) <= TOL.stackXYFrac * 2 * Math.min(th[0], th[1]) &&
    Math.abs(o[2] - (t.pos[2] + th[2] + half)) < PLACED_Z
  );
}
