import { hashOf } from '../core/hash.ts';
import { Rng } from '../core/rng.ts';
import type { Scene, TaskFamilyConfig, Vec3 } from '../scene/schema.ts';
import { findTask, splitOf } from './families.ts';
import type { Split } from './types.ts';
import { binOuterHalf, distToRect, distXY, footprintRadius } from './geometry.ts';
import type { TargetKind, TaskInstance } from './types.ts';
import { TOL } from './verify.ts';

/** One Rng stream per (task id, purpose): changing how one part samples leaves the others unchanged,
 *  and one seed gives unrelated episodes in different families. */
type Purpose = 'pair' | 'instruction' | 'layout' | 'ee';
const rngFor = (taskId: string, purpose: Purpose, seed: number) =>
  new Rng(seed, parseInt(hashOf(`${taskId}/${purpose}`).slice(8), 16));

/** Nominal initial TCP (above the table, in front of the robot) before eeJitter. */
export const EE_START: Vec3 = [0, -0.12, 0.15];
/** A push/pick-place object starts at least this far (horizontally) from its target zone, so the
 *  push predicates object_near_target and object_toward_target both start false. */
export const START_CLEARANCE = TOL.nearTarget + TOL.towardTarget;
/** Extra gap between an object's footprint and any zone or bin at the start. */
const STATIC_MARGIN = 0.005;
const TRIES_PER_OBJECT = 200;
const LAYOUT_RESTARTS = 50;

type Pair = [string, string];
const pairKey = ([o, t]: Pair) => `${o}\u0000${t}`;

/** Every (object, target) pair of a family; an object is never its own target. */
export function familyPairs(task: TaskFamilyConfig): Pair[] {
  return task.objects.flatMap((o) => task.targets.filter((t) => t !== o).map((t): Pair => [o, t]));
}

/** The pairs train seeds can get: every pair but the family's reserved (held-out) ones. */
export function trainPairs(task: TaskFamilyConfig): Pair[] {
  const reserved = new Set(task.heldoutPairs.map(pairKey));
  return familyPairs(task).filter((p) => !reserved.has(pairKey(p)));
}

/** Train seeds never get a reserved (held-out) pair; validation and held-out seeds (the same
 *  distribution, disjoint seeds) get one half the time, else any pair. */
function samplePair(task: TaskFamilyConfig, split: Split, rng: Rng): Pair {
  const pairs = familyPairs(task);
  const reserved = new Set(task.heldoutPairs.map(pairKey));
  if (split === 'train') {
    const pool = trainPairs(task);
    if (pool.length === 0)
      throw new RangeError(`task "${task.id}": every (object, target) pair is reserved for held-out`);
    return rng.pick(pool);
  }
  const heldout = pairs.filter((p) => reserved.has(pairKey(p)));
  const useReserved = rng.uniform() < 0.5;
  return useReserved && heldout.length > 0 ? rng.pick(heldout) : rng.pick(pairs);
}

export function resolveTarget(scene: Scene, name: string): { kind: TargetKind; index: number } {
  const lists: [TargetKind, { name: string }[]][] = [
    ['zone', scene.zones],
    ['bin', scene.bins],
    ['object', scene.objects],
  ];
  for (const [kind, list] of lists) {
    const index = list.findIndex((x) => x.name === name);
    if (index >= 0) return { kind, index };
  }
  throw new RangeError(`scene "${scene.name}" has no zone, bin or object named "${name}"`);
}

export function wordsOf(scene: Scene, target: { kind: TargetKind; index: number }): string[] {
  if (target.kind === 'zone') return scene.zones[target.index].words;
  if (target.kind === 'bin') return scene.bins[target.index].words;
  return scene.objects[target.index].words;
}

/** May object i start at (x, y)? Clear of zones, bins, earlier objects and (for the manipulated
 *  object) its target zone by START_CLEARANCE. */
function placeable(scene: Scene, i: number, x: number, y: number, placed: Map<number, Vec3>, clearOf: number): boolean {
  const r = footprintRadius(scene.objects[i]);
  for (const z of scene.zones) if (distToRect(x, y, z.centre, z.halfSize) < r + STATIC_MARGIN) return false;
  for (const b of scene.bins) if (distToRect(x, y, b.centre, binOuterHalf(b)) < r + STATIC_MARGIN) return false;
  if (clearOf >= 0 && distToRect(x, y, scene.zones[clearOf].centre, scene.zones[clearOf].halfSize) < START_CLEARANCE)
    return false;
  for (const [j, p] of placed) {
    const minDist = Math.max(scene.randomization.minSeparation, r + footprintRadius(scene.objects[j]));
    if (distXY([x, y], p) < minDist) return false;
  }
  return true;
}

/** Non-overlapping initial positions and yaws for every scene object (manipulated object first). */
function sampleLayout(scene: Scene, object: number, clearOf: number, rng: Rng): TaskInstance['initObjects'] {
  const { objectX, objectY, objectYaw } = scene.randomization;
  const order = [object, ...scene.objects.map((_, i) => i).filter((i) => i !== object)];
  for (let restart = 0; restart < LAYOUT_RESTARTS; restart++) {
    const placed = new Map<number, Vec3>();
    for (const i of order) {
      for (let t = 0; t < TRIES_PER_OBJECT && !placed.has(i); t++) {
        const x = rng.range(objectX[0], objectX[1]);
        const y = rng.range(objectY[0], objectY[1]);
        if (placeable(scene, i, x, y, placed, i === object ? clearOf : -1))
          placed.set(i, [x, y, scene.objects[i].halfExtents[2]]);
      }
      if (!placed.has(i)) break;
    }
    if (placed.size === scene.objects.length)
      return scene.objects.map((_, i) => ({ pos: placed.get(i)!, yaw: rng.range(objectYaw[0], objectYaw[1]) }));
  }
  throw new RangeError(
    `scene "${scene.name}": cannot place ${scene.objects.length} objects in randomization.objectX/objectY with ` +
      `minSeparation ${scene.randomization.minSeparation} clear of zones and bins`,
  );
}

function sampleEe(scene: Scene, rng: Rng): Vec3 {
  const { min, max } = scene.robot.workspace;
  const j = scene.randomization.eeJitter;
  return EE_START.map((v, k) => Math.min(max[k], Math.max(min[k], v + rng.range(-j, j)))) as Vec3;
}

/** The episode of `taskId` for an init-state seed: deterministic in (scene, taskId, seed). */
export function sampleTask(scene: Scene, taskId: string, seed: number): TaskInstance {
  const task = findTask(scene, taskId);
  const split = splitOf(scene, seed);
  const [objectName, targetName] = samplePair(task, split, rngFor(taskId, 'pair', seed));
  const object = scene.objects.findIndex((o) => o.name === objectName);
  const target = resolveTarget(scene, targetName);

  const text = rngFor(taskId, 'instruction', seed);
  const instruction = text
    .pick(task.templates)
    .replaceAll('{object}', text.pick(scene.objects[object].words))
    .replaceAll('{target}', text.pick(wordsOf(scene, target)));

  const clearOf = target.kind === 'zone' ? target.index : -1;
  const initObjects = sampleLayout(scene, object, clearOf, rngFor(taskId, 'layout', seed));
  const initEe = sampleEe(scene, rngFor(taskId, 'ee', seed));
  return { family: task.family, taskId, seed, split, object, target, instruction, initObjects, initEe };
}

/** Does the episode use one of its family's reserved (held-out only) object-target pairs? */
export function usesReservedPair(scene: Scene, t: TaskInstance): boolean {
  const lists = { zone: scene.zones, bin: scene.bins, object: scene.objects };
  const pair: Pair = [scene.objects[t.object].name, lists[t.target.kind][t.target.index].name];
  return findTask(scene, t.taskId).heldoutPairs.some((p) => pairKey(p as Pair) === pairKey(pair));
}
