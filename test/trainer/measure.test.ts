// Fidelity statistics: a rank correlation with nothing to rank is null, and the metrics line keeps it so.
import { describe, expect, it } from 'vitest';
import { TrainMetricsSchema } from '../../src/core/metrics.ts';
import { fidelityStats } from '../../src/trainer/measure.ts';
import type { GradedSegment } from '../../src/trainer/rollouts.ts';

const seg = (rWm: number, rEnv: number, phi0 = 0): GradedSegment => ({
  rollout: 0,
  elapsed: 0,
  horizon: 2,
  steps: 2,
  rWm,
  rEnv,
  phi0,
});

describe('fidelityStats', () => {
  it('gives null rank correlations when physics rewards are all equal (not a correlation of 0)', () => {
    const s = fidelityStats([seg(0.2, 1), seg(0.5, 1), seg(0.9, 1)]);
    expect(s.rankCorr).toBeNull();
    expect(s.gainRankCorr).toBeNull();
    expect(s.pairs).toBe(3);
    expect(s.bias).toBeCloseTo(-0.4666667, 6);
  });

  it('gives null for a single pair and a number otherwise', () => {
    expect(fidelityStats([seg(0.2, 0.3)]).rankCorr).toBeNull();
    expect(fidelityStats([seg(0.2, 0.3), seg(0.4, 0.9)]).rankCorr).toBeCloseTo(1, 12);
  });

  it('a metrics line may carry a null rank correlation, but no other null fidelity value', () => {
    const line = (extra: Record<string, unknown>) => {
      const base = TrainMetricsSchema.safeParse({});
      const missing = base.error?.issues.map((i) => i.path[0]) ?? [];
      return { ...Object.fromEntries(missing.map((k) => [k, 0])), ...extra };
    };
    const paths = (x: unknown) => TrainMetricsSchema.safeParse(x).error?.issues.map((i) => i.path.join('.'));
    expect(paths(line({ 'fidelity/h5/rank_corr': null, 'fidelity/h5/gain_rank_corr': null }))).toBeUndefined();
    expect(paths(line({ 'fidelity/h5/bias': null }))).toEqual(['fidelity/h5/bias']);
  });
});
