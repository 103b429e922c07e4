// The speedup with an interval that evaluation noise cannot decide: each run's held-out curve is fitted
// by isotonic regression (success never decreasing in training time or physics steps), real's final
// success is read off its fitted curve, each fitted curve's first reach of it is interpolated between
// points, and a parametric bootstrap redraws every curve point's success as Binomial(n, p)/n over the n
// evaluation episodes behind it. Points share their evaluation seeds, so they are not independent: the
// interval treats them as if they were, which widens it.
import { Rng } from '../core/rng.ts';
import type { CurvePoint } from './speedup-runs.ts';

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

/** real's time to reach its own fitted final success over the run's (both fitted), or null when the run's
 *  fitted curve never gets there. */
export function fittedSpeedup(
  real: { x: readonly number[]; y: readonly number[] },
  run: { x: readonly number[]; y: readonly number[] },
): number | null {
  const fitReal = isotonic(real.y);
  const target = fitReal.at(-1)!;
  const atReal = firstReach(real.x, fitReal, target)!;
  const atRun = firstReach(run.x, isotonic(run.y), target);
  return atRun === null ? null : atReal / Math.max(1e-9, atRun);
}

export interface SpeedupInterval {
  /** From the curves as measured. */
  estimate: number | null;
  /** Bootstrap median and 95% percentile interval (a replicate that never reaches counts as 0). */
  median: number;
  low: number;
  high: number;
  /** Share of replicates in which the run reached real's fitted final success. */
  reached: number;
}

/** The fitted speedup of `run` over `real` along `axis`, with its bootstrap interval; `episodes`: the
 *  evaluation episodes behind each curve point. Deterministic in `seed`. */
export function speedupInterval(
  real: readonly CurvePoint[],
  run: readonly CurvePoint[],
  axis: 'seconds' | 'physicsSteps',
  episodes: number,
  seed: number,
): SpeedupInterval {
  const trained = (c: readonly CurvePoint[]) => c.filter((p) => p.iteration > 0);
  const [a, b] = [trained(real), trained(run)];
  const curve = (c: CurvePoint[], y = c.map((p) => p.success)) => ({ x: c.map((p) => p[axis]), y });
  const rng = new Rng([seed, axis === 'seconds' ? 0 : 1], 0x5eed);
  // exact below EXACT_BINOMIAL episodes, the normal approximation above
  const redraw = (p: number) => {
    if (episodes > EXACT_BINOMIAL) {
      const k = Math.round(episodes * p + Math.sqrt(episodes * p * (1 - p)) * rng.normal());
      return Math.min(episodes, Math.max(0, k)) / episodes;
    }
    let k = 0;
    for (let i = 0; i < episodes; i++) if (rng.uniform() < p) k++;
    return k / episodes;
  };
  const draws: number[] = [];
  let reached = 0;
  for (let r = 0; r < REPLICATES; r++) {
    const s = fittedSpeedup(
      curve(
        a,
        a.map((p) => redraw(p.success)),
      ),
      curve(
        b,
        b.map((p) => redraw(p.success)),
      ),
    );
    if (s !== null) reached++;
    draws.push(s ?? 0);
  }
  draws.sort((x, y) => x - y);
  const q = (f: number) => draws[Math.min(draws.length - 1, Math.floor(f * draws.length))];
  return {
    estimate: fittedSpeedup(curve(a), curve(b)),
    median: q(0.5),
    low: q(0.025),
    high: q(0.975),
    reached: reached / REPLICATES,
  };
}

/** Each run's fitted speedups over real of its seed (wall-clock and physics steps) with their intervals,
 *  and its cost per iteration relative to real's; real's own rows get none. */
export function withFits<R extends { mode: string; seed: number; iterations: number; train_seconds: number }>(
  runs: readonly R[],
  curves: readonly { mode: string; seed: number; points: CurvePoint[] }[],
  episodes: number,
) {
  return runs.map((r) => {
    const real = runs.find((x) => x.mode === 'real' && x.seed === r.seed);
    const curveOf = (x: { mode: string; seed: number }) =>
      curves.find((c) => c.mode === x.mode && c.seed === x.seed)?.points ?? [];
    const intervalOn = (axis: 'seconds' | 'physicsSteps') =>
      real && r !== real ? speedupInterval(curveOf(real), curveOf(r), axis, episodes, r.seed) : null;
    const perIteration = (x: R) => x.train_seconds / Math.max(1, x.iterations);
    return {
      ...r,
      speedup_wall_fit: intervalOn('seconds'),
      speedup_physics_fit: intervalOn('physicsSteps'),
      iteration_cost_vs_real: real ? perIteration(r) / perIteration(real) : null,
    };
  });
}
