import { describe, expect, it } from 'vitest';
import {
  firstReach,
  fittedSpeedup,
  isotonic,
  REPLICATES,
  speedupInterval,
  withFits,
} from '../../src/experiment/speedup-fit.ts';
import type { CurvePoint } from '../../src/experiment/speedup.ts';

/** A curve with a point every `dt` seconds (100 physics steps per second), iteration 0 the base. */
const curve = (dt: number, ys: number[]): CurvePoint[] =>
  ys.map((success, i) => ({
    iteration: i * 10,
    seconds: i * dt,
    physicsSteps: 100 * i * dt,
    success,
    low: 0,
    high: 1,
  }));

describe('the fitted speedup', () => {
  it('fits a non-decreasing curve and interpolates its first reach', () => {
    expect(isotonic([1, 3, 2, 4])).toEqual([1, 2.5, 2.5, 4]);
    expect(isotonic([3, 2, 1])).toEqual([2, 2, 2]);
    expect(firstReach([10, 20, 30], [0.2, 0.4, 0.6], 0.5)).toBeCloseTo(25);
    expect(firstReach([10, 20], [0.6, 0.7], 0.5)).toBe(10);
    expect(firstReach([10, 20], [0.2, 0.3], 0.5)).toBeNull();
  });

  it('is the ratio of the times to reach real’s fitted final success, null when never reached', () => {
    const real = { x: [10, 20, 30, 40], y: [0.2, 0.3, 0.4, 0.5] };
    expect(fittedSpeedup(real, { x: [5, 10, 15, 20], y: [0.2, 0.3, 0.4, 0.5] })).toBeCloseTo(2);
    expect(fittedSpeedup(real, { x: [5, 10], y: [0.2, 0.3] })).toBeNull();
  });

  it('has a tight interval when every point rests on many episodes, a wide one on few; deterministic', () => {
    const real = curve(10, [0.2, 0.3, 0.4, 0.5, 0.6]);
    const fast = curve(2, [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.7]);
    const many = speedupInterval(real, fast, 'seconds', 200_000, 0);
    expect(many.estimate).toBeCloseTo(5);
    expect(many.low).toBeGreaterThan(4.5);
    expect(many.high).toBeLessThan(5.5);
    const few = speedupInterval(real, fast, 'seconds', 20, 0);
    expect(few.high - few.low).toBeGreaterThan(many.high - many.low);
    expect(speedupInterval(real, fast, 'seconds', 20, 0)).toEqual(few);
    const slow = speedupInterval(real, curve(10, [0.2, 0.2, 0.2, 0.2, 0.2]), 'physicsSteps', 100_000, 0);
    expect(slow).toMatchObject({ estimate: null, median: 0, reached: 0 });
  });

  it('adds fits to every run but real, against real of the same seed', () => {
    const runs = [
      { mode: 'real', seed: 0, iterations: 40, train_seconds: 40 },
      { mode: 'wmrl', seed: 0, iterations: 60, train_seconds: 12 },
    ];
    const curves = [
      { mode: 'real', seed: 0, points: curve(10, [0.2, 0.3, 0.4, 0.5, 0.6]) },
      { mode: 'wmrl', seed: 0, points: curve(2, [0.2, 0.3, 0.4, 0.5, 0.6]) },
    ];
    const [real, wmrl] = withFits(runs, curves, 1000);
    expect(real.speedup_wall_fit).toBeNull();
    expect(wmrl.speedup_wall_fit?.estimate).toBeCloseTo(5);
    expect(wmrl.speedup_physics_fit?.estimate).toBeCloseTo(5);
    expect(wmrl.iteration_cost_vs_real).toBeCloseTo(0.2);
    expect(REPLICATES).toBeGreaterThanOrEqual(1000);
  });
});
