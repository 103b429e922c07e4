import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { Rng } from '../../src/core/rng.ts';
import { Debiaser } from '../../src/trainer/debias.ts';
import { Denoiser, residualScale } from '../../src/trainer/denoise.ts';

// A group with s² = 0.36: d = [0.2, 0.4, 0.6], s = [0, 0.5, 1]; centred d − centred s =
// [0.3, 0, −0.3], mean square 0.06; Var(s) = 0.5/3 = 1/6; s² = 0.06 · 6 = 0.36.
const NOISY: [number[], number[]] = [
  [0.2, 0.4, 0.6],
  [0, 0.5, 1],
];
// d = s: s² = 0.
const EXACT: [number[], number[]] = [
  [0, 1],
  [0, 1],
];
// d = [0, 1], s = [1, 0]: residuals [−1, 1], mean square 1; Var(s) = 0.25; s² = 4.
const OPPOSED: [number[], number[]] = [
  [0, 1],
  [1, 0],
];
const BETA = 2 ** (-1 / 64);

describe('Inverse-Variance Denoising', () => {
  it('computes s² by hand and skips groups with Var(s) < 1e-9', () => {
    expect(residualScale(...NOISY)).toBeCloseTo(0.36, 12);
    expect(residualScale(...EXACT)).toBe(0);
    expect(residualScale(...OPPOSED)).toBeCloseTo(4, 12);
    expect(residualScale([0.1, 0.9, 0.5], [0.3, 0.3, 0.3])).toBeNull();
    // Var(s) = (1e-5)² = 1e-10 < 1e-9: skipped; 1e-4 apart gives 1e-8 >= 1e-9: kept.
    expect(residualScale([0, 1], [0.5 - 1e-5, 0.5 + 1e-5])).toBeNull();
    expect(residualScale([0, 1], [0.5 - 1e-4, 0.5 + 1e-4])).not.toBeNull();

    const dn = new Denoiser();
    expect(dn.observe([0.1, 0.9], [0.3, 0.3])).toEqual({ s2: null, w: 1 });
    expect(dn.report()).toEqual({ eta2: null, c: null, w: 1, groupsSeen: 1, groupsSkipped: 1 });
  });

  it('initialises the EMA with the first observation, whose weight halves after 64 updates', () => {
    const dn = new Denoiser();
    dn.observe(...NOISY);
    expect(dn.report().eta2).toBeCloseTo(0.36, 15);
    dn.observe(...EXACT);
    expect(dn.report().eta2).toBeCloseTo(0.36 * BETA, 15);
    for (let i = 1; i < 64; i++) dn.observe(...EXACT);
    expect(dn.report().eta2).toBeCloseTo(0.18, 12);
  });

  it('keeps w = 1 for 31 observed groups and freezes c at the 32nd (skipped groups do not count)', () => {
    const dn = new Denoiser();
    for (let i = 0; i < 31; i++) {
      expect(dn.observe(...NOISY).w).toBe(1);
      dn.observe([0.2, 0.8], [0.4, 0.4]); // skipped
    }
    expect(dn.report().c).toBeNull();
    expect(dn.report().groupsSeen).toBe(62);
    expect(dn.observe(...NOISY).w).toBeCloseTo(2, 12);
    const r = dn.report();
    expect(r.c!).toBeCloseTo(1 / r.eta2!, 12);
    expect(r.c!).toBeCloseTo(1 / 0.36, 9);
    expect(r).toMatchObject({ groupsSeen: 63, groupsSkipped: 31 });
  });

  it('after the freeze w tracks η² against its value at the freeze, clipped to [1, 4]', () => {
    const frozen = (): Denoiser => {
      const dn = new Denoiser();
      for (let i = 0; i < 32; i++) dn.observe(...NOISY);
      return dn;
    };
    // A noisier world model: η² = β·0.36 + (1 − β)·4 and w = 1 + η²/0.36.
    const up = frozen();
    const eta = up.report().eta2!;
    expect(up.observe(...OPPOSED).w).toBeCloseTo(1 + (BETA * eta + (1 - BETA) * 4) / eta, 9);
    for (let i = 0; i < 300; i++) up.observe(...OPPOSED);
    expect(up.weight).toBe(4); // 1 + 4/0.36 ≈ 12.1, clipped
    // A world model in exact agreement from now on: η² halves in 64 groups, w = 1 + 0.5 = 1.5,
    // and w tends to 1 (never below).
    const down = frozen();
    for (let i = 0; i < 64; i++) down.observe(...EXACT);
    expect(down.weight).toBeCloseTo(1.5, 9);
    for (let i = 0; i < 5000; i++) down.observe(...EXACT);
    expect(down.weight).toBeGreaterThanOrEqual(1);
    expect(down.weight).toBeLessThan(1 + 1e-9);
    // wMax configurable: the clip binds at 3.
    const low = new Denoiser({ wMax: 3 });
    for (let i = 0; i < 32; i++) low.observe(...NOISY);
    for (let i = 0; i < 300; i++) low.observe(...OPPOSED);
    expect(low.weight).toBe(3);
  });

  it('inverse-variance: w = 1 + η² from the first observed group, with no freeze and no target', () => {
    const dn = new Denoiser({ rule: 'inverse-variance' });
    expect(dn.weight).toBe(1);
    expect(dn.observe(...NOISY).w).toBeCloseTo(1.36, 12); // s² = 0.36 initialises η²
    const eta = BETA * 0.36 + (1 - BETA) * 4;
    expect(dn.observe(...OPPOSED).w).toBeCloseTo(1 + eta, 12);
    expect(dn.report().c).toBeNull();
    for (let i = 0; i < 300; i++) dn.observe(...OPPOSED);
    expect(dn.weight).toBe(4); // 1 + 4, clipped
  });

  it('does not freeze while η² is below the floor (a world model in exact agreement keeps w = 1)', () => {
    const dn = new Denoiser();
    for (let i = 0; i < 40; i++) expect(dn.observe(...EXACT).w).toBe(1);
    expect(dn.report().c).toBeNull();
    // The first noisy group lifts η² to (1 − β)·0.36 and freezes c there: w = 2.
    expect(dn.observe(...NOISY).w).toBeCloseTo(2, 12);
    expect(dn.report().eta2).toBeCloseTo((1 - BETA) * 0.36, 15);
  });

  it('debiases first: a world model that is physics plus a monotone distortion has ~zero residual', () => {
    // A map with knots (0.05, 0.2), (0.25, 0.4), (0.45, 0.9): the world model reports f⁻¹(r_env).
    const deb = new Debiaser({ warmup: 3 });
    for (const [wm, env] of [
      [0.05, 0.2],
      [0.25, 0.4],
      [0.45, 0.9],
    ])
      deb.add(wm, env);
    const rWm = [0.05, 0.25, 0.45, 0.15];
    const rEnv = [0.2, 0.4, 0.9, 0.3]; // f(0.15) = 0.3 by interpolation
    const dn = new Denoiser();
    expect(
      dn.observe(
        rWm.map((r) => deb.map(r)),
        rEnv,
      ).s2!,
    ).toBeCloseTo(0, 12);
    // On the raw rewards instead: d − d̄ = [−0.175, 0.025, 0.225, −0.075], s − s̄ = [−0.25, −0.05,
    // 0.45, −0.15]; residual mean square (3·0.075² + 0.225²)/4 = 0.016875; Var(s) = 0.0725.
    expect(residualScale(rWm, rEnv)!).toBeCloseTo(0.016875 / 0.0725, 12);

    // Statistically: r_wm = r_env², a debiaser fit on 6000 pairs, groups of 8 anchors.
    const rng = new Rng(7);
    const fit = new Debiaser();
    for (let i = 0; i < 6000; i++) {
      const e = rng.uniform();
      fit.add(e * e, e);
    }
    let debiased = 0,
      raw = 0;
    for (let g = 0; g < 200; g++) {
      const s = Array.from({ length: 8 }, () => rng.uniform());
      const w = s.map((x) => x * x);
      debiased +=
        residualScale(
          w.map((x) => fit.map(x)),
          s,
        )! / 200;
      raw += residualScale(w, s)! / 200;
    }
    // Measured ≈ 0.015 against ≈ 0.068 (what is left is the 10-bin map's interpolation error).
    expect(debiased).toBeLessThan(0.02);
    expect(debiased).toBeLessThan(raw / 3);
  });

  it('round-trips its state through JSON and continues identically', () => {
    const rng = new Rng(11);
    const group = (): [number[], number[]] => {
      const s = Array.from({ length: 4 }, () => (rng.uniform() < 0.2 ? 0.5 : rng.uniform()));
      return [s.map((x) => Math.min(1, Math.max(0, x + 0.2 * (rng.uniform() - 0.5)))), s];
    };
    const a = new Denoiser();
    for (let i = 0; i < 20; i++) a.observe(...group());
    const b = Denoiser.fromState(JSON.parse(JSON.stringify(a.toState())));
    expect(b.toState()).toEqual(a.toState());
    for (let i = 0; i < 60; i++) {
      // Crosses the freeze.
      const [d, s] = group();
      expect(b.observe(d, s)).toEqual(a.observe(d, s));
    }
    expect(b.report()).toEqual(a.report());
    expect(a.report().c).not.toBeNull();
  });

  it('rejects a bad state naming the field', () => {
    const s = new Denoiser().toState();
    expect(() => Denoiser.fromState({ ...s, skipped: 3 })).toThrow(/\$\.skipped/);
    expect(() => Denoiser.fromState({ ...s, config: { ...s.config, halfLife: 0 } })).toThrow(InputError);
  });
});
