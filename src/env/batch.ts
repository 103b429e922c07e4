// Shared by batched envs that keep per-env buffers (physics, world model): the observation copy every
// reset/step returns, and the index check behind per-env accessors.
import type { BatchObs } from './types.ts';

/** Throws unless env i exists and has been reset (has a task). */
export function assertResetEnv(envId: string, numEnvs: number, i: number, task: unknown): void {
  if (!Number.isInteger(i) || i < 0 || i >= numEnvs) throw new RangeError(`env index ${i} is outside [0, ${numEnvs})`);
  if (!task) throw new Error(`${envId}: env ${i} has not been reset`);
}

/** Every env's instruction ('' before its first reset). */
export function instructionsOf(tasks: readonly ({ instruction: string } | null)[]): string[] {
  return tasks.map((t) => t?.instruction ?? '');
}

/** A fresh observation batch: copies of the image buffers (key -> buffer) and of proprio, plus the
 *  instructions, so callers may keep what a step returned. */
export function copyBatchObs(
  images: readonly (readonly [string, Uint8Array])[],
  proprio: Float32Array,
  tasks: readonly ({ instruction: string } | null)[],
): BatchObs {
  const obs: BatchObs = {};
  for (const [key, buf] of images) obs[key] = buf.slice();
  obs.proprio = proprio.slice();
  obs.instruction = instructionsOf(tasks);
  return obs;
}
