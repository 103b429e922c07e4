// Shared benchmark helpers: one JSON object per line, median-of-batches timing, a stepping loop.
import { Rng } from '../src/core/rng.ts';
import { randomAction } from '../src/env/index.ts';
import type { BatchAction, Env } from '../src/env/types.ts';

export const emit = (o: Record<string, unknown>): void => console.log(JSON.stringify(o));
export const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

/** ms per call of fn: one warm-up batch, then the median of >= 5 batches spanning at least minMs. */
export async function timeAsync(fn: () => unknown, perBatch: number, minMs: number): Promise<number> {
  for (let i = 0; i < perBatch; i++) await fn();
  const batches: number[] = [];
  const until = performance.now() + minMs;
  while (batches.length < 5 || performance.now() < until) {
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) await fn();
    batches.push((performance.now() - t0) / perBatch);
  }
  return batches.sort((a, b) => a - b)[Math.floor(batches.length / 2)];
}

/** ms per call of a and of b, timed in alternating batches so machine load hits both alike
 *  (for ratios measured side by side). Medians over >= 5 batch pairs spanning at least minMs. */
export async function timePair(
  a: () => unknown,
  b: () => unknown,
  perBatch: number,
  minMs: number,
): Promise<[number, number]> {
  const batch = async (fn: () => unknown) => {
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) await fn();
    return (performance.now() - t0) / perBatch;
  };
  await batch(a);
  await batch(b);
  const ta: number[] = [];
  const tb: number[] = [];
  const until = performance.now() + minMs;
  while (ta.length < 5 || performance.now() < until) {
    ta.push(await batch(a));
    tb.push(await batch(b));
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return [median(ta), median(tb)];
}

/** A stepping loop with random tokens that resets the envs whose episode ended (as training does). */
export function stepper(env: Env, seed: number): () => Promise<void> {
  const rng = new Rng(seed);
  const actions: BatchAction[] = Array.from({ length: 64 }, () => randomAction(env.spec, env.numEnvs, rng));
  let t = 0;
  let nextSeed = 1000;
  return async () => {
    const r = await env.step(actions[t++ % actions.length]);
    const mask = Array.from({ length: env.numEnvs }, (_, i) => r.terminated[i] === 1 || r.truncated[i] === 1);
    if (mask.some(Boolean)) {
      await env.reset({ seed: nextSeed, mask });
      nextSeed += env.numEnvs;
    }
  };
}
