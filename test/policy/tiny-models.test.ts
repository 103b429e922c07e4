import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { loadWorldModel } from '../../src/nn/nets/worldmodel-file.ts';
import { tensor } from '../../src/nn/runtime.ts';
import { ForwardSession } from '../../src/nn/train.ts';
import { worldModelForwardBuilder } from '../../src/nn/nets/worldmodel.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { makeTinyModels } from '../../scripts/make-tiny-models.ts';

const MODELS = join(import.meta.dirname, '../../models');

describe('models/ (made by scripts/make-tiny-models.ts)', () => {
  it('the tiny policy and world model load, check and run', async () => {
    const p = await loadPolicy(join(MODELS, 'tiny-policy.onnx'));
    expect(p.config.actions.map((a) => `${a.name}:${a.n}`)).toEqual(['dx:11', 'dy:11', 'dz:11', 'dyaw:11', 'grip:2']);
    const sampler = await PolicySampler.create(p.config, p.params);
    const n = 2;
    const rng = new Rng(1);
    const obs: Record<string, Uint8Array | Float32Array | string[]> = {
      instruction: ['pick up the red cube and place it on the blue block', 'push the green cube to the orange zone'],
    };
    for (const cam of p.config.cameras) obs[cam] = Uint8Array.from({ length: n * 64 * 64 * 3 }, () => rng.int(256));
    if (p.config.proprio) obs[p.config.proprio.name] = new Float32Array(n * p.config.proprio.dim);
    const act = await sampler.act(obs, n, new Rng(2));
    expect(act.actions.grip.length).toBe(n);
    expect(p.sidecar.provenance.steps).toBe(0);
    await sampler.close();

    const w = await loadWorldModel(join(MODELS, 'tiny-worldmodel.onnx'));
    const f = await ForwardSession.create(worldModelForwardBuilder(w.config), w.params);
    const out = await f.run({
      state: tensor('float32', new Float32Array(3 * w.config.stateDim), [3, w.config.stateDim]),
      action: tensor('float32', new Float32Array(3 * w.config.actionDim), [3, w.config.actionDim]),
    });
    expect(out.delta_mean.dims).toEqual([w.config.members, 3, w.config.stateDim]);
    await f.close();
  });

  it('regenerating them gives byte-identical files (otherwise run `npm run models:tiny`)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-tiny-'));
    try {
      await makeTinyModels(dir);
      for (const f of ['tiny-policy.onnx', 'tiny-policy.json', 'tiny-worldmodel.onnx', 'tiny-worldmodel.json']) {
        expect(
          Buffer.compare(await readFile(join(dir, f)), await readFile(join(MODELS, f))),
          `${f} is stale: run npm run models:tiny`,
        ).toBe(0);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
