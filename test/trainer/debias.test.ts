import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { Rng } from '../../src/core/rng.ts';
import { applyMap, Debiaser, DebiasConfigSchema, fitMap, pav } from '../../src/trainer/debias.ts';

const DEFAULTS = DebiasConfigSchema.parse({});

describe('Online Debiasing: the map', () => {
  it('has the paper defaults', () => {
    expect(DEFAULTS).toEqual({
      capacity: 5000,
      warmup: 200,
      refitEvery: 64,
      bins: 10,
      low: 0,
      high: 1,
      perTask: false,
    });
  });

  it('PAV pools violators into their weighted mean', () => {
    // [1, 3, 2, 4] weights [1, 1, 3, 1]: 3 > 2 pools to (3·1 + 2·3)/4 = 2.25.
    expect(pav([1, 3, 2, 4], [1, 1, 3, 1])).toEqual([1, 2.25, 2.25, 4]);
    // A decreasing chain pools into one block: (3 + 2 + 1)/3 = 2.
    expect(pav([3, 2, 1], [1, 1, 1])).toEqual([2, 2, 2]);
    expect(pav([0.1, 0.1, 0.5], [2, 5, 1])).toEqual([0.1, 0.1, 0.5]);
  });

  it('fits bin means, pools a decreasing pair of bins by count, skips empty bins', () => {
    // Bin 2: three pairs (0.25, 0.6); bin 3: one pair (0.35, 0.2); bin 6: two pairs (0.65, 0.9).
    // Bins 2 and 3 violate (0.6 > 0.2): pooled (3·0.6 + 1·0.2)/4 = 0.5.
    const wm = [0.25, 0.25, 0.25, 0.35, 0.65, 0.65];
    const env = [0.6, 0.6, 0.6, 0.2, 0.9, 0.9];
    const k = fitMap(wm, env, DEFAULTS)!;
    expect(k.x).toHaveLength(3);
    k.x.forEach((x, i) => expect(x).toBeCloseTo([0.25, 0.35, 0.65][i], 12));
    k.y.forEach((y, i) => expect(y).toBeCloseTo([0.5, 0.5, 0.9][i], 12));
    expect(fitMap([], [], DEFAULTS)).toBeNull();
  });

  it('interpolates linearly between knots and extrapolates as a constant', () => {
    const k = fitMap([0.15, 0.55, 0.85], [0.2, 0.6, 0.9], DEFAULTS)!;
    expect(k.x).toEqual([0.15, 0.55, 0.85]);
    // 0.35 is halfway from 0.15 to 0.55: 0.2 + 0.5·0.4 = 0.4; 0.7 is halfway from 0.55 to 0.85: 0.75.
    expect(applyMap(k, 0.35)).toBeCloseTo(0.4, 12);
    expect(applyMap(k, 0.7)).toBeCloseTo(0.75, 12);
    expect(applyMap(k, 0.55)).toBe(0.6);
    expect(applyMap(k, 0.05)).toBe(0.2);
    expect(applyMap(k, 0)).toBe(0.2);
    expect(applyMap(k, 0.99)).toBe(0.9);
    expect(applyMap(null, 0.37)).toBe(0.37);
  });
});

describe('Online Debiasing: the online schedule', () => {
  it('is the identity (clamped to [0, 1]) through 199 pairs and fits first exactly at pair 200', () => {
    const d = new Debiaser();
    for (let i = 0; i < 199; i++) expect(d.add(0.5, 0.7)).toBe(false);
    expect(d.map(0.3)).toBe(0.3);
    expect(d.map(0)).toBe(0);
    expect(d.map(1.3)).toBe(1);
    expect(d.report()).toMatchObject({ pairs: 199, refits: 0, knots: null });
    expect(d.add(0.5, 0.7)).toBe(true);
    // One non-empty bin: one knot, so f is the constant 0.7.
    expect(d.map(0.3)).toBeCloseTo(0.7, 12);
    expect(d.report().refits).toBe(1);
  });

  it('refits every 64 pairs after that: at 264, not 263 or 265', () => {
    const d = new Debiaser();
    const refitAt: number[] = [];
    for (let n = 1; n <= 400; n++) {
      // 200 pairs (0.5, 0.7), then (0.5, 0.1).
      if (d.add(0.5, n <= 200 ? 0.7 : 0.1)) refitAt.push(n);
      if (n === 263) expect(d.map(0.5)).toBeCloseTo(0.7, 12);
      // The refit at 264 sees 200 × 0.7 and 64 × 0.1: (140 + 6.4)/264 = 0.554545...
      if (n === 264) expect(d.map(0.5)).toBeCloseTo(146.4 / 264, 12);
    }
    expect(refitAt).toEqual([200, 264, 328, 392]);
  });

  it('pools a decreasing pair of bins by count in the live map', () => {
    const d = new Debiaser();
    // 150 pairs in bin 2 with r_env 0.6, 50 in bin 3 with r_env 0.2: pooled (90 + 10)/200 = 0.5.
    for (let i = 0; i < 150; i++) d.add(0.25, 0.6);
    for (let i = 0; i < 50; i++) d.add(0.35, 0.2);
    expect(d.map(0.1)).toBeCloseTo(0.5, 12);
    expect(d.map(0.3)).toBeCloseTo(0.5, 12);
    expect(d.map(0.9)).toBeCloseTo(0.5, 12);
  });

  it('evicts the oldest pairs at capacity and fits and reports on the FIFO only', () => {
    const d = new Debiaser({ capacity: 3, warmup: 5, refitEvery: 1 });
    const pairs = [
      [0.9, 0.1],
      [0.8, 0.2],
      [0.5, 0.5],
      [0.6, 0.4],
      [0.7, 0.7],
    ];
    for (const [w, e] of pairs) d.add(w, e);
    expect(d.toState().wm).toEqual([0.5, 0.6, 0.7]);
    expect(d.toState().env).toEqual([0.5, 0.4, 0.7]);
    const r = d.report();
    expect(r.pairs).toBe(5);
    expect(r.fifo).toBe(3);
    // Bias before: (0 + 0.2 + 0)/3. Bins 5 and 6 violate (0.5 > 0.4) and pool to 0.45; bias after
    // ((0.45 − 0.5) + (0.45 − 0.4) + 0)/3 = 0.
    expect(r.biasBefore).toBeCloseTo(0.2 / 3, 12);
    expect(r.biasAfter).toBeCloseTo(0, 12);
    r.knots!.y.forEach((y, i) => expect(y).toBeCloseTo([0.45, 0.45, 0.7][i], 12));
  });

  it('recovers a known monotone bias r_wm = r_env² within stated bounds', () => {
    const rng = new Rng(7);
    const d = new Debiaser();
    for (let i = 0; i < 6000; i++) {
      const e = rng.uniform();
      d.add(e * e, e);
    }
    const r = d.report();
    expect(r.refits).toBe(91); // at 200 + 64k for k = 0..90 (the last at 5960)
    // E[r² − r] = 1/3 − 1/2 = −1/6 before; the map removes it to within 0.01.
    expect(Math.abs(r.biasBefore! + 1 / 6)).toBeLessThan(0.01);
    expect(Math.abs(r.biasAfter!)).toBeLessThan(0.01);
    // f should be ≈ sqrt: mean |f(e²) − e| on a uniform grid under 0.03; under 0.035 anywhere with
    // e >= 0.3 (below that, bin 0's knot at x̄ ≈ 0.03 and linear interpolation of sqrt cost more).
    let mae = 0;
    for (let k = 0; k < 1000; k++) {
      const e = (k + 0.5) / 1000;
      const err = Math.abs(d.map(e * e) - e);
      mae += err / 1000;
      if (e >= 0.3) expect(err).toBeLessThan(0.035);
    }
    expect(mae).toBeLessThan(0.03);
  });
});

describe('Online Debiasing: state', () => {
  it('round-trips through JSON and continues identically', () => {
    const rng = new Rng(3);
    const draw = (): [number, number] => {
      const e = rng.uniform();
      return [Math.max(0, e - 0.1 + 0.05 * rng.uniform()), e];
    };
    const a = new Debiaser();
    for (let i = 0; i < 250; i++) a.add(...draw());
    const b = Debiaser.fromState(JSON.parse(JSON.stringify(a.toState())));
    expect(b.toState()).toEqual(a.toState());
    for (let i = 0; i < 150; i++) {
      // Crosses the refits at 264, 328 and 392.
      const [w, e] = draw();
      expect(b.add(w, e)).toBe(a.add(w, e));
      for (const x of [0, 0.13, 0.5, 0.77, 1]) expect(b.map(x)).toBe(a.map(x));
    }
    expect(b.report()).toEqual(a.report());
    expect(b.toState()).toEqual(a.toState());
  });

  it('rejects a bad state naming the field', () => {
    const s = new Debiaser().toState();
    expect(() => Debiaser.fromState({ ...s, config: { ...s.config, capacity: -1 } })).toThrow(/\$\.config\.capacity/);
    expect(() => Debiaser.fromState({ ...s, seen: 1, wm: [0.5] })).toThrow(InputError);
    expect(() => new Debiaser().add(NaN, 0.5)).toThrow(RangeError);
  });
});
