// Small policy configs and random observations shared by the policy tests.
import { Rng } from '../../src/core/rng.ts';
import type { BatchObs } from '../../src/env/types.ts';
import type { Graph, Tensor } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import {
  type VlaConfig,
  type VlaConfigInput,
  VLA_IO,
  actionScores,
  parseVlaConfig,
  vlaActionInputs,
  vlaInputs,
  vlaNet,
} from '../../src/policy/vla.ts';

export const CORPUS = [
  'push the red cube to the left zone',
  'pick the blue cube and place it on the green cube',
  'put the yellow cube in the bin',
];
export const TOKENIZER = WordTokenizer.fromCorpus(CORPUS, { maxLength: 6 });

export function tinyConfig(over: Partial<VlaConfigInput> = {}): VlaConfig {
  return parseVlaConfig({
    cameras: ['image', 'wrist'],
    imageSize: [10, 10],
    conv: [
      { out: 3, k: 3, stride: 2, pad: 1 },
      { out: 4, k: 3, stride: 2, pad: 1 },
    ],
    imageFeatures: 8,
    tokenizer: TOKENIZER.config,
    embedDim: 4,
    pooling: 'attention',
    proprio: { name: 'proprio', dim: 3, hidden: 5 },
    trunk: [8],
    act: 'silu',
    actions: [
      { name: 'dx', n: 3 },
      { name: 'grip', n: 2 },
    ],
    ...over,
  });
}

export function randomObs(cfg: VlaConfig, n: number, seed: number): BatchObs {
  const rng = new Rng(seed, 1);
  const [h, w] = cfg.imageSize;
  const obs: BatchObs = {};
  for (const cam of cfg.cameras) obs[cam] = Uint8Array.from({ length: n * h * w * 3 }, () => rng.int(256));
  obs[cfg.instruction] = Array.from({ length: n }, (_, i) => (i % 4 === 3 ? 'stack the purple cube' : CORPUS[i % 3]));
  if (cfg.proprio) obs[cfg.proprio.name] = Float32Array.from({ length: n * cfg.proprio.dim }, () => rng.range(-1, 1));
  return obs;
}

export function randomActions(cfg: VlaConfig, n: number, seed: number): Record<string, Int32Array> {
  const rng = new Rng(seed, 2);
  return Object.fromEntries(cfg.actions.map((a) => [a.name, Int32Array.from({ length: n }, () => rng.int(a.n))]));
}

/** A smooth policy-gradient-style loss: -mean(logp * adv) - 0.01 mean(entropy). */
export function policyLoss(g: Graph, cfg: VlaConfig, batch: number): { loss: Tensor; metrics: Record<string, Tensor> } {
  const net = vlaNet(vlaInputs(g, cfg, batch), cfg);
  const sc = actionScores(net, vlaActionInputs(g, cfg, batch));
  const adv = g.input('adv', [batch]);
  const loss = o.sub(o.neg(o.meanAll(o.mul(sc.logp, adv))), o.mul(o.meanAll(sc.entropy), 0.01));
  return { loss, metrics: { logp: sc.logp, entropy: sc.entropy } };
}

export { VLA_IO };
