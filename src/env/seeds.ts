import type { ResetOptions } from './types.ts';

/** Seeds after a reset: env i gets seed + i (or seed[i]) where the mask allows; without a seed an
 *  env continues its own sequence (previous seed + numEnvs, or i for a never-reset env). */
export function resolveResetSeeds(previous: Int32Array, options: ResetOptions): Int32Array {
  const n = previous.length;
  const { seed, mask } = options;
  if (mask && mask.length !== n) throw new RangeError(`reset: mask has length ${mask.length}, expected numEnvs = ${n}`);
  if (Array.isArray(seed) && seed.length !== n)
    throw new RangeError(`reset: seed array has length ${seed.length}, expected numEnvs = ${n}`);
  const out = previous.slice();
  for (let i = 0; i < n; i++) {
    if (mask && !mask[i]) continue;
    const s = Array.isArray(seed) ? seed[i] : seed === undefined ? (previous[i] < 0 ? i : previous[i] + n) : seed + i;
    if (!Number.isInteger(s) || s < 0 || s > 0x7fffffff)
      throw new RangeError(`reset: seed for env ${i} must be an integer in [0, 2^31), got ${s}`);
    out[i] = s;
  }
  return out;
}
