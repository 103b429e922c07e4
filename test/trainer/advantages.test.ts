import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { Advantages, ensembleWeights, standardise } from '../../src/trainer/advantages.ts';

// [0, 0.5, 1, 0.5]: μ = 0.5, population variance (0.25 + 0 + 0.25 + 0)/4 = 0.125, σ = √2/4.
const SIGMA = Math.SQRT2 / 4;
const A = 0.5 / (SIGMA + 1e-4);

describe('group advantages', () => {
  it('standardises a hand-computed group with population std and ε = 1e-4', () => {
    const g = standardise([0, 0.5, 1, 0.5]);
    expect(g.mean).toBe(0.5);
    expect(g.std).toBeCloseTo(SIGMA, 15);
    expect(g.zeroVariance).toBe(false);
    [-A, 0, A, 0].forEach((a, i) => expect(g.advantages[i]).toBeCloseTo(a, 12));
    // Ungraded members (null) are left out of μ and σ and get 0: [1, ·, 0] has μ = σ = 0.5.
    const h = standardise([1, null, 0]);
    expect(h.graded).toBe(2);
    [0.5 / 0.5001, 0, -0.5 / 0.5001].forEach((a, i) => expect(h.advantages[i]).toBeCloseTo(a, 12));
  });

  it('gives equal-reward groups zero advantages and counts them', () => {
    const adv = new Advantages();
    expect(adv.group([1, 1, 1, 1]).advantages).toEqual([0, 0, 0, 0]);
    expect(adv.group([0.3, 0.3 + 1e-12, 0.3]).zeroVariance).toBe(true);
    expect(adv.group([0, 1]).zeroVariance).toBe(false);
    expect(adv.group([0.7]).advantages).toEqual([0]); // one graded member: σ = 0
    expect(adv.report()).toEqual({ groups: 4, zeroVarianceGroups: 3 });
  });

  it('multiplies by the group weight (the denoiser w)', () => {
    const g = new Advantages().group([0, 0.5, 1, 0.5], { groupWeight: 2 });
    [-2 * A, 0, 2 * A, 0].forEach((a, i) => expect(g.advantages[i]).toBeCloseTo(a, 12));
  });

  it('turns ensemble variances into weights normalised to mean 1, clipped, switchable', () => {
    // v = [0, 0.1, 0.2, 0.3], v̄ = 0.15: w ∝ 1/[0.15, 0.25, 0.35, 0.45] ∝ 1/3 : 1/5 : 1/7 : 1/9
    // = 105 : 63 : 45 : 35 (×1/315); mean 1 gives [105, 63, 45, 35]/62.
    const w = ensembleWeights([0, 0.1, 0.2, 0.3], { enabled: true });
    [105 / 62, 63 / 62, 45 / 62, 35 / 62].forEach((x, i) => expect(w[i]).toBeCloseTo(x, 9));
    // v = [0, 0, 0, 3], v̄ = 0.75: raw 4/3, 4/3, 4/3, 4/15, mean 16/15: [1.25, 1.25, 1.25, 0.25];
    // a lower clip of 0.5 binds.
    const c = ensembleWeights([0, 0, 0, 3], { enabled: true, min: 0.5 });
    [1.25, 1.25, 1.25, 0.5].forEach((x, i) => expect(c[i]).toBeCloseTo(x, 9));
    expect(ensembleWeights([0, 0, 0], { enabled: true })).toEqual([1, 1, 1]);
    expect(ensembleWeights([0, 0.1, 0.2, 0.3])).toEqual([1, 1, 1, 1]); // off by default
  });

  it('applies rollout weights only when enabled, over graded members', () => {
    const vars = [0, 0.1, 0.2, 0.3];
    const off = new Advantages().group([0, 0.5, 1, 0.5], { rewardVars: vars });
    expect(off.weights).toEqual([1, 1, 1, 1]);
    const on = new Advantages({ ensemble: { enabled: true } }).group([0, 0.5, 1, 0.5], {
      rewardVars: vars,
      groupWeight: 3,
    });
    [-A * 3 * (105 / 62), 0, A * 3 * (45 / 62), 0].forEach((a, i) => expect(on.advantages[i]).toBeCloseTo(a, 9));
    // The ungraded member's variance is left out: [0, ·, 0.2] → v̄ = 0.1, w ∝ 1/0.1 : 1/0.3 = [1.5, 0.5].
    const part = new Advantages({ ensemble: { enabled: true } }).group([1, null, 0], { rewardVars: [0, 9, 0.2] });
    [1.5, 1, 0.5].forEach((x, i) => expect(part.weights[i]).toBeCloseTo(x, 9));
  });

  it('debiases world-model rewards before standardising', () => {
    // f squares the rewards: [0.2, 0.4, 0.6] → [0.04, 0.16, 0.36], μ = 0.56/3, which z-scoring
    // the raw rewards (symmetric, advantages ±a, 0) would not give: the middle member goes negative.
    const map = (r: number): number => r * r;
    const g = new Advantages().worldModelGroup([0.2, 0.4, 0.6, null], map);
    expect(g.rewards).toEqual([0.2 * 0.2, 0.4 * 0.4, 0.6 * 0.6, null]);
    const ref = standardise([0.04, 0.16, 0.36, null]);
    g.advantages.forEach((a, i) => expect(a).toBeCloseTo(ref.advantages[i], 12));
    expect(g.advantages[1]).toBeLessThan(0);
    expect(standardise([0.2, 0.4, 0.6]).advantages[1]).toBeCloseTo(0, 12);
  });

  it('round-trips its state through JSON and continues identically', () => {
    const a = new Advantages({ eps: 1e-3, ensemble: { enabled: true, max: 2 } });
    a.group([1, 1]);
    a.group([0, 0.25, 1], { rewardVars: [0.01, 0.02, 0.03] });
    const b = Advantages.fromState(JSON.parse(JSON.stringify(a.toState())));
    expect(b.toState()).toEqual(a.toState());
    const next: [(number | null)[], number[]][] = [
      [
        [0.1, 0.9, 0.4],
        [0.05, 0, 0.2],
      ],
      [
        [0.5, 0.5, 0.5],
        [0, 0, 0],
      ],
    ];
    for (const [r, v] of next)
      expect(b.group(r, { rewardVars: v, groupWeight: 1.5 })).toEqual(a.group(r, { rewardVars: v, groupWeight: 1.5 }));
    expect(b.report()).toEqual({ groups: 4, zeroVarianceGroups: 2 });
    expect(() => Advantages.fromState({ ...a.toState(), zeroVarianceGroups: 99 })).toThrow(InputError);
  });
});
