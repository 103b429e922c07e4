// River's process-level behaviour regularisation: a rollout that keeps issuing the same action tokens
// (or flips between two) while its recorded state does not move is degenerate; its reward loses
// `coef` times the share of its steps spent that way.
import { z } from 'zod';

export const RepeatPenaltySchema = z.object({
  coef: z
    .number()
    .min(0)
    .default(0)
    .describe('reward lost per unit share of degenerate steps (0: off); a step is degenerate at the end of a window'),
  window: z
    .number()
    .int()
    .min(3)
    .default(8)
    .describe('steps of repeated (period 1) or oscillating (period 2) action tokens that count'),
  tolerance: z
    .number()
    .min(0)
    .default(1e-3)
    .describe('largest change of any recorded state value over the window that still counts as not moving'),
});
export type RepeatPenaltyConfig = z.output<typeof RepeatPenaltySchema>;

/** Steps t (from window − 1 on) whose last `window` action rows repeat with period 1 or 2 while the
 *  recorded state after step t equals, within `tolerance`, the state before the window.
 *  actions: length x dims tokens, step-major; states: (length + 1) rows. */
export function degenerateSteps(
  actions: ArrayLike<number>,
  states: ArrayLike<number>,
  length: number,
  c: Pick<RepeatPenaltyConfig, 'window' | 'tolerance'>,
): number {
  if (length === 0) return 0;
  const dims = actions.length / length;
  const width = states.length / (length + 1);
  if (!Number.isInteger(dims) || !Number.isInteger(width))
    throw new RangeError(
      `degenerateSteps: ${actions.length} tokens and ${states.length} state values for ${length} steps`,
    );
  const same = (t: number, u: number) => {
    for (let d = 0; d < dims; d++) if (actions[t * dims + d] !== actions[u * dims + d]) return false;
    return true;
  };
  const still = (from: number, to: number) => {
    for (let k = 0; k < width; k++)
      if (Math.abs(states[to * width + k] - states[from * width + k]) > c.tolerance) return false;
    return true;
  };
  let count = 0;
  for (let t = c.window - 1; t < length; t++) {
    const first = t - c.window + 1;
    let periodic = true;
    for (let u = first + 2; u <= t && periodic; u++) periodic = same(u, u - 2);
    if (periodic && still(first, t + 1)) count++;
  }
  return count;
}

/** The penalty of one rollout (0 when off or without recorded states). */
export function repeatPenalty(
  r: { actions: ArrayLike<number>; states?: ArrayLike<number>; length: number },
  c: RepeatPenaltyConfig,
): number {
  if (c.coef === 0 || !r.states || r.length === 0) return 0;
  return (c.coef * degenerateSteps(r.actions, r.states, r.length, c)) / r.length;
}
