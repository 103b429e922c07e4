// Shared by batched envs that keep per-env buffers (physics, world model): the observation copy every
// reset/step returns, and the index check behind per-env accessors.
import type { BatchObs } from './types.ts';

/** Whether env i is in a reset's or a step's mask (no mask: every env is). */
export function inMask(mask: ArrayLike<boolean | number> | undefined, i: number): boolean {
  return !mask || Boolean(mask[i]);
}

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

/** Throws unless slots are distinct env indices, one per start, each start with an integer seed and
 *  `elapsed` in [0, maxSteps) (resetFrom's arguments). */
export function assertStarts(
  numEnvs: number,
  maxSteps: number,
  slots: readonly number[],
  starts: readonly { seed: number; elapsed: number }[],
): void {
  if (slots.length !== starts.length)
    throw new RangeError(`resetFrom: ${starts.length} starts for ${slots.length} slots`);
  const seen = new Set<number>();
  slots.forEach((i, j) => {
    if (!Number.isInteger(i) || i < 0 || i >= numEnvs || seen.has(i))
      throw new RangeError(`resetFrom: slots[${j}] = ${i} is not a distinct env index in [0, ${numEnvs})`);
    seen.add(i);
    const { seed, elapsed } = starts[j];
    if (!Number.isInteger(seed)) throw new RangeError(`resetFrom: starts[${j}].seed must be an integer, got ${seed}`);
    if (!Number.isInteger(elapsed) || elapsed < 0 || elapsed >= maxSteps)
      throw new RangeError(`resetFrom: starts[${j}].elapsed must be an integer in [0, ${maxSteps}), got ${elapsed}`);
  });
}

/** The rows `rows` of a batch of n observations, in that order (a smaller batch of fresh arrays). */
export function selectRows(obs: BatchObs, rows: readonly number[], n: number): BatchObs {
  const out: BatchObs = {};
  for (const [key, v] of Object.entries(obs)) {
    if (Array.isArray(v)) {
      out[key] = rows.map((i) => v[i]);
      continue;
    }
    const size = v.length / n;
    const part = v.slice(0, rows.length * size);
    rows.forEach((i, r) => part.set(v.subarray(i * size, (i + 1) * size), r * size));
    out[key] = part;
  }
  return out;
}
