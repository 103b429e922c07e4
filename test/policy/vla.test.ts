import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { backward } from '../../src/nn/grad.ts';
import { Graph, type TypedArray } from '../../src/nn/ir.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { type Feeds, Session, floatData, tensor } from '../../src/nn/runtime.ts';
import { TrainSession } from '../../src/nn/train.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { VLA_IO, type VlaConfig, parseVlaConfig } from '../../src/policy/vla.ts';
import { checkLoss } from '../nn/gradcheck.ts';
import { TOKENIZER, policyLoss, randomActions, randomObs, tinyConfig } from './fixtures.ts';

const B = 3;

function lossFeeds(cfg: VlaConfig, n: number, seed: number): Feeds {
  const feeds = policyFeeds(cfg, TOKENIZER, randomObs(cfg, n, seed), n);
  for (const [name, a] of Object.entries(randomActions(cfg, n, seed)))
    feeds[VLA_IO.action(name)] = tensor('int32', a, [n]);
  const rng = new Rng(seed, 3);
  feeds.adv = tensor(
    'float32',
    Float32Array.from({ length: n }, () => rng.normal()),
    [n],
  );
  return feeds;
}

/** Float64 copies of the float inputs of `feeds` (images/tokens/actions stay as they are). */
function asFloat64(feeds: Feeds): Record<string, TypedArray> {
  return Object.fromEntries(
    Object.entries(feeds).map(([k, t]) => [
      k,
      t.type === 'float32' ? Float64Array.from(t.data as Float32Array) : (t.data as TypedArray),
    ]),
  );
}

describe('VLA policy network', () => {
  it('whole policy loss: gradients match float64 finite differences (2 cameras, attention pooling)', async () => {
    const cfg = tinyConfig();
    const values = asFloat64(lossFeeds(cfg, B, 1));
    const r = await checkLoss((g) => policyLoss(g, cfg, B).loss, values, { diff: ['proprio'], sample: 4 });
    console.log(`policy loss FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked} elements`);
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('mean pooling, one camera, no proprio, no layer norm: gradients match finite differences', async () => {
    const cfg = tinyConfig({ cameras: ['image'], pooling: 'mean', proprio: null, layerNorm: false });
    const values = asFloat64(lossFeeds(cfg, B, 2));
    const r = await checkLoss((g) => policyLoss(g, cfg, B).loss, values, { sample: 4 });
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('float32 production gradients (Conv rule) agree with the float64 graph (im2col lowering)', async () => {
    const cfg = tinyConfig({ imageSize: [16, 16] });
    const n = 4;
    const feeds = lossFeeds(cfg, n, 3);
    const g0 = new Graph('float32');
    policyLoss(g0, cfg, n);
    const p32 = ParamStore.init(g0.params, 5, 'float32');
    const grads = async (float: 'float32' | 'float64'): Promise<Map<string, Float64Array>> => {
      const g = new Graph(float);
      const { loss } = policyLoss(g, cfg, n);
      backward(
        loss,
        g.params.map((p) => p.tensor),
      ).forEach((t, i) => g.output(`g${i}`, t));
      const inits = new Map(
        g.params.map((p) => [p.name, float === 'float32' ? p32.get(p.name) : Float64Array.from(p32.get(p.name))]),
      );
      const s = await Session.create(writeOnnx(g, { initializers: inits }), {}, float);
      const f64 = asFloat64(feeds);
      const fd: Feeds = {};
      for (const t of g.inputs)
        fd[t.name] = float === 'float32' ? feeds[t.name] : tensor(t.dtype, f64[t.name], t.shape);
      const out = await s.run(fd);
      await s.close();
      return new Map(g.params.map((p, i) => [p.name, Float64Array.from(floatData(out[`g${i}`]))]));
    };
    const [a, b] = [await grads('float32'), await grads('float64')];
    let worst = 0;
    for (const [name, ref] of b) {
      const got = a.get(name)!;
      let err = 0;
      let scale = 0;
      ref.forEach((v, i) => {
        err = Math.max(err, Math.abs(got[i] - v));
        scale = Math.max(scale, Math.abs(v));
      });
      if (scale > 0) worst = Math.max(worst, err / scale);
    }
    console.log(
      `float32 (Conv) vs float64 (im2col) policy gradients: max normwise relative difference ${worst.toExponential(2)}`,
    );
    expect(worst).toBeLessThan(1e-4);
  });

  it('sampler (weights baked in) and trainer log-probs agree within 1e-5', async () => {
    const cfg = tinyConfig({ imageSize: [16, 16], act: 'relu' });
    const n = 32;
    const g0 = new Graph();
    policyLoss(g0, cfg, n);
    const params = ParamStore.init(g0.params, 8);
    const sampler = await PolicySampler.create(cfg, params);
    const obs = randomObs(cfg, n, 9);
    const acted = await sampler.act(obs, n, new Rng(4));
    const trainer = await TrainSession.create((g) => policyLoss(g, cfg, n), params);
    const feeds = lossFeeds(cfg, n, 9);
    for (const a of cfg.actions) feeds[VLA_IO.action(a.name)] = tensor('int32', acted.actions[a.name], [n]);
    const r = await trainer.step(feeds, 1e-3);
    const trainLogp = floatData(r.metrics.logp);
    let maxDiff = 0;
    for (let i = 0; i < n; i++) maxDiff = Math.max(maxDiff, Math.abs(trainLogp[i] - acted.logp[i]));
    console.log(`sampler vs trainer log-prob: max |diff| = ${maxDiff.toExponential(2)} over ${n} samples`);
    expect(maxDiff).toBeLessThanOrEqual(1e-5);
    // After the update the sampler is rebuilt with the new weights and agrees again.
    await sampler.update(trainer.params());
    const again = await sampler.act(obs, n, null, 0);
    for (const a of cfg.actions) feeds[VLA_IO.action(a.name)] = tensor('int32', again.actions[a.name], [n]);
    const r2 = await trainer.step(feeds, 0);
    const lp2 = floatData(r2.metrics.logp);
    for (let i = 0; i < n; i++) expect(Math.abs(lp2[i] - again.logp[i])).toBeLessThanOrEqual(1e-5);
    await sampler.close();
    await trainer.close();
  });

  it('samples deterministically from a seed, handles any batch size and rejects bad observations', async () => {
    const cfg = tinyConfig({ imageSize: [16, 16] });
    const g0 = new Graph();
    policyLoss(g0, cfg, 1);
    const sampler = await PolicySampler.create(cfg, ParamStore.init(g0.params, 2));
    for (const n of [1, 5]) {
      const obs = randomObs(cfg, n, n);
      const a = await sampler.act(obs, n, new Rng(3));
      const b = await sampler.act(obs, n, new Rng(3));
      expect(a.actions).toEqual(b.actions);
      expect(a.logp).toEqual(b.logp);
      expect(a.logp.length).toBe(n);
    }
    const bad = randomObs(cfg, 2, 1);
    delete bad.wrist;
    await expect(sampler.forward(bad, 2)).rejects.toThrow(/"wrist"/);
    await sampler.close();
  });

  it('validates its config by field', () => {
    expect(() => parseVlaConfig({ ...tinyConfig(), actions: [{ name: 'dx', n: 1 }] })).toThrow(/actions\.0\.n/);
    expect(() => parseVlaConfig({ ...tinyConfig(), cameras: ['image', 'image'] })).toThrow(/"image" used twice/);
  });
});
