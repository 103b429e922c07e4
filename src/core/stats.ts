import { datan2 } from './dmath.ts';

/** Wilson score interval for a binomial proportion (default 95%). */
export function wilson(
  successes: number,
  n: number,
  z = 1.959963984540054,
): { rate: number; low: number; high: number } {
  if (n === 0) return { rate: 0, low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { rate: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

export function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i];
  return s / xs.length;
}

/** Population standard deviation. */
export function std(xs: ArrayLike<number>): number {
  const m = mean(xs);
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += (xs[i] - m) ** 2;
  return Math.sqrt(s / xs.length);
}

/** Rank correlation (ties get their mean rank); null when it is undefined: fewer than 2 points or
 *  either side constant. */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  const rank = (v: ArrayLike<number>) => {
    const idx = Array.from({ length: v.length }, (_, i) => i).sort((a, b) => v[a] - v[b]);
    const r = new Float64Array(v.length);
    for (let i = 0; i < idx.length; ) {
      let j = i;
      while (j + 1 < idx.length && v[idx[j + 1]] === v[idx[i]]) j++;
      for (let k = i; k <= j; k++) r[idx[k]] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const a = rank(x),
    b = rank(y);
  const n = a.length;
  const ma = a.reduce((s, v) => s + v, 0) / n,
    mb = b.reduce((s, v) => s + v, 0) / n;
  let sab = 0,
    saa = 0,
    sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  return n >= 2 && saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : null;
}

/** P(|T| < t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4: a finite series in
 *  cos²θ, θ = atan(t/√df), all terms positive, so no cancellation). */
function tCentralMass(t: number, df: number): number {
  const r = Math.sqrt(df + t * t);
  const sin = t / r;
  const cos2 = df / (df + t * t);
  let term = 1;
  let sum = 1;
  if (df % 2 === 0) {
    for (let k = 1; k <= (df - 2) / 2; k++) {
      term *= ((2 * k - 1) / (2 * k)) * cos2;
      sum += term;
    }
    return sin * sum;
  }
  const theta = datan2(t, Math.sqrt(df));
  if (df === 1) return (2 / Math.PI) * theta;
  for (let k = 1; k <= (df - 3) / 2; k++) {
    term *= ((2 * k) / (2 * k + 1)) * cos2;
    sum += term;
  }
  return (2 / Math.PI) * (theta + sin * Math.sqrt(cos2) * sum);
}

/** The p-quantile of Student's t with df degrees of freedom (a positive integer),
 *  within ~1e-13 relative: bisection on the CDF until the bracket cannot shrink, in + - * / sqrt and
 *  datan2 only, so the result is the same on every engine. */
export function tQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`tQuantile: p must lie in (0, 1), got ${p}`);
  if (!Number.isInteger(df) || df < 1) throw new RangeError(`tQuantile: df must be a positive integer, got ${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  const mass = 2 * p - 1;
  let lo = 0;
  let hi = 1;
  while (tCentralMass(hi, df) < mass) hi *= 2;
  for (;;) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) return hi;
    if (tCentralMass(mid, df) < mass) lo = mid;
    else hi = mid;
  }
}

/** Mean of independent replicates (training seeds) with its 95% Student-t interval; a single value has
 *  no interval (low = high = NaN). */
export function tInterval(xs: ArrayLike<number>): { mean: number; low: number; high: number } {
  const n = xs.length;
  const m = mean(xs);
  if (n < 2) return { mean: m, low: NaN, high: NaN };
  const sd = std(xs) * Math.sqrt(n / (n - 1));
  const t = tQuantile(0.975, n - 1);
  const half = (t * sd) / Math.sqrt(n);
  return { mean: m, low: m - half, high: m + half };
}
