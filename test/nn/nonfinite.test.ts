import { describe, expect, it } from 'vitest';
import { Graph } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import * as L from '../../src/nn/layers.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { tensor } from '../../src/nn/runtime.ts';
import { DEFAULT_MAX_NONFINITE_STEPS, NonFiniteTrainingError, TrainSession } from '../../src/nn/train.ts';

const build = (g: Graph) => {
  const d = o.sub(L.mlp(g.input('x', [4, 2]), 'net', [8], 1, { act: 'tanh' }), g.input('y', [4, 1]));
  return { loss: o.meanAll(o.mul(d, d)) };
};

async function session(opts = {}): Promise<TrainSession> {
  const g = new Graph();
  build(g);
  return TrainSession.create(build, ParamStore.init(g.params, 1), opts);
}

const feeds = (y: number) => ({
  x: tensor('float32', new Float32Array(8).fill(0.5), [4, 2]),
  y: tensor('float32', new Float32Array(4).fill(y), [4, 1]),
});

describe('the NaN guard has a bound', () => {
  it(`skips non-finite steps, then throws after ${DEFAULT_MAX_NONFINITE_STEPS} in a row (a finite step resets the count)`, async () => {
    const ts = await session();
    for (let i = 1; i < DEFAULT_MAX_NONFINITE_STEPS; i++)
      expect((await ts.step(feeds(Number.NaN), 1e-3)).finite).toBe(false);
    expect((await ts.step(feeds(1), 1e-3)).finite).toBe(true);
    for (let i = 1; i < DEFAULT_MAX_NONFINITE_STEPS; i++) await ts.step(feeds(Number.NaN), 1e-3);
    await expect(ts.step(feeds(Number.NaN), 1e-3)).rejects.toThrow(NonFiniteTrainingError);
    expect(ts.stepCount).toBe(1); // skipped steps never changed the state
    await ts.close();
  });

  it('takes the bound as an option and names it in the error', async () => {
    const ts = await session({ maxNonFiniteSteps: 3 });
    await ts.step(feeds(Number.POSITIVE_INFINITY), 1e-3);
    await ts.step(feeds(Number.NaN), 1e-3);
    await expect(ts.step(feeds(Number.NaN), 1e-3)).rejects.toThrow(
      /^training stopped: 3 consecutive steps had a non-finite loss or gradient norm/,
    );
    await ts.close();
    await expect(session({ maxNonFiniteSteps: 0 })).rejects.toThrow(/maxNonFiniteSteps must be a positive integer/);
  });
});
