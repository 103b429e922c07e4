import type { Scene, TaskFamilyConfig } from '../scene/schema.ts';
import type { TaskInstance } from './types.ts';

export type Split = TaskInstance['split'];

/** Env ids of the scene's task families, in scene order. */
export function taskIds(scene: Scene): string[] {
  return scene.tasks.map((t) => t.id);
}

export function findTask(scene: Scene, taskId: string): TaskFamilyConfig {
  const task = scene.tasks.find((t) => t.id === taskId);
  if (!task) throw new RangeError(`unknown task "${taskId}" in scene "${scene.name}"; valid ids: ${taskIds(scene).join(', ')}`);
  return task;
}

const fmt = ([a, b]: [number, number]) => `[${a}, ${b})`;

/** Which split an init-state seed belongs to; throws for seeds in neither range. */
export function splitOf(scene: Scene, seed: number): Split {
  const { train, heldout } = scene.splits;
  if (Number.isInteger(seed)) {
    if (seed >= train[0] && seed < train[1]) return 'train';
    if (seed >= heldout[0] && seed < heldout[1]) return 'heldout';
  }
  throw new RangeError(`seed ${seed} is in neither split of scene "${scene.name}": train ${fmt(train)}, heldout ${fmt(heldout)}`);
}

/** The seed of episode `index` (0, 1, 2, ...) of a split: start + index, inside [start, end). */
export function splitSeed(scene: Scene, split: Split, index: number): number {
  const range = scene.splits[split];
  if (!range) throw new RangeError(`unknown split "${split}"; valid splits: train, heldout`);
  const [start, end] = range;
  if (!Number.isInteger(index) || index < 0 || index >= end - start)
    throw new RangeError(`episode index ${index} is outside the ${split} split ${fmt(range)} (${end - start} seeds)`);
  return start + index;
}
