import { describe, expect, it } from 'vitest';
import { pmiWeights } from '../../src/trainer/agentbrew.ts';

describe('pmiWeights', () => {
  it('are max(0, PMI) scaled to sum to the trajectory length, PMI = log p(a|c) − log mean_c′ p(a|c′)', () => {
    const own = [Math.log(0.8), Math.log(0.25), Math.log(0.1)];
    const family = [
      [Math.log(0.8), Math.log(0.1), Math.log(0.1), Math.log(0.2)], // the instruction decides: PMI log 2.67
      [Math.log(0.25), Math.log(0.25), Math.log(0.25), Math.log(0.25)], // every instruction agrees: PMI 0
      [Math.log(0.1), Math.log(0.5), Math.log(0.5), Math.log(0.5)], // the instruction argues against: clipped
    ];
    const w = pmiWeights(own, family);
    expect(w.reduce((a, x) => a + x, 0)).toBeCloseTo(3, 12);
    expect(w[0]).toBeCloseTo(3, 12);
    expect(w[1]).toBeCloseTo(0, 12);
    expect(w[2]).toBe(0);
    const pmi = (t: number) => own[t] - Math.log(family[t].reduce((a, x) => a + Math.exp(x), 0) / family[t].length);
    expect(pmi(0)).toBeCloseTo(Math.log(0.8 / 0.3), 12);
  });

  it('weights follow PMI and are all 1 when no step has positive PMI', () => {
    const w = pmiWeights(
      [-1, -2],
      [
        [-1, -3],
        [-2, -2.5],
      ],
    );
    expect(w[0]).toBeGreaterThan(w[1]);
    expect(w[0] + w[1]).toBeCloseTo(2, 12);
    expect(
      pmiWeights(
        [-2, -2],
        [
          [-2, -1],
          [-2, -2],
        ],
      ),
    ).toEqual([1, 1]);
  });
});
