// A study's statistics over seeds: the between-seed mean with its t interval (missing values left out
// and counted), paired differences that refuse unequal lengths, a row against another seed by seed,
// curves averaged per index, and a curve's value at a cost.
import { InputError } from '../core/errors.ts';
import { mean, tInterval } from '../core/stats.ts';
import { type PairedDiff, pairedDifference } from '../eval/index.ts';

/** Between-seed mean with its 95% t interval over the values present (`n` of them); mean null with none,
 *  bounds null with fewer than 2. */
export interface Across {
  mean: number | null;
  low: number | null;
  high: number | null;
  values: number[];
  n: number;
}

export function across(xs: readonly (number | null | undefined)[]): Across {
  const values = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  if (!values.length) return { mean: null, low: null, high: null, values, n: 0 };
  const t = tInterval(values);
  const wide = values.length > 1;
  return { mean: t.mean, low: wide ? t.low : null, high: wide ? t.high : null, values, n: values.length };
}

/** The paired difference a − b over the same episodes; unequal lengths are an InputError naming `what`. */
export function paired(a: readonly number[], b: readonly number[], what: string): PairedDiff {
  if (a.length !== b.length)
    throw new InputError(
      `${what}: ${a.length} vs ${b.length} episodes; a paired difference needs the same evaluation episodes ` +
        '(evaluations of other episode counts?)',
    );
  return pairedDifference(a, b);
}

/** The runs of two rows that share a seed, as pairs [mine, theirs]. */
export function bySeed<T extends { seed: number }>(mine: readonly T[], theirs: readonly T[]): [T, T][] {
  return mine.flatMap((a) => {
    const b = theirs.find((x) => x.seed === a.seed);
    return b ? [[a, b] as [T, T]] : [];
  });
}

/** A row against another, seed by seed: the mean of per-seed paired differences with its t interval over
 *  seeds, and one paired difference pooled over every episode of those seeds. */
export function versusSeeds<T extends { seed: number }>(
  row: string,
  pairs: readonly [T, T][],
  outcomes: (r: T) => number[],
) {
  const what = (a: T) => `${row}, seed ${a.seed}`;
  return {
    row,
    seeds: pairs.length,
    per_seed: across(pairs.map(([a, b]) => paired(outcomes(a), outcomes(b), what(a)).diff)),
    pooled: paired(
      pairs.flatMap(([a]) => outcomes(a)),
      pairs.flatMap(([, b]) => outcomes(b)),
      `${row}, seeds pooled`,
    ),
  };
}

/** Per index, the mean over curves of the values present (as long as the longest; null where none). */
export function meanCurve(curves: readonly (readonly (number | null)[])[]): (number | null)[] {
  const n = Math.max(0, ...curves.map((c) => c.length));
  return Array.from({ length: n }, (_, i) => {
    const xs = curves.map((c) => c[i]).filter((x): x is number => typeof x === 'number');
    return xs.length ? mean(xs) : null;
  });
}

/** a / b, null when either is missing or b is 0. */
export const ratio = (a: number | null, b: number | null): number | null =>
  a === null || b === null || b === 0 ? null : a / b;

/** The curve's value at cost `x` (linear between points; its first value before its first point),
 *  null beyond its last point. */
export function valueAt<P extends { success: number }>(curve: readonly P[], cost: (p: P) => number, x: number) {
  const k = curve.findIndex((p) => cost(p) >= x);
  if (k < 0) return null;
  if (k === 0) return curve[0].success;
  const [p, q] = [curve[k - 1], curve[k]];
  return p.success + ((q.success - p.success) * (x - cost(p))) / Math.max(1e-9, cost(q) - cost(p));
}
