// The second camera's own encoder (vla.ts `secondConv`, presets.ts withSecondEncoder, `--second-encoder
// light`): shared leaves every preset and network as it was; light gives the second camera separate,
// FiLM-modulated weights (vla.cam1.*) that both images reach, whose gradients match finite differences and
// whose sampler log-probs are the training graph's; misplaced or too short layer lists are refused by field.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { tensor, type Feeds } from '../../src/nn/runtime.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import {
  PRESET_NAMES,
  PRETRAIN_SIZES,
  SECOND_ENCODER_NAMES,
  lightSecondConv,
  withSecondEncoder,
} from '../../src/policy/presets.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { type VlaConfig, parseVlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { type PolicySample, PolicyTrainer, obsRow } from '../../src/trainer/policy-trainer.ts';
import { checkLoss } from '../nn/gradcheck.ts';
import { TOKENIZER, VLA_IO, policyLoss, randomActions, randomObs, tinyConfig } from './fixtures.ts';

const PATCH = { out: 16, k: 4, stride: 4, pad: 0 };

/** roles16 on the shipped base's interface reading front and wrist, through the `kind` second encoder. It
 *  starts from the base's config read front-only, without a second encoder, whatever cameras the base reads. */
async function tabletopConfig(kind: 'shared' | 'light'): Promise<VlaConfig> {
  const { secondConv: _second, ...base } = (await loadPolicy('models/vla-base.onnx')).config;
  const front = parseVlaConfig({ ...base, cameras: ['image_front'] });
  const { proprioHidden: _, ...sizes } = withSecondEncoder(PRETRAIN_SIZES.roles16, kind, [64, 64]);
  return parseVlaConfig({ ...front, ...sizes, cameras: ['image_front', 'image_wrist'] });
}

function paramsOf(config: VlaConfig, seed: number): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return ParamStore.init(g.params, seed);
}

describe('the second camera encoder', () => {
  it('shared leaves every preset as it is; light is a 16-channel patch embedding and 3x3 convs per preset', () => {
    expect(SECOND_ENCODER_NAMES).toEqual(['shared', 'light']);
    for (const size of PRESET_NAMES)
      expect(withSecondEncoder(PRETRAIN_SIZES[size], 'shared', [64, 64])).toEqual(PRETRAIN_SIZES[size]);
    const conv3 = (stride: number) => ({ out: 16, k: 3, stride, pad: 1 });
    // roles16 / keypoints16 keep a 16x16 map: one stride-1 conv after the patches (FiLM on both layers)
    expect(lightSecondConv(PRETRAIN_SIZES.roles16, [64, 64])).toEqual([PATCH, conv3(1)]);
    expect(lightSecondConv(PRETRAIN_SIZES.keypoints16, [64, 64])).toEqual([PATCH, conv3(1)]);
    // 8x8 maps (mid, film, keypoints, tiny): one stride-2 conv; the default preset's 4x4 map: two
    expect(lightSecondConv(PRETRAIN_SIZES.mid, [64, 64])).toEqual([PATCH, conv3(2)]);
    expect(lightSecondConv(PRETRAIN_SIZES.tiny, [64, 64])).toEqual([PATCH, conv3(2)]);
    expect(lightSecondConv(PRETRAIN_SIZES.default, [64, 64])).toEqual([PATCH, conv3(2), conv3(2)]);
    // at least as many layers as FiLM modulates
    expect(lightSecondConv({ ...PRETRAIN_SIZES.roles16, film: 3 }, [64, 64])).toEqual([PATCH, conv3(1), conv3(1)]);
    expect(withSecondEncoder(PRETRAIN_SIZES.roles16, 'light', [64, 64]).secondConv).toEqual([PATCH, conv3(1)]);
  });

  it("light gives the second camera its own weights; the first camera keeps the shared network's", async () => {
    const [shared, light] = [await tabletopConfig('shared'), await tabletopConfig('light')];
    expect(shared.secondConv).toBeUndefined();
    expect(light.secondConv).toEqual([PATCH, { out: 16, k: 3, stride: 1, pad: 1 }]);
    const shapes = (c: VlaConfig) => {
      const g = new Graph();
      vlaForwardBuilder(c)(g);
      return Object.fromEntries(g.params.map((p) => [p.name, p.tensor.shape]));
    };
    const [s, l] = [shapes(shared), shapes(light)];
    expect(Object.keys(s).some((n) => n.startsWith('vla.cam1.'))).toBe(false);
    // roles16 FiLMs both layers from the two concatenated role vectors (2 x 32 wide)
    expect(Object.fromEntries(Object.entries(l).filter(([n]) => n.startsWith('vla.cam1.')))).toEqual({
      'vla.cam1.conv0.w': [16, 3, 4, 4],
      'vla.cam1.conv0.b': [16],
      'vla.cam1.film0.w': [64, 32],
      'vla.cam1.film0.b': [32],
      'vla.cam1.conv1.w': [16, 16, 3, 3],
      'vla.cam1.conv1.b': [16],
      'vla.cam1.film1.w': [64, 32],
      'vla.cam1.film1.b': [32],
      'vla.cam1.img.fc.w': [32, 256], // 16 keypoints (x, y)
      'vla.cam1.img.fc.b': [256],
    });
    // the first camera, text, proprio, trunk (2 x 256 image features either way) and heads are the same
    for (const [name, shape] of Object.entries(s)) expect(l[name], name).toEqual(shape);
    const size = (x: Record<string, readonly number[]>) =>
      Object.values(x).reduce((n, sh) => n + sh.reduce((a, b) => a * b, 1), 0);
    console.log(`roles16 front+wrist: shared ${size(s)} parameters, light ${size(l)}`);
  });

  it('both images reach the output: each camera changes its own row only', async () => {
    const config = await tabletopConfig('light');
    const sampler = await PolicySampler.create(config, paramsOf(config, 3));
    try {
      const obs = randomObs(config, 2, 4);
      const greedy = async (o: typeof obs) => (await sampler.act(o, 2, [new Rng(1), new Rng(2)], 0)).logp;
      const a = await greedy(obs);
      for (const cam of config.cameras) {
        const other = (obs[cam] as Uint8Array).slice();
        other.subarray(0, 64 * 64 * 3).reverse(); // row 0's image flipped
        const b = await greedy({ ...obs, [cam]: other });
        expect(b[0], cam).not.toBe(a[0]);
        expect(b[1], cam).toBe(a[1]);
      }
    } finally {
      await sampler.close();
    }
  });

  it("the sampler's log-probs are the training graph's, before and after an update", async () => {
    const config = await tabletopConfig('light');
    const params = paramsOf(config, 5);
    const sampler = await PolicySampler.create(config, params);
    const trainer = await PolicyTrainer.create(config, params, { batch: 4, lr: 1e-3 });
    try {
      const B = 4;
      const obs = randomObs(config, B, 6);
      const rowsOf = (acted: Awaited<ReturnType<typeof sampler.act>>): PolicySample[] =>
        Array.from({ length: B }, (_, i) => ({
          obs: obsRow(obs, B, i),
          tokens: Object.fromEntries(config.actions.map((a) => [a.name, acted.actions[a.name][i]])),
          behaviourLogp: acted.logp[i],
          refLogp: acted.logp[i],
          advantage: i % 2 ? 1 : -1,
          weight: 1,
        }));
      const draw = () => Array.from({ length: B }, (_, i) => new Rng([7, i], 6));
      const rows = rowsOf(await sampler.act(obs, B, draw()));
      const gap = await trainer.logpGap(rows);
      await trainer.step(rows);
      await sampler.update(trainer.params());
      const after = await trainer.logpGap(rowsOf(await sampler.act(obs, B, draw())));
      console.log(
        `light second encoder: sampler vs training logp gap ${gap.toExponential(2)}, after a step ${after.toExponential(2)}`,
      );
      expect(gap).toBeLessThan(1e-5);
      expect(after).toBeLessThan(1e-5);
    } finally {
      await trainer.close();
      await sampler.close();
    }
  });

  it('gradients through both encoders match float64 finite differences', async () => {
    // a 2x2 patch embedding and a stride-2 conv on the second camera, FiLM on both layers of each encoder
    const cfg = tinyConfig({
      film: 2,
      keypoints: 'concat',
      secondConv: [
        { out: 3, k: 2, stride: 2, pad: 0 },
        { out: 2, k: 3, stride: 2, pad: 1 },
      ],
    });
    const n = 2;
    const feeds: Feeds = policyFeeds(cfg, TOKENIZER, randomObs(cfg, n, 13), n);
    for (const [name, a] of Object.entries(randomActions(cfg, n, 13)))
      feeds[VLA_IO.action(name)] = tensor('int32', a, [n]);
    feeds.adv = tensor('float32', Float32Array.of(0.7, -1.3), [n]);
    const values = Object.fromEntries(
      Object.entries(feeds).map(([k, t]) => [
        k,
        t.type === 'float32' ? Float64Array.from(t.data as Float32Array) : (t.data as Uint8Array),
      ]),
    );
    let names: string[] = [];
    const r = await checkLoss(
      (g) => {
        const loss = policyLoss(g, cfg, n).loss;
        names = g.params.map((p) => p.name);
        return loss;
      },
      values,
      { sample: 3 },
    );
    expect(names.filter((p) => p.startsWith('vla.cam1.conv'))).toEqual([
      'vla.cam1.conv0.w',
      'vla.cam1.conv0.b',
      'vla.cam1.conv1.w',
      'vla.cam1.conv1.b',
    ]);
    console.log(
      `light second encoder FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked} elements`,
    );
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('is only allowed with two cameras and enough layers for FiLM, refused naming secondConv', () => {
    const second = [PATCH, { out: 16, k: 3, stride: 1, pad: 1 }];
    expect(tinyConfig().secondConv).toBeUndefined(); // absent: older configs serialise as before
    expect(() => tinyConfig({ cameras: ['image'], secondConv: second })).toThrow(
      /VLA config: secondConv: the second camera's encoder, but there is 1 camera/,
    );
    expect(() => tinyConfig({ cameras: [], conv: [], imageFeatures: undefined, secondConv: second })).toThrow(
      /VLA config: secondConv: an image setting, but there are no cameras/,
    );
    expect(() => tinyConfig({ secondConv: [] })).toThrow(/VLA config: secondConv: /);
    expect(() => tinyConfig({ film: 2, secondConv: [PATCH] })).toThrow(
      /VLA config: secondConv: 1 conv layers, fewer than the 2 FiLM layers/,
    );
    expect(() => tinyConfig({ secondConv: [{ out: 4, k: 0, stride: 1, pad: 0 }] })).toThrow(/secondConv\.0\.k/);
  });
});
