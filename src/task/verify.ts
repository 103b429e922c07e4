import { dcos, dsin } from '../core/dmath.ts';
import type { Scene, SceneObject, Vec3 } from '../scene/schema.ts';
import { dist3, distToRect, distXY, restHeight, supportAlong, uprightness } from './geometry.ts';
import type { TabletopState, TaskInstance, TaskScore } from './types.ts';

type Family = TaskInstance['family'];
type ObjState = TabletopState['objects'][number];

/** Verifier tolerances (metres, m/s, cosines). */
export const TOL = {
  /** Held: TCP within this distance of the object centre ... */
  holdDist: 0.025,
  /** ... and the finger gap (sum of both openings) within this of the object's width along the finger axis. */
  holdGap: 0.008,
  /** ee_near_object: TCP within this horizontal distance of the object centre and this height difference. */
  nearXY: 0.06,
  nearZ: 0.04,
  /** Resting: centre height within this of the height it rests at, this upright, this slow. */
  restZ: 0.008,
  uprightCos: 0.95,
  restSpeed: 0.1,
  /** lifted: object centre at least this far above its resting height. */
  liftHeight: 0.03,
  /** push: object moved this much closer to the target / is within this of it. */
  towardTarget: 0.03,
  /** push: an object moved this much closer to the target has been pushed (keeps ee_near_object). */
  pushed: 0.005,
  nearTarget: 0.03,
  /** stack: horizontal offset at most this fraction of the target's width; height within stackZ. */
  stackXYFrac: 0.5,
  stackZ: 0.01,
} as const;

/** The named sub-predicates of each family, in the order an expert achieves them. S = length. */
export const FAMILY_PREDICATES: Record<Family, readonly string[]> = {
  push: ['ee_near_object', 'object_toward_target', 'object_near_target', 'object_in_target', 'object_settled'],
  pick_place: ['ee_near_object', 'grasped', 'lifted', 'above_target', 'placed'],
  stack: ['ee_near_object', 'grasped', 'lifted', 'above_target', 'stacked'],
  put_in_bin: ['ee_near_object', 'grasped', 'lifted', 'above_target', 'in_bin'],
};

interface Ctx {
  scene: Scene;
  task: TaskInstance;
  state: TabletopState;
  obj: SceneObject;
  o: ObjState;
  held: boolean;
}

const speed = (v: Vec3): number => Math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);

/** TCP between the fingertips near the object centre, fingers closed onto it. Fingers slide along the
 *  tool's local x axis, world direction (cos eeYaw, sin eeYaw, 0); fingers[i] is the distance from the
 *  TCP to finger i's inner face, so the gap is fingers[0] + fingers[1]. */
export function isHeld(obj: SceneObject, o: ObjState, state: TabletopState): boolean {
  if (dist3(state.eePos, o.pos) > TOL.holdDist) return false;
  return gapError(obj, o, state) <= TOL.holdGap;
}

/** |finger gap - the object's width along the finger axis|. */
function gapError(obj: SceneObject, o: ObjState, state: TabletopState): number {
  const width = 2 * supportAlong(obj, o.quat, [dcos(state.eeYaw), dsin(state.eeYaw), 0]);
  return Math.abs(state.fingers[0] + state.fingers[1] - width);
}

/** Flat on the table (z about its resting height, roughly upright) and nearly still. */
export function isRestingOnTable(obj: SceneObject, o: ObjState): boolean {
  return (
    Math.abs(o.pos[2] - restHeight(obj, o.quat)) <= TOL.restZ &&
    uprightness(obj, o.quat) >= TOL.uprightCos &&
    speed(o.linVel) <= TOL.restSpeed
  );
}

/** Horizontal distance from the object centre to the target (0 inside a zone or bin footprint). */
function targetDist(ctx: Ctx, pos: readonly number[]): number {
  const { kind, index } = ctx.task.target;
  if (kind === 'zone')
    return distToRect(pos[0], pos[1], ctx.scene.zones[index].centre, ctx.scene.zones[index].halfSize);
  if (kind === 'bin') return distToRect(pos[0], pos[1], ctx.scene.bins[index].centre, ctx.scene.bins[index].halfSize);
  return distXY(pos, ctx.state.objects[index].pos);
}

/** How far from the target the object centre may be and still be over it: 0 for a zone or bin
 *  footprint, stackXYFrac of a target cube's width. */
function overTol(ctx: Ctx): number {
  const { kind, index } = ctx.task.target;
  if (kind !== 'object') return 0;
  const t = ctx.scene.objects[index];
  return TOL.stackXYFrac * 2 * Math.min(t.halfExtents[0], t.halfExtents[1]);
}

function overTarget(ctx: Ctx): boolean {
  return targetDist(ctx, ctx.o.pos) <= overTol(ctx);
}

/** The family's final condition: the object left at the target and let go. */
function placedAtTarget(ctx: Ctx): boolean {
  const { scene, task, state, obj, o, held } = ctx;
  if (held) return false;
  const { kind, index } = task.target;
  if (kind === 'zone') return overTarget(ctx) && isRestingOnTable(obj, o);
  if (kind === 'bin') return overTarget(ctx) && o.pos[2] >= 0 && o.pos[2] <= scene.bins[index].height;
  const t = scene.objects[index];
  const ts = state.objects[index];
  const wantZ = ts.pos[2] + restHeight(t, ts.quat) + restHeight(obj, o.quat);
  return (
    overTarget(ctx) &&
    Math.abs(o.pos[2] - wantZ) <= TOL.stackZ &&
    uprightness(obj, o.quat) >= TOL.uprightCos &&
    speed(o.linVel) <= TOL.restSpeed &&
    isRestingOnTable(t, ts)
  );
}

function eeNearObject(ctx: Ctx): boolean {
  const { eePos } = ctx.state;
  return distXY(eePos, ctx.o.pos) <= TOL.nearXY && Math.abs(eePos[2] - ctx.o.pos[2]) <= TOL.nearZ;
}

/** Each stage's own condition in this state, in FAMILY_PREDICATES order. */
export function stageConditions(scene: Scene, task: TaskInstance, state: TabletopState): boolean[] {
  return conditions(context(scene, task, state));
}

function context(scene: Scene, task: TaskInstance, state: TabletopState): Ctx {
  if (state.objects.length !== scene.objects.length)
    throw new RangeError(
      `scoreTask: state has ${state.objects.length} objects, scene "${scene.name}" has ${scene.objects.length}`,
    );
  const obj = scene.objects[task.object];
  const o = state.objects[task.object];
  return { scene, task, state, obj, o, held: isHeld(obj, o, state) };
}

function conditions(ctx: Ctx): boolean[] {
  const { task, obj, o } = ctx;
  const near = eeNearObject(ctx);
  if (task.family === 'push') {
    const d = targetDist(ctx, o.pos);
    const d0 = targetDist(ctx, task.initObjects[task.object].pos);
    // once the object is on its way, backing off to push from another side keeps the first stage
    const started = near || d <= d0 - TOL.pushed;
    return [started, d <= d0 - TOL.towardTarget, d <= TOL.nearTarget, overTarget(ctx), placedAtTarget(ctx)];
  }
  const lifted = ctx.held && o.pos[2] - restHeight(obj, o.quat) >= TOL.liftHeight;
  // over the target whether held or not: a cube let go over its target (falling or settling) keeps
  // what holding it there scored, and one that lands off the target loses it
  return [near, ctx.held, lifted, overTarget(ctx), placedAtTarget(ctx)];
}

/** Score a state. A predicate holds when its own stage or any later stage holds, so Φ rises along
 *  the expert's path and Φ = 1 exactly when the task is solved; success = the last predicate. */
export function scoreTask(scene: Scene, task: TaskInstance, state: TabletopState): TaskScore {
  const names = FAMILY_PREDICATES[task.family];
  const raw = stageConditions(scene, task, state);
  const reached = raw.slice();
  for (let k = reached.length - 2; k >= 0; k--) reached[k] = reached[k] || reached[k + 1];
  const predicates: Record<string, boolean> = {};
  names.forEach((name, k) => (predicates[name] = reached[k]));
  const satisfied = reached.filter(Boolean).length;
  return { success: raw[names.length - 1], progress: satisfied / names.length, predicates };
}

/** The trajectory reward of a final state scored `phi` (Φ, or shapedProgress): 1 on success, Φ/2
 *  below it. It is the success reward plus the potential-based shaping term Φ(s_T) - Φ(s_0) (Ng,
 *  Harada and Russell 1999: such a term leaves the optimal policy unchanged), halved into [0, 1], with
 *  Φ(s_0) dropped as it is the same for every rollout of a group. So finishing (1) pays clearly more
 *  than any failure, holding over the target included (0.4). */
export function taskReward(phi: number): number {
  return phi >= 1 ? 1 : phi / 2;
}

// Shaped progress: Φ plus a continuous closeness to the next stage, so a learned world model's reward
// has more resolution than Φ's n + 1 levels. Physics rewards stay Φ (scoreTask).

/** How far `value` lies past `tol`, in units of `scale` (0 within it). */
const beyond = (value: number, tol: number, scale: number): number => Math.max(0, value - tol) / scale;

/** frac's ceiling: keeps Φ + frac/n below the next level of Φ. */
const FRAC_MAX = 1 - 1e-6;

/** Φ + frac/n: frac ∈ [0, 1) is exp(-excess) of the first stage not reached, its excess a sum of the
 *  quantities its condition tests, each past its tolerance in units of a scale (see stageExcess).
 *  Continuous within a stage, in [Φ, Φ + 1/n), and 1 exactly when the task is solved. */
export function shapedProgress(scene: Scene, task: TaskInstance, state: TabletopState): number {
  const ctx = context(scene, task, state);
  const raw = conditions(ctx);
  const n = raw.length;
  const reached = raw.lastIndexOf(true) + 1; // predicates reached: nΦ
  if (reached === n) return 1;
  const frac = Math.min(FRAC_MAX, Math.exp(-stageExcess(ctx, reached))) || 0; // NaN states: 0
  return (reached + frac) / n;
}

/** How far the state is from stage k's condition: the sum, over the quantities it tests, of how far
 *  each lies past its tolerance. Lengths in units of the table's smaller half size, finger gaps of the
 *  maximum opening, lift and push distances of their thresholds; speeds in m/s, cosines as they are. */
function stageExcess(ctx: Ctx, k: number): number {
  const { scene, task, state, obj, o } = ctx;
  const L = Math.min(scene.table.halfSize[0], scene.table.halfSize[1]);
  const ee = state.eePos;
  const d = targetDist(ctx, o.pos);
  const last = FAMILY_PREDICATES[task.family].length - 1;
  if (k === 0) return beyond(distXY(ee, o.pos), TOL.nearXY, L) + beyond(Math.abs(ee[2] - o.pos[2]), TOL.nearZ, L);
  if (k === last) return placedExcess(ctx, L);
  if (task.family === 'push') {
    if (k === 1)
      return beyond(d, targetDist(ctx, task.initObjects[task.object].pos) - TOL.towardTarget, TOL.towardTarget);
    return k === 2 ? beyond(d, TOL.nearTarget, L) : beyond(d, overTol(ctx), L);
  }
  if (k === 1)
    return (
      beyond(dist3(ee, o.pos), TOL.holdDist, L) +
      beyond(gapError(obj, o, state), TOL.holdGap, scene.robot.finger.maxOpening)
    );
  if (k === 2) return beyond(TOL.liftHeight, o.pos[2] - restHeight(obj, o.quat), TOL.liftHeight);
  return beyond(d, overTol(ctx), L);
}

/** The final stage: over the target, at the height it rests at (or inside the bin), upright, still and let go. */
function placedExcess(ctx: Ctx, L: number): number {
  const { scene, task, state, obj, o } = ctx;
  const { kind, index } = task.target;
  const letGo = Math.min(
    beyond(TOL.holdDist, dist3(state.eePos, o.pos), L),
    beyond(TOL.holdGap, gapError(obj, o, state), TOL.holdGap),
  );
  const xy = beyond(targetDist(ctx, o.pos), overTol(ctx), L);
  if (kind === 'bin') return letGo + xy + beyond(o.pos[2], scene.bins[index].height, L) + beyond(-o.pos[2], 0, L);
  const ts = state.objects[index];
  const z =
    kind === 'zone'
      ? restHeight(obj, o.quat)
      : ts.pos[2] + restHeight(scene.objects[index], ts.quat) + restHeight(obj, o.quat);
  return (
    letGo +
    xy +
    beyond(Math.abs(o.pos[2] - z), kind === 'zone' ? TOL.restZ : TOL.stackZ, L) +
    beyond(TOL.uprightCos, uprightness(obj, o.quat), 1) +
    beyond(speed(o.linVel), TOL.restSpeed, 1)
  );
}

/** An object whose centre is this far below the table top (z = 0) has fallen; a cube pressed into the
 *  table by the fingers sits a few millimetres below its resting height, never this low. */
export const OFF_TABLE_DEPTH = 0.05;

/** Whether an object has left the table: its centre is past the table top's edge (it tips over) or has
 *  fallen below it. Nothing brings it back (physics has no floor), so the episode ends as a failure. */
export function offTable(scene: Scene, state: TabletopState): boolean {
  const [hx, hy] = scene.table.halfSize;
  for (const o of state.objects) {
    const [x, y, z] = o.pos;
    if (!(z >= -OFF_TABLE_DEPTH && Math.abs(x) <= hx && Math.abs(y) <= hy)) return true;
  }
  return false;
}
