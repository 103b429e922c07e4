import type { Scene, TaskFamilyConfig } from '../scene/schema.ts';
import { SPLITS, type Split } from './types.ts';

/** Env ids of the scene's task families, in scene order. */
export function taskIds(scene: Scene): string[] {
  return scene.tasks.map((t) => t.id);
}

export function findTask(scene: Scene, taskId: string): TaskFamilyConfig {
  const task = scene.tasks.find((t) => t.id === taskId);
  if (!task)
    throw new RangeError(`unknown task "${taskId}" in scene "${scene.name}"; valid ids: ${taskIds(scene).join(', ')}`);
  return task;
}

const fmt = ([a, b]: [number, number]) => `[${a}, ${b})`;

/** Which split an init-state seed belongs to; throws for seeds in neither range. */
export function splitOf(scene: Scene, seed: number): Split {
  const found = SPLITS.find((s) => Number.isInteger(seed) && seed >= scene.splits[s][0] && seed < scene.splits[s][1]);
  if (found) return found;
  throw new RangeError(
    `seed ${seed} is in no split of scene "${scene.name}": ` +
      `${SPLITS.map((s) => `${s} ${fmt(scene.splits[s])}`).join(', ')}`,
  );
}

/** How many seeds a split holds (its episode indices are 0 .. size − 1). */
export function splitSize(scene: Scene, split: Split): number {
  const range = scene.splits[split];
  if (!range) throw new RangeError(`unknown split "${split}"; valid splits: ${SPLITS.join(', ')}`);
  return range[1] - range[0];
}

/** The seed of episode `index` (0, 1, 2, ...) of a split: start + index, inside [start, end). */
export function splitSeed(scene: Scene, split: Split, index: number): number {
  const range = scene.splits[split];
  if (!range) throw new RangeError(`unknown split "${split}"; valid splits: ${SPLITS.join(', ')}`);
  const [start, end] = range;
  if (!Number.isInteger(index) || index < 0 || index >= end - start)
    throw new RangeError(`episode index ${index} is outside the ${split} split ${fmt(range)} (${end - start} seeds)`);
  return start + index;
}
