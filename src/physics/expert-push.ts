import { datan2, dcos, dsin, wrapAngle } from '../core/dmath.ts';
import type { Scene } from '../scene/schema.ts';
import { binOuterHalf, distToRect, distXY, footprintRadius } from '../task/geometry.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { isHeld } from '../task/verify.ts';
import {
  label,
  nearestEquivalent,
  nearXY,
  yawClose,
  yawOf,
  XY_TOL,
  Z_TOL,
  type Goal,
  type Memory,
} from './expert-util.ts';
import { YAW_LIMIT } from './sim.ts';

const PUSH_Z = 0.02;
const HOVER_Z = 0.07;
/** Gap between pusher and object before contact. */
const GAP = 0.006;
/** Re-plan when the object turned this much since the plan, or slid this far sideways off the pusher. */
const TURN_LIMIT = 0.2;
const SLIP = 0.012;
/** A push step that moves the object less than this, STALL_STEPS times in a row, means it is stuck. */
const STALL_MOVE = 0.0015;
const STALL_STEPS = 4;
/** Legs shorter than this are skipped; pushes must pass bins with this much room beside the footprint. */
const MIN_LEG = 0.008;
/** How far a pushed object coasts after the pusher stops (m): legs end this much early. */
const COAST = 0.004;
const BIN_CLEARANCE = 0.015;

/** One straight push along a face normal of the object (unit `dir`) for `dist` metres. */
export interface Leg {
  dir: [number, number];
  dist: number;
}
/** The current legs, and the object's yaw and position when they were planned. */
export interface PushPlan {
  legs: Leg[];
  yaw: number;
  start: [number, number] | null;
}

/** push: the closed fingers form a flat pusher (palm x axis across the push) held flush against one
 *  face of the object and pushed along that face's normal, which translates a box without turning it.
 *  The way to the zone centre is split into legs along the object's face normals (an L or a zig-zag,
 *  chosen to keep clear of bins and to keep the pusher inside the workspace). Only the first leg is
 *  driven. The plan is made from where the object is at every step, except while the pusher drives a
 *  leg: then it is kept until the object turns, goes back or reaches the leg's end. The phase is read
 *  from the state: pusher low behind the object and on its line: push; over the point behind it:
 *  descend; else approach at hover height, rising straight up first when low (so it never sweeps the
 *  object back at table height; open fingers around the object stay open; a held object is let go
 *  first). Memory only
 *  keeps a stalled push backing off to hover height, and the point to retreat to once the object is in
 *  the zone. */
export function pushGoal(scene: Scene, s: TabletopState, task: TaskInstance, mem: Memory, plan: PushPlan): Goal {
  const obj = scene.objects[task.object];
  const o = s.objects[task.object];
  const zone = scene.zones[task.target.index];
  const ee = s.eePos;
  const objYaw = yawOf(o.quat);
  // Held in the fingers (a grasp is no push): let go where it is first.
  if (isHeld(obj, o, s)) {
    label(mem, 'release');
    return { pos: [ee[0], ee[1], ee[2]], yaw: s.eeYaw, grip: 0 };
  }
  const inside = distToRect(o.pos[0], o.pos[1], zone.centre, [zone.halfSize[0] / 2, zone.halfSize[1] / 2]) === 0;
  if (inside)
    return retreat(mem, s, mem.phase === 'push' && plan.legs[0] ? faceNormal(plan.legs[0].dir, objYaw) : [0, 0]);
  // Planned afresh at every step but during a push (the plan is a function of the object's pose).
  if (mem.phase !== 'push' || !fits(plan, o.pos, objYaw)) replan(scene, task, s, plan);
  const leg = plan.legs[0];
  if (!leg) return retreat(mem, s, [0, 0]);
  const [px, py] = faceNormal(leg.dir, objYaw);
  const reach = supportAlong2(obj.halfExtents, objYaw, px, py) + scene.robot.finger.halfExtents[1];
  const bx = o.pos[0] - px * (reach + GAP),
    by = o.pos[1] - py * (reach + GAP);
  const yaw = nearestEquivalent(datan2(py, px) + Math.PI / 2, Math.PI, s.eeYaw, YAW_LIMIT);
  const aligned = yawClose(yaw, s.eeYaw, 0.08);
  // A stalled push backs off straight up to hover height before it descends again.
  if (mem.phase === 'backoff' && ee[2] < HOVER_Z - Z_TOL) return backoff(mem, s);
  const along = (ee[0] - bx) * px + (ee[1] - by) * py;
  const lateral = Math.abs((ee[0] - bx) * -py + (ee[1] - by) * px);
  if (ee[2] < PUSH_Z + Z_TOL && along > -3 * XY_TOL && along < GAP + 3 * XY_TOL && lateral < SLIP && aligned) {
    const mx = o.pos[0] - mem.lastObj[0],
      my = o.pos[1] - mem.lastObj[1];
    mem.stalled = mem.phase !== 'push' ? 0 : Math.sqrt(mx * mx + my * my) < STALL_MOVE ? mem.stalled + 1 : 0;
    mem.lastObj = [o.pos[0], o.pos[1], o.pos[2]];
    if (mem.stalled >= STALL_STEPS) return backoff(mem, s);
    label(mem, 'push');
    const start = plan.start!;
    const remaining = leg.dist - ((o.pos[0] - start[0]) * leg.dir[0] + (o.pos[1] - start[1]) * leg.dir[1]);
    // Ask for a full step along the face normal (fine direction resolution at the largest token) and
    // let the lateral error to the line through the object's centre correct itself every step.
    // Ease off near the end of a leg: the object slides on for a few millimetres after contact ends.
    const advance = GAP + Math.min(Math.max(remaining - COAST, 0), scene.control.maxTranslation);
    return { pos: [bx + px * advance, by + py * advance, PUSH_Z], yaw, grip: 1 };
  }
  if (
    aligned &&
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

/** Whether the pushed object is still on its plan: not turned since, and between the first leg's start
 *  (not pushed back) and its end. Sideways drift is left to the next leg, slip off the pusher to the caller. */
function fits(plan: PushPlan, pos: readonly number[], yaw: number): boolean {
  const leg = plan.legs[0];
  if (!plan.start || !leg || Math.abs(wrapAngle(yaw - plan.yaw)) > TURN_LIMIT) return false;
  const done = (pos[0] - plan.start[0]) * leg.dir[0] + (pos[1] - plan.start[1]) * leg.dir[1];
  return done >= -SLIP && done < leg.dist - COAST;
}

function backoff(mem: Memory, s: TabletopState): Goal {
  label(mem, 'backoff');
  return { pos: [s.eePos[0], s.eePos[1], HOVER_Z], yaw: s.eeYaw, grip: 1 };
}

/** Rise to hover height, backing off 3 cm from a push along (px, py); the point is kept while rising. */
function retreat(mem: Memory, s: TabletopState, [px, py]: readonly number[]): Goal {
  const ee = s.eePos;
  if (mem.phase !== 'retreat' || !mem.hold || !nearXY(ee, mem.hold[0], mem.hold[1], 0.05))
    mem.hold = [ee[0] - px * 0.03, ee[1] - py * 0.03, HOVER_Z];
  label(mem, 'retreat');
  return { pos: mem.hold, yaw: s.eeYaw, grip: 1 };
}

/** The object's face normal nearest to `dir` (the box's +-x or +-y axis at yaw `objYaw`). */
function faceNormal(dir: readonly number[], objYaw: number): [number, number] {
  const c = dcos(objYaw),
    s = dsin(objYaw);
  const a = dir[0] * c + dir[1] * s;
  const b = -dir[0] * s + dir[1] * c;
  if (Math.abs(a) >= Math.abs(b)) return a >= 0 ? [c, s] : [-c, -s];
  return b >= 0 ? [-s, c] : [s, -c];
}

/** Half extent of an upright box (yaw only) along the horizontal unit direction (px, py). */
function supportAlong2(half: readonly number[], yaw: number, px: number, py: number): number {
  const c = dcos(yaw),
    s = dsin(yaw);
  return Math.abs(px * c + py * s) * half[0] + Math.abs(-px * s + py * c) * half[1];
}

/** Plans the legs from the object's current pose to the zone centre and restarts at the first leg. */
function replan(scene: Scene, task: TaskInstance, s: TabletopState, plan: PushPlan): void {
  const o = s.objects[task.object];
  const zone = scene.zones[task.target.index];
  const yaw = yawOf(o.quat);
  const c = dcos(yaw),
    sn = dsin(yaw);
  const dx = zone.centre[0] - o.pos[0],
    dy = zone.centre[1] - o.pos[1];
  const a = dx * c + dy * sn,
    b = -dx * sn + dy * c;
  const legA: Leg = { dir: a >= 0 ? [c, sn] : [-c, -sn], dist: Math.abs(a) };
  const legB: Leg = { dir: b >= 0 ? [-sn, c] : [sn, -c], dist: Math.abs(b) };
  const [long, short] = legA.dist >= legB.dist ? [legA, legB] : [legB, legA];
  const half = (l: Leg): Leg => ({ dir: l.dir, dist: l.dist / 2 });
  // Candidate paths, simplest first; a zig-zag keeps the corners nearer the middle of the table.
  const candidates = [
    [long, short],
    [short, long],
    [half(long), short, half(long)],
    [half(short), long, half(short)],
  ];
  const room = footprintRadius(scene.objects[task.object]) + BIN_CLEARANCE;
  const back = footprintRadius(scene.objects[task.object]) + 2 * scene.robot.finger.halfExtents[1] + GAP;
  // Room to spare: the object's path clear of bins, the pusher behind it inside the workspace.
  const score = (legs: Leg[]) =>
    Math.min(
      pathClearance(scene, o.pos[0], o.pos[1], legs) - room,
      pusherMargin(scene, o.pos[0], o.pos[1], legs, back),
    );
  const best =
    candidates.find((legs) => score(legs) >= 0) ?? candidates.reduce((p, q) => (score(q) > score(p) ? q : p));
  plan.legs = best.filter((l) => l.dist >= MIN_LEG);
  plan.yaw = yaw;
  plan.start = [o.pos[0], o.pos[1]];
}

/** How far inside the workspace (xy) the pusher stays at the start and end of every leg (negative: out). */
function pusherMargin(scene: Scene, x: number, y: number, legs: Leg[], back: number): number {
  const { min, max } = scene.robot.workspace;
  let worst = Infinity;
  for (const leg of legs) {
    for (const t of [0, leg.dist]) {
      const px = x + leg.dir[0] * (t - back),
        py = y + leg.dir[1] * (t - back);
      worst = Math.min(worst, px - min[0], max[0] - px, py - min[1], max[1] - py);
    }
    x += leg.dir[0] * leg.dist;
    y += leg.dir[1] * leg.dist;
  }
  return worst;
}

/** Smallest distance from the object's path (legs from (x, y)) to any bin's outer rectangle. */
function pathClearance(scene: Scene, x: number, y: number, legs: Leg[]): number {
  let best = Infinity;
  for (const leg of legs) {
    for (let k = 0; k <= 32; k++) {
      const t = (leg.dist * k) / 32;
      for (const bin of scene.bins)
        best = Math.min(best, distToRect(x + leg.dir[0] * t, y + leg.dir[1] * t, bin.centre, binOuterHalf(bin)));
    }
    x += leg.dir[0] * leg.dist;
    y += leg.dir[1] * leg.dist;
  }
  return best;
}
