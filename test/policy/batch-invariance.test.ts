import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { selectRows } from '../../src/env/batch.ts';
import type { BatchObs } from '../../src/env/types.ts';
import { DYN, Graph } from '../../src/nn/ir.ts';
import { worldModelStepBuilder } from '../../src/nn/nets/worldmodel.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { floatData, tensor } from '../../src/nn/runtime.ts';
import { ForwardSession } from '../../src/nn/train.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { PRETRAIN_SIZES } from '../../src/policy/presets.ts';
import { PolicySampler, samplerPolicy } from '../../src/policy/sampler.ts';
import { stepContext } from '../../src/rollout/collect.ts';
import { type VlaConfig, parseVlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { randomObs, tinyConfig } from './fixtures.ts';

// ORT's ReduceSum takes SIMD paths that depend on where a row sits in memory, so a row's result could
// depend on the batch it is computed in. Rollouts must not (docs/run-state.md#determinism): the networks sum with
// MatMuls, whose kernels accumulate every row in the same order wherever it sits.

async function checkPolicy(config: VlaConfig, params: ParamStore, obs: BatchObs, n: number): Promise<void> {
  const sampler = await PolicySampler.create(config, params);
  try {
    const single: Record<string, Float32Array>[] = [];
    for (let r = 0; r < n; r++) single.push((await sampler.forward(selectRows(obs, [r], n), 1)).logp);
    for (const size of [2, 3, 5, 8]) {
      const rows = Array.from({ length: size }, (_, i) => (i * 5 + size) % n);
      const f = await sampler.forward(selectRows(obs, rows, n), size);
      rows.forEach((r, b) => {
        for (const a of config.actions)
          expect(f.logp[a.name].subarray(b * a.n, (b + 1) * a.n), `${a.name}, row ${r} at ${b} of ${size}`).toEqual(
            single[r][a.name],
          );
      });
    }
  } finally {
    await sampler.close();
  }
}

describe('networks give every row the same bits whatever batch it is computed in', () => {
  it('the shipped base VLA (keypoints, FiLM, layer norm)', async () => {
    const p = await loadPolicy('models/vla-base.onnx');
    await checkPolicy(p.config, p.params, randomObs(p.config, 9, 1), 9);
  });

  it('a VLA with attention pooling and two cameras', async () => {
    const config = tinyConfig();
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    await checkPolicy(config, ParamStore.init(g.params, 2), randomObs(config, 9, 2), 9);
  });

  it('a VLA with role pooling (position embeddings, three queries, FiLM split by query)', async () => {
    const config = tinyConfig({ pooling: 'roles', roles: { queries: 3, film: 'split' }, film: 2, keypoints: 'concat' });
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    await checkPolicy(config, ParamStore.init(g.params, 5), randomObs(config, 9, 6), 9);
  });

  it("the roles16 preset on the shipped base's interface", async () => {
    const base = (await loadPolicy('models/vla-base.onnx')).config;
    const { proprioHidden: _, ...roles16 } = PRETRAIN_SIZES.roles16;
    const config = parseVlaConfig({ ...base, ...roles16 });
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    await checkPolicy(config, ParamStore.init(g.params, 7), randomObs(config, 9, 8), 9);
  });

  it('the world-model ensemble step', async () => {
    const config = { stateDim: 20, actionDim: 5, outDim: 16, members: 3, hidden: [32, 32], act: 'silu' as const };
    const build = worldModelStepBuilder(config, DYN);
    const g = new Graph();
    build(g);
    const fwd = await ForwardSession.create(build, ParamStore.init(g.params, 3));
    const rng = new Rng(4);
    const n = 9;
    const s = Float32Array.from({ length: n * 20 }, () => rng.normal());
    const a = Float32Array.from({ length: n * 5 }, () => rng.normal());
    const run = async (rows: number[]) => {
      const out = floatData(
        (
          await fwd.run({
            state: tensor(
              'float32',
              Float32Array.from(rows.flatMap((r) => Array.from(s.subarray(r * 20, r * 20 + 20)))),
              [rows.length, 20],
            ),
            action: tensor(
              'float32',
              Float32Array.from(rows.flatMap((r) => Array.from(a.subarray(r * 5, r * 5 + 5)))),
              [rows.length, 5],
            ),
          })
        ).delta_mean,
      ); // [K, N, 16]
      return rows.map((_, b) =>
        Array.from({ length: 3 }, (_, k) =>
          Array.from(out.subarray((k * rows.length + b) * 16, (k * rows.length + b + 1) * 16)),
        ),
      );
    };
    const single: number[][][] = [];
    for (let r = 0; r < n; r++) single.push((await run([r]))[0]);
    for (const size of [2, 5, 8]) {
      const rows = Array.from({ length: size }, (_, i) => (i * 5 + size) % n);
      (await run(rows)).forEach((got, b) => expect(got, `row ${rows[b]} at ${b} of ${size}`).toEqual(single[rows[b]]));
    }
    await fwd.close();
  });

  it('the sampler as a rollout policy: idle envs (key -1) stay out of the forward and change no live row', async () => {
    const config = tinyConfig();
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    const sampler = await PolicySampler.create(config, ParamStore.init(g.params, 9));
    const policy = samplerPolicy(sampler, { seed: 3, temperature: 1 });
    const n = 9;
    const obs = randomObs(config, n, 10);
    const keys = Array.from({ length: n }, (_, i) => 100 + i);
    const steps = Array.from({ length: n }, (_, i) => i % 4);
    const full = await policy.act(obs, stepContext(keys, steps));
    const idle = new Set([0, 4, 5, 8]);
    const some = await policy.act(
      obs,
      stepContext(
        keys.map((k, i) => (idle.has(i) ? -1 : k)),
        steps,
      ),
    );
    for (const a of config.actions)
      for (let i = 0; i < n; i++) {
        const [token, logp] = [(some.actions[a.name] as Int32Array)[i], some.logp![a.name][i]];
        if (idle.has(i)) expect([token, logp], `${a.name} of idle env ${i}`).toEqual([0, 0]);
        else expect([token, logp], `${a.name} of env ${i}`).toEqual([full.actions[a.name][i], full.logp![a.name][i]]);
      }
    await sampler.close();
  });
});
