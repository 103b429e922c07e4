import { describe, expect, it } from 'vitest';
import { spearman, tInterval, tQuantile } from '../../src/core/stats.ts';

// scipy.stats.t.ppf(0.975, df)
const T975: [number, number][] = [
  [1, 12.706204736],
  [2, 4.30265273],
  [5, 2.570581836],
  [10, 2.228138852],
  [11, 2.20098516],
  [20, 2.085963447],
  [30, 2.042272456],
  [31, 2.039513446],
  [60, 2.000297822],
  [120, 1.979930405],
  [1000, 1.962339081],
];

describe('Student-t quantiles', () => {
  it.each(T975)('t.ppf(0.975, %i) = %f', (df, t) => {
    expect(Math.abs(tQuantile(0.975, df) - t)).toBeLessThan(1e-8);
  });

  it('is symmetric, 0 at the median, and rejects a bad p or df', () => {
    expect(tQuantile(0.025, 10)).toBe(-tQuantile(0.975, 10));
    expect(tQuantile(0.5, 7)).toBe(0);
    expect(tQuantile(0.6, 7)).toBeCloseTo(0.263166861352023, 12);
    expect(tQuantile(0.9999, 1)).toBeCloseTo(3183.098757118502, 6);
    expect(() => tQuantile(1, 3)).toThrow(/p must lie in \(0, 1\)/);
    expect(() => tQuantile(0.975, 2.5)).toThrow(/df must be a positive integer/);
    expect(() => tQuantile(0.975, 0)).toThrow(/df must be a positive integer/);
  });

  it('falls toward the normal quantile as df grows, always above it', () => {
    let prev = Infinity;
    for (let df = 1; df <= 200; df++) {
      const t = tQuantile(0.975, df);
      expect(t).toBeLessThan(prev);
      expect(t).toBeGreaterThan(1.959963984540054);
      prev = t;
    }
  });
});

describe('tInterval', () => {
  it('uses the exact quantile for every seed count (12 seeds: t(11) = 2.201, not 2.042)', () => {
    const xs = Array.from({ length: 12 }, (_, i) => i / 10);
    const n = xs.length;
    const m = xs.reduce((s, x) => s + x, 0) / n;
    const sd = Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (n - 1));
    const { mean, low, high } = tInterval(xs);
    expect(mean).toBeCloseTo(m, 14);
    expect(high - mean).toBeCloseTo((2.20098516 * sd) / Math.sqrt(n), 8);
    expect(mean - low).toBeCloseTo((2.20098516 * sd) / Math.sqrt(n), 8);
  });

  it('has no interval for a single value', () => {
    const t = tInterval([0.5]);
    expect(t.mean).toBe(0.5);
    expect(Number.isNaN(t.low) && Number.isNaN(t.high)).toBe(true);
  });
});

describe('spearman', () => {
  it('is null, not 0, when undefined: either side constant or fewer than 2 points', () => {
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(spearman([1, 2, 3], [0.5, 0.5, 0.5])).toBeNull();
    expect(spearman([1], [2])).toBeNull();
    expect(spearman([], [])).toBeNull();
    expect(spearman([1, 2], [2, 1])).toBeCloseTo(-1, 12);
  });
});
