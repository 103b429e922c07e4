import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { Graph, type TypedArray } from '../../src/nn/ir.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { type Feeds, Session, floatData, tensor } from '../../src/nn/runtime.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { VLA_IO, type VlaConfig, parseVlaConfig, spatialSoftmax } from '../../src/policy/vla.ts';
import { checkLoss } from '../nn/gradcheck.ts';
import { TOKENIZER, policyLoss, randomActions, randomObs, tinyConfig } from './fixtures.ts';

const B = 3;

function lossValues(cfg: VlaConfig, n: number, seed: number): Record<string, TypedArray> {
  const feeds: Feeds = policyFeeds(cfg, TOKENIZER, randomObs(cfg, n, seed), n);
  for (const [name, a] of Object.entries(randomActions(cfg, n, seed)))
    feeds[VLA_IO.action(name)] = tensor('int32', a, [n]);
  const rng = new Rng(seed, 3);
  feeds.adv = tensor(
    'float32',
    Float32Array.from({ length: n }, () => rng.normal()),
    [n],
  );
  return Object.fromEntries(
    Object.entries(feeds).map(([k, t]) => [
      k,
      t.type === 'float32' ? Float64Array.from(t.data as Float32Array) : (t.data as TypedArray),
    ]),
  );
}

describe('VLA FiLM conditioning and spatial-softmax keypoints', () => {
  it('FiLM on every conv + keypoints next to the flattened map: gradients match float64 finite differences', async () => {
    const cfg = tinyConfig({ film: 2, keypoints: 'concat' });
    const r = await checkLoss((g) => policyLoss(g, cfg, B).loss, lossValues(cfg, B, 11), {
      diff: ['proprio'],
      sample: 4,
    });
    console.log(
      `FiLM + keypoints policy loss FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked} elements`,
    );
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('FiLM on the last conv, keypoints only, one camera: gradients match finite differences', async () => {
    const cfg = tinyConfig({ cameras: ['image'], film: 1, keypoints: 'replace', pooling: 'mean' });
    const r = await checkLoss((g) => policyLoss(g, cfg, B).loss, lossValues(cfg, B, 12), { sample: 4 });
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('the FiLM layers are live: zeroing them changes the instruction-dependent outputs', async () => {
    const cfg = tinyConfig({ cameras: ['image'], imageSize: [16, 16], film: 2, keypoints: 'concat' });
    const g0 = new Graph();
    policyLoss(g0, cfg, 2);
    const p = ParamStore.init(g0.params, 3);
    const obs = randomObs(cfg, 2, 5);
    (obs.image as Uint8Array).copyWithin(16 * 16 * 3, 0, 16 * 16 * 3); // both rows see the same image
    obs[cfg.instruction] = ['push the red cube to the left zone', 'put the yellow cube in the bin'];
    const logpOf = async (params: ParamStore): Promise<Float32Array> => {
      const s = await PolicySampler.create(cfg, params);
      const out = await s.forward(obs, 2);
      await s.close();
      return Float32Array.from(out.logp.dx);
    };
    const noFilm = p.clone();
    for (const name of noFilm.names) if (name.startsWith('vla.film')) noFilm.get(name).fill(0);
    const [base, late] = [await logpOf(p), await logpOf(noFilm)];
    const gap = (a: Float32Array): number =>
      Math.max(...Array.from({ length: 3 }, (_, k) => Math.abs(a[k] - a[3 + k])));
    expect(gap(base)).toBeGreaterThan(0); // same image, different instruction -> different distribution
    expect(Math.max(...base.map((v, i) => Math.abs(v - late[i])))).toBeGreaterThan(1e-6);
  });

  it('spatial softmax returns the coordinates of a sharp peak per channel', async () => {
    const g = new Graph('float32');
    const x = g.input('x', [1, 2, 3, 4]);
    g.output('kp', spatialSoftmax(x));
    const s = await Session.create(writeOnnx(g), {}, 'float32');
    const v = new Float32Array(24);
    v[0 * 12 + 1 * 4 + 3] = 50; // channel 0: row 1, column 3 -> (x, y) = (1, 0)
    v[1 * 12 + 2 * 4 + 0] = 50; // channel 1: row 2, column 0 -> (-1, 1)
    const out = floatData((await s.run({ x: tensor('float32', v, [1, 2, 3, 4]) })).kp);
    await s.close();
    expect(Array.from(out).map((a) => Math.round(a * 1000) / 1000)).toEqual([1, 0, -1, 1]);
  });

  it('defaults keep the old network; too many FiLM layers is rejected by field', () => {
    const cfg = tinyConfig();
    expect(cfg.film).toBeUndefined(); // absent: the serialised config of older models is unchanged
    expect(cfg.keypoints).toBeUndefined();
    const g = new Graph();
    policyLoss(g, cfg, 1);
    expect(g.params.some((p) => p.name.startsWith('vla.film'))).toBe(false);
    expect(() => parseVlaConfig({ ...tinyConfig(), film: 3 })).toThrow(/film: 3 layers/);
    expect(() => parseVlaConfig({ ...tinyConfig(), keypoints: 'maybe' as 'off' })).toThrow(/keypoints/);
  });
});
