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

/** Rank correlation (ties get their mean rank); 0 when either side is constant. */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number {
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
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : 0;
}

/** Two-sided 95% Student-t quantiles for 1..10 degrees of freedom (beyond: the normal's 1.96 would be
 *  too narrow below 30, so 2.042 at 30 stands in for 11..30). */
const T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

/** Mean of independent replicates (training seeds) with its 95% Student-t interval; a single value has
 *  no interval (low = high = NaN). */
export function tInterval(xs: ArrayLike<number>): { mean: number; low: number; high: number } {
  const n = xs.length;
  const m = mean(xs);
  if (n < 2) return { mean: m, low: NaN, high: NaN };
  const sd = std(xs) * Math.sqrt(n / (n - 1));
  const t = n - 1 <= T95.length ? T95[n - 2] : n - 1 <= 30 ? 2.042 : 1.96;
  const half = (t * sd) / Math.sqrt(n);
  return { mean: m, low: m - half, high: m + half };
}
