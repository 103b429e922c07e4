// The one reach and the one speedup every study reports. Each curve (held-out score at each evaluation,
// against a cost: training seconds, physics steps, executions) is fitted non-decreasing by isotonic
// regression; a curve reaches a target at the first cost from which its fit stays at or above it
// (interpolated between points); real's target is its own fitted final score, and the speedup is real's
// cost to reach it over the run's. Its 95% interval comes from a parametric bootstrap that redraws every
// point's score from the evaluation behind it. Points share their evaluation seeds, so they are not
// independent: the interval treats them as if they were, which widens it.
import { Rng } from '../core/rng.ts';

/** Bootstrap replicates per speedup. */
export const REPLICATES = 1000;
const EXACT_BINOMIAL = 2000;

/** Pool-adjacent-violators: the non-decreasing sequence closest to `y` in squared error. */
export function isotonic(y: readonly number[]): number[] {
  const blocks: { sum: number; n: number }[] = [];
  for (const v of y) {
    blocks.push({ sum: v, n: 1 });
    while (blocks.length > 1 && blocks.at(-2)!.sum / blocks.at(-2)!.n > blocks.at(-1)!.sum / blocks.at(-1)!.n) {
      const last = blocks.pop()!;
      blocks.at(-1)!.sum += last.sum;
      blocks.at(-1)!.n += last.n;
    }
  }
  return blocks.flatMap((b) => Array(b.n).fill(b.sum / b.n));
}

/** The first x at which the piecewise-linear curve through (xs, ys) reaches `target`, or null. */
export function firstReach(xs: readonly number[], ys: readonly number[], target: number): number | null {
  for (let i = 0; i < ys.length; i++) {
    if (ys[i] < target) continue;
    if (i === 0) return xs[0];
    return xs[i - 1] + ((xs[i] - xs[i - 1]) * (target - ys[i - 1])) / (ys[i] - ys[i - 1]);
  }
  return null;
}

export interface Curve {
  /** Cost at each point (training seconds, physics steps, executions), increasing. */
  x: readonly number[];
  /** Score at each point. */
  y: readonly number[];
}

/** The cost from which the curve's fit stays at or above `target` (interpolated), or null. */
export const reach = (c: Curve, target: number): number | null => firstReach(c.x, isotonic(c.y), target);

/** real's target (its fitted final score), the cost at which real and the run reach it, and real's cost
 *  over the run's (null when the run never reaches it). */
export function speedup(real: Curve, run: Curve) {
  const target = isotonic(real.y).at(-1)!;
  const realAt = reach(real, target)!;
  const runAt = reach(run, target);
  return { target, real_at: realAt, run_at: runAt, speedup: runAt === null ? null : realAt / Math.max(1e-9, runAt) };
}

/** Redraws a point's score (`y`: as measured; `k`: the point's index) in a bootstrap replicate. */
export type Redraw = (y: number, k: number, rng: Rng) => number;

/** Success over `episodes` episodes: Binomial(episodes, y) / episodes (normal approximation above 2000). */
export const binomialRedraw =
  (episodes: number): Redraw =>
  (p, _k, rng) => {
    if (episodes > EXACT_BINOMIAL) {
      const k = Math.round(episodes * p + Math.sqrt(episodes * p * (1 - p)) * rng.normal());
      return Math.min(episodes, Math.max(0, k)) / episodes;
    }
    let k = 0;
    for (let i = 0; i < episodes; i++) if (rng.uniform() < p) k++;
    return k / episodes;
  };

/** A mean with a standard error per point: Normal(y, se[k]). */
export const normalRedraw =
  (se: readonly number[]): Redraw =>
  (y, k, rng) =>
    y + se[k] * rng.normal();

export interface SpeedupInterval {
  /** real's fitted final score. */
  target: number;
  /** The costs at which real and the run reach it, as measured (null: the run never does). */
  real_at: number;
  run_at: number | null;
  /** From the curves as measured. */
  estimate: number | null;
  /** Bootstrap median and 95% percentile interval (a replicate that never reaches counts as 0). */
  median: number;
  low: number;
  high: number;
  /** Share of replicates in which the run reached real's fitted final score. */
  reached: number;
}

/** The speedup of `run` over `real` with its bootstrap interval; deterministic in `key` (words). */
export function speedupInterval(
  real: Curve,
  run: Curve,
  redraw: { real: Redraw; run: Redraw },
  key: readonly number[],
): SpeedupInterval {
  const rng = new Rng(key, 0x5eed);
  const draws: number[] = [];
  let reached = 0;
  for (let r = 0; r < REPLICATES; r++) {
    const a = { x: real.x, y: real.y.map((y, k) => redraw.real(y, k, rng)) };
    const b = { x: run.x, y: run.y.map((y, k) => redraw.run(y, k, rng)) };
    const s = speedup(a, b).speedup;
    if (s !== null) reached++;
    draws.push(s ?? 0);
  }
  draws.sort((x, y) => x - y);
  const q = (f: number) => draws[Math.min(draws.length - 1, Math.floor(f * draws.length))];
  const m = speedup(real, run);
  return {
    target: m.target,
    real_at: m.real_at,
    run_at: m.run_at,
    estimate: m.speedup,
    median: q(0.5),
    low: q(0.025),
    high: q(0.975),
    reached: reached / REPLICATES,
  };
}
