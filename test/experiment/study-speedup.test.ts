// The one reach and speedup of the studies (src/experiment/study-speedup.ts) on curves whose answers are
// worked out by hand, and the tabletop speedup's rows (withFits).
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import {
  binomialRedraw,
  firstReach,
  isotonic,
  normalRedraw,
  REPLICATES,
  reach,
  speedup,
  speedupInterval,
  withFits,
} from '../../src/experiment/index.ts';

/** Points every `dt` seconds (100 physics steps per second), iteration 0 the base. */
const points = (dt: number, ys: number[]) =>
  ys.map((success, i) => ({
    iteration: i * 10,
    seconds: i * dt,
    physicsSteps: 100 * i * dt,
    success,
    low: 0,
    high: 1,
  }));
const xy = (x: number[], y: number[]) => ({ x, y });
const exact = binomialRedraw(1e12);

describe('reach and speedup', () => {
  it('fits a non-decreasing curve and interpolates its first reach', () => {
    expect(isotonic([1, 3, 2, 4])).toEqual([1, 2.5, 2.5, 4]);
    expect(isotonic([3, 2, 1])).toEqual([2, 2, 2]);
    expect(firstReach([10, 20, 30], [0.2, 0.4, 0.6], 0.5)).toBeCloseTo(25);
    expect(firstReach([10, 20], [0.6, 0.7], 0.5)).toBe(10);
    expect(firstReach([10, 20], [0.2, 0.3], 0.5)).toBeNull();
  });

  it('an early spike the curve falls back from does not reach: the fit pools it with what follows', () => {
    // 0.6, 0.4, 0.45 pool to 0.4833; 0.5 is reached between x = 3 and 4 (0.4833 -> 0.52) at 3 + 0.0167/0.0367
    expect(reach(xy([1, 2, 3, 4], [0.6, 0.4, 0.45, 0.52]), 0.5)).toBeCloseTo(3 + 1 / 2.2, 9);
    expect(reach(xy([1, 2, 3, 4], [0.4, 0.55, 0.48, 0.5]), 0.5)).toBeCloseTo(1 + 0.1 / 0.11, 9);
    expect(reach(xy([1], [0.4]), 0.5)).toBeNull();
  });

  it("is real's cost to reach its own fitted final score over the run's; null when never reached", () => {
    // real fits to 0.2, 0.4, 0.4, 0.6: target 0.6 at 40; the run fits to 0.3, 0.6, 0.6: 0.6 at 10
    const real = xy([10, 20, 30, 40], [0.2, 0.4, 0.4, 0.6]);
    expect(speedup(real, xy([5, 10, 15], [0.3, 0.7, 0.5]))).toEqual({
      target: 0.6,
      real_at: 40,
      run_at: 10,
      speedup: 4,
    });
    expect(speedup(real, xy([5, 10], [0.2, 0.3])).speedup).toBeNull();
    // real's final point falls back: target (0.5 + 0.3) / 2 = 0.4, which real first reaches at 20
    expect(speedup(xy([10, 20, 30], [0.2, 0.5, 0.3]), xy([4, 8], [0.1, 0.7]))).toMatchObject({
      target: 0.4,
      real_at: 20,
      run_at: 4 + (4 * 0.3) / 0.6,
    });
  });

  it('has a tight interval when every point rests on many episodes, a wide one on few; deterministic', () => {
    const c = (dt: number, ys: number[]) =>
      xy(
        ys.map((_, i) => (i + 1) * dt),
        ys,
      );
    const real = c(10, [0.3, 0.4, 0.5, 0.6]);
    const fast = c(2, [0.3, 0.4, 0.5, 0.6, 0.7, 0.7]);
    const many = speedupInterval(real, fast, { real: binomialRedraw(200_000), run: binomialRedraw(200_000) }, [0, 0]);
    expect(many.estimate).toBeCloseTo(5);
    expect(many.low).toBeGreaterThan(4.5);
    expect(many.high).toBeLessThan(5.5);
    const few = speedupInterval(real, fast, { real: binomialRedraw(20), run: binomialRedraw(20) }, [0, 0]);
    expect(few.high - few.low).toBeGreaterThan(many.high - many.low);
    expect(speedupInterval(real, fast, { real: binomialRedraw(20), run: binomialRedraw(20) }, [0, 0])).toEqual(few);
    const flat = speedupInterval(real, c(10, [0.2, 0.2, 0.2]), { real: exact, run: exact }, [0, 1]);
    expect(flat).toMatchObject({ estimate: null, run_at: null, median: 0, reached: 0 });
  });

  it('redraws a mean from its standard error (normal), a success rate from its episodes (binomial)', () => {
    const rng = new Rng([1], 0);
    expect(normalRedraw([0, 0])(0.7, 1, rng)).toBe(0.7);
    const draws = Array.from({ length: 4000 }, () => normalRedraw([0.1])(0.5, 0, rng));
    const m = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(m).toBeCloseTo(0.5, 1);
    expect(Math.sqrt(draws.reduce((a, b) => a + (b - m) ** 2, 0) / draws.length)).toBeCloseTo(0.1, 1);
    expect(binomialRedraw(1)(1, 0, rng)).toBe(1);
    expect(binomialRedraw(1)(0, 0, rng)).toBe(0);
  });

  it("adds each run's speedups over real of its seed, its ceiling and cost per iteration; real gets none", () => {
    const time = (world_model: number) => ({ world_model });
    const runs = [
      { mode: 'real', seed: 0, iterations: 40, train_seconds: 40, time: time(0) },
      { mode: 'wmrl', seed: 0, iterations: 60, train_seconds: 12, time: time(3) },
    ];
    // real: 0.2 .. 0.6 at 10 .. 40 s (target 0.6 at 40 s); wmrl the same values every 2 s (0.6 at 8 s)
    const curves = [
      { mode: 'real', seed: 0, points: points(10, [0.1, 0.2, 0.3, 0.4, 0.6]) },
      { mode: 'wmrl', seed: 0, points: points(2, [0.1, 0.2, 0.3, 0.4, 0.6]) },
    ];
    const [real, wmrl] = withFits(runs, curves, 1e9);
    expect(real.speedup_wall).toBeNull();
    expect(real.iteration_cost_vs_real).toBe(1);
    expect(wmrl.speedup_wall).toMatchObject({ target: 0.6, real_at: 40, run_at: 8 });
    expect(wmrl.speedup_wall?.estimate).toBeCloseTo(5, 9);
    expect(wmrl.speedup_physics?.estimate).toBeCloseTo(5, 9);
    // a quarter of wmrl's clock is the world model: free, it reaches at 6 s
    expect(wmrl.speedup_wall_ceiling).toBeCloseTo(40 / 6, 9);
    // 0.2 s per iteration against real's 1 s
    expect(wmrl.iteration_cost_vs_real).toBeCloseTo(0.2, 12);
    expect(REPLICATES).toBeGreaterThanOrEqual(1000);
  });
});
