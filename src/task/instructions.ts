// The family's other instructions for an episode, and which of them a state satisfies (hindsight
// relabelling). Built from train pairs only: a relabel never names a pair reserved for held-out seeds.
import type { Scene } from '../scene/schema.ts';
import { findTask } from './families.ts';
import { resolveTarget, sampleTask, trainPairs, wordsOf } from './sample.ts';
import { unpackState } from './state.ts';
import type { TaskInstance } from './types.ts';
import { scoreTask } from './verify.ts';

/** For every train pair of the family, the episode of `seed` with that pair: the episode's own first
 *  (its own instruction), then the others in the family's pair order, each worded by one of the
 *  family's templates (chosen by seed and pair) with the first words of object and target. */
export function familyTasks(scene: Scene, taskId: string, seed: number): TaskInstance[] {
  const task = findTask(scene, taskId);
  const own = sampleTask(scene, taskId, seed);
  const others = trainPairs(task).flatMap(([objectName, targetName], k) => {
    const object = scene.objects.findIndex((o) => o.name === objectName);
    const target = resolveTarget(scene, targetName);
    if (object === own.object && target.kind === own.target.kind && target.index === own.target.index) return [];
    const instruction = task.templates[(seed + k) % task.templates.length]
      .replaceAll('{object}', scene.objects[object].words[0])
      .replaceAll('{target}', wordsOf(scene, target)[0]);
    return [{ ...own, object, target, instruction }];
  });
  return [own, ...others];
}

/** Relabelling and PMI contrast for one family: instruction texts, and those a recorded row
 *  ([flat state, ...]) satisfies besides the episode's own. */
export function tabletopInstructions(scene: Scene, taskId: string) {
  const cache = new Map<number, TaskInstance[]>();
  const tasksOf = (seed: number) => {
    if (!cache.has(seed)) {
      if (cache.size >= 256) cache.delete(cache.keys().next().value!);
      cache.set(seed, familyTasks(scene, taskId, seed));
    }
    return cache.get(seed)!;
  };
  return {
    family: (seed: number) => tasksOf(seed).map((t) => t.instruction),
    satisfied(seed: number, row: ArrayLike<number>): string[] {
      const state = unpackState(row, scene.objects.length);
      return tasksOf(seed)
        .slice(1)
        .filter((t) => scoreTask(scene, t, state).success)
        .map((t) => t.instruction);
    },
  };
}
