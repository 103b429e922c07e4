import { describe, expect, it } from 'vitest';
import { HybridWeights } from '../../src/trainer/index.ts';

describe('hybrid-environment loss weights', () => {
  it('off: every row weighs 1', () => {
    expect(new HybridWeights().weights(96, 560)).toEqual({ anchor: 1, model: 1 });
  });

  it('on: each source counts equally (from the running share), the floor binds, the mean row weight is 1', () => {
    const h = new HybridWeights({ enabled: true, floor: 0, halfLife: 1e9 });
    const w = h.weights(100, 300); // share 1/4: anchors 2, model 2/3, mean (100*2 + 300*2/3)/400 = 1
    expect(w.anchor).toBeCloseTo(2, 12);
    expect(w.model).toBeCloseTo(2 / 3, 12);
    expect(100 * w.anchor).toBeCloseTo(300 * w.model, 9);
    const floored = new HybridWeights({ enabled: true, floor: 0.9, halfLife: 1e9 }).weights(100, 300);
    expect(100 * floored.anchor + 300 * floored.model).toBeCloseTo(400, 9);
    expect(floored.model / floored.anchor).toBeCloseTo(0.9 / 2, 12);
  });

  it('the running share follows its half-life and round-trips through its state', () => {
    const h = new HybridWeights({ enabled: true, floor: 0, halfLife: 1 });
    h.weights(100, 100); // share 1/2
    const copy = HybridWeights.fromState(JSON.parse(JSON.stringify(h.toState())));
    const a = h.weights(0, 100); // share 0.5 * 0.5 + 0.5 * 0 = 0.25
    expect(a.model).toBeCloseTo(1, 12); // only model rows: the mean-1 normalisation gives them 1
    expect(copy.weights(0, 100)).toEqual(a);
    expect(h.weights(100, 300).anchor).toBeCloseTo(
      1 / (2 * (0.5 * 0.25 + 0.5 * 0.25)) / ((100 / (2 * 0.25) + 300 / (2 * 0.75)) / 400),
      12,
    );
  });
});
