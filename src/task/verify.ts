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
  const width = 2 * supportAlong(obj, o.quat, [dcos(state.eeYaw), dsin(state.eeYaw), 0]);
  return Math.abs(state.fingers[0] + state.fingers[1] - width) <= TOL.holdGap;
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

/** Object centre over the target: inside a zone or bin footprint, or within stackXYFrac of a target cube's width. */
function overTarget(ctx: Ctx): boolean {
  const { kind, index } = ctx.task.target;
  if (kind !== 'object') return targetDist(ctx, ctx.o.pos) === 0;
  const t = ctx.scene.objects[index];
  return targetDist(ctx, ctx.o.pos) <= TOL.stackXYFrac * 2 * Math.min(t.halfExtents[0], t.halfExtents[1]);
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
  if (state.objects.length !== scene.objects.length)
    throw new RangeError(
      `scoreTask: state has ${state.objects.length} objects, scene "${scene.name}" has ${scene.objects.length}`,
    );
  const obj = scene.objects[task.object];
  const o = state.objects[task.object];
  const ctx: Ctx = { scene, task, state, obj, o, held: isHeld(obj, o, state) };
  const near = eeNearObject(ctx);
  if (task.family === 'push') {
    const d = targetDist(ctx, o.pos);
    const d0 = targetDist(ctx, task.initObjects[task.object].pos);
    return [near, d <= d0 - TOL.towardTarget, d <= TOL.nearTarget, overTarget(ctx), placedAtTarget(ctx)];
  }
  const lifted = ctx.held && o.pos[2] - restHeight(obj, o.quat) >= TOL.liftHeight;
  return [near, ctx.held, lifted, ctx.held && overTarget(ctx), placedAtTarget(ctx)];
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
