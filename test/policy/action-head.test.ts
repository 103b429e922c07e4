// The tabletop VLA's action head (`--head`, presets.ts withHead): independent heads leave every preset as it
// was; autoregressive heads keep (dx, dy, dz, dyaw, grip) together, and the sampler (encoders and trunk once,
// then the head graph per slot) scores its own tokens exactly as the training graph does.
import * as ortWeb from 'onnxruntime-web';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { selectRows } from '../../src/env/batch.ts';
import type { BatchObs } from '../../src/env/types.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { type Feeds, floatData, tensor } from '../../src/nn/runtime.ts';
import { ForwardSession } from '../../src/nn/train.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { HEAD_NAMES, PRESET_NAMES, PRETRAIN_SIZES, TABLETOP_AR_EMBED, withHead } from '../../src/policy/presets.ts';
import { PolicySampler, policyFeeds, samplerPolicy } from '../../src/policy/sampler.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import {
  VLA_IO,
  type VlaConfig,
  actionScores,
  parseVlaConfig,
  vlaForwardBuilder,
  vlaInputs,
  vlaNet,
} from '../../src/policy/vla.ts';
import { stepContext } from '../../src/rollout/collect.ts';
import { type PolicySample, PolicyTrainer, obsRow } from '../../src/trainer/policy-trainer.ts';
import { randomObs } from './fixtures.ts';

/** roles16 with autoregressive heads on the shipped base's interface: one 64x64 camera, the 7-wide
 *  proprioception, the scene's instructions, dx/dy/dz/dyaw (11 bins) and grip (2). */
async function tabletopConfig(): Promise<VlaConfig> {
  const base = (await loadPolicy('models/vla-base.onnx')).config;
  const { proprioHidden: _, ...sizes } = withHead(PRETRAIN_SIZES.roles16, 'autoregressive');
  return parseVlaConfig({ ...base, ...sizes });
}

function initParams(config: VlaConfig, seed: number): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return ParamStore.init(g.params, seed);
}

/** The training graph's per-slot log-probs of `tokens` (vlaNet + actionScores, teacher-forced, the PPO and BC
 *  losses' formula) at a static batch, with `prefix` as the tokens the heads condition on (default: `tokens`). */
async function trainingLogp(
  config: VlaConfig,
  params: ParamStore,
  obs: BatchObs,
  n: number,
  tokens: Record<string, Int32Array>,
  prefix: Record<string, Int32Array> = tokens,
): Promise<Record<string, Float32Array>> {
  const chosen = (g: Graph) => {
    const net = vlaNet(vlaInputs(g, config, n), config); // declares action.<dim>: what the heads condition on
    const scored = Object.fromEntries(config.actions.map((a) => [a.name, g.input(`scored.${a.name}`, [n], 'int32')]));
    return Object.fromEntries(Object.entries(actionScores(net, scored).perDim).map(([k, t]) => [`lp.${k}`, t]));
  };
  const session = await ForwardSession.create(chosen, params);
  const feeds: Feeds = policyFeeds(config, new WordTokenizer(config.tokenizer), obs, n, session.ort);
  for (const a of config.actions) {
    feeds[VLA_IO.action(a.name)] = tensor('int32', prefix[a.name], [n], session.ort);
    feeds[`scored.${a.name}`] = tensor('int32', tokens[a.name], [n], session.ort);
  }
  const out = await session.run(feeds);
  await session.close();
  return Object.fromEntries(config.actions.map((a) => [a.name, floatData(out[`lp.${a.name}`]) as Float32Array]));
}

const maxGap = (a: Record<string, Float32Array>, b: Record<string, Float32Array>): number =>
  Math.max(...Object.keys(a).flatMap((k) => Array.from(a[k], (x, i) => Math.abs(x - b[k][i]))));

describe('the action head of the tabletop VLA', () => {
  it('independent leaves every preset as it is; autoregressive adds the prefix-conditioned heads', async () => {
    for (const size of PRESET_NAMES)
      expect(withHead(PRETRAIN_SIZES[size], 'independent')).toEqual(PRETRAIN_SIZES[size]);
    expect(HEAD_NAMES).toEqual(['independent', 'autoregressive']);
    const config = await tabletopConfig();
    expect(config.autoregressive).toEqual({ embedDim: TABLETOP_AR_EMBED });
    expect(config.actions.map((a) => a.name)).toEqual(['dx', 'dy', 'dz', 'dyaw', 'grip']);
    expect(config.pooling).toBe('roles');
    const g = new Graph();
    vlaForwardBuilder(config)(g);
    expect(g.params.filter((p) => p.name.startsWith('vla.ar.')).map((p) => p.name)).toEqual([
      'vla.ar.proj.w',
      'vla.ar.proj.b',
      ...['dx', 'dy', 'dz', 'dyaw'].map((d) => `vla.ar.embed.${d}.table`),
    ]);
  });

  it("the sampler's log-probs of its sampled tokens are the training graph's, slot by slot", async () => {
    const config = await tabletopConfig();
    const params = initParams(config, 3);
    const sampler = await PolicySampler.create(config, params);
    const B = 8;
    const obs = randomObs(config, B, 4);
    const acted = await sampler.act(
      obs,
      B,
      Array.from({ length: B }, (_, i) => new Rng([5, i], 6)),
    );
    const train = await trainingLogp(config, params, obs, B, acted.actions);
    const gap = maxGap(acted.logpPerDim, train);
    // teacher forcing in the sampler (the same two graphs) gives the very bits act() chose with
    const forced = await sampler.forward(obs, B, acted.actions);
    for (const a of config.actions)
      expect(Float32Array.from(acted.actions[a.name], (k, i) => forced.logp[a.name][i * a.n + k])).toEqual(
        acted.logpPerDim[a.name],
      );
    // the test has teeth: heads that ignored the prefix (all tokens 0), or read it one slot late (embedding s
    // fed the token of slot s - 1) or early (slot s + 1: head t would see its own token), score the same
    // tokens measurably differently
    const names = config.actions.map((a) => a.name);
    const shifted = (by: number) =>
      Object.fromEntries(names.map((name, s) => [name, acted.actions[names[s + by]] ?? new Int32Array(B)]));
    const prefixGap = async (prefix: Record<string, Int32Array>) =>
      maxGap(acted.logpPerDim, await trainingLogp(config, params, obs, B, acted.actions, prefix));
    const ignored = await prefixGap(Object.fromEntries(names.map((name) => [name, new Int32Array(B)])));
    const late = await prefixGap(shifted(-1));
    const early = await prefixGap(shifted(1));
    console.log(
      `tabletop autoregressive head (roles16, batch ${B}): sampler vs training graph per-slot logp gap ${gap.toExponential(2)}; ` +
        `prefix ignored ${ignored.toExponential(2)}, one slot late ${late.toExponential(2)}, early ${early.toExponential(2)}`,
    );
    expect(gap).toBeLessThan(1e-5);
    for (const wrong of [ignored, late, early]) expect(wrong).toBeGreaterThan(1e-3);
    // the PPO trainer's own graph agrees on the joint log-prob, before and after an update rebakes the sampler
    const rows: PolicySample[] = Array.from({ length: B }, (_, i) => ({
      obs: obsRow(obs, B, i),
      tokens: Object.fromEntries(config.actions.map((a) => [a.name, acted.actions[a.name][i]])),
      behaviourLogp: acted.logp[i],
      refLogp: acted.logp[i],
      advantage: i % 2 ? 1 : -1,
      weight: 1,
    }));
    const trainer = await PolicyTrainer.create(config, params, { batch: B, lr: 1e-3 });
    expect(await trainer.logpGap(rows)).toBeLessThan(1e-5);
    await trainer.step(rows);
    await sampler.update(trainer.params());
    const again = await sampler.act(obs, B, null, 0);
    const rows2 = rows.map((r, i) => ({
      ...r,
      tokens: Object.fromEntries(config.actions.map((a) => [a.name, again.actions[a.name][i]])),
      behaviourLogp: again.logp[i],
    }));
    expect(await trainer.logpGap(rows2)).toBeLessThan(1e-5);
    await trainer.close();
    await sampler.close();
  });

  it('samples deterministically per (seed, episode key, step), whatever the batch', async () => {
    const config = await tabletopConfig();
    const params = initParams(config, 7);
    const n = 8;
    const obs = randomObs(config, n, 8);
    const keys = Array.from({ length: n }, (_, i) => 40 + i);
    const steps = Array.from({ length: n }, (_, i) => (3 * i) % 5);
    const sampler = await PolicySampler.create(config, params);
    const policy = samplerPolicy(sampler, { seed: 11, temperature: 1 });
    const a = await policy.act(obs, stepContext(keys, steps));
    // a second sampler on the same weights draws the same
    const other = await PolicySampler.create(config, params);
    const b = await samplerPolicy(other, { seed: 11, temperature: 1 }).act(obs, stepContext(keys, steps));
    await other.close();
    expect(b).toEqual(a);
    const tokensOf = (x: typeof a, i: number) => config.actions.map((d) => (x.actions[d.name] as Int32Array)[i]);
    const reseeded = await samplerPolicy(sampler, { seed: 12, temperature: 1 }).act(obs, stepContext(keys, steps));
    expect(
      Array.from({ length: n }, (_, i) => tokensOf(reseeded, i).join()),
      'another seed, other tokens',
    ).not.toEqual(Array.from({ length: n }, (_, i) => tokensOf(a, i).join()));
    // row i's five tokens and their log-probs are the same at batch 1, 3 and 5, wherever the row sits
    for (const size of [1, 3, 5]) {
      const rows = Array.from({ length: size }, (_, j) => (j * 3 + size) % n);
      const r = await policy.act(
        selectRows(obs, rows, n),
        stepContext(
          rows.map((k) => keys[k]),
          rows.map((k) => steps[k]),
        ),
      );
      rows.forEach((row, j) => {
        expect(tokensOf(r, j), `row ${row} at ${j} of ${size}`).toEqual(tokensOf(a, row));
        for (const d of config.actions)
          expect(r.logp![d.name][j], `${d.name} of row ${row} at ${j} of ${size}`).toBe(a.logp![d.name][row]);
      });
    }
    await sampler.close();
  });

  it('onnxruntime-web (the in-page viewer) draws the same tokens from the same two graphs', async () => {
    ortWeb.env.wasm.numThreads = 1;
    const config = await tabletopConfig();
    const params = initParams(config, 9);
    const n = 3;
    const obs = randomObs(config, n, 10);
    const draw = () => Array.from({ length: n }, (_, i) => new Rng([9, i], 6));
    const node = await PolicySampler.create(config, params);
    const web = await PolicySampler.create(config, params, { ort: ortWeb });
    const [a, b] = [await node.act(obs, n, draw()), await web.act(obs, n, draw())];
    await node.close();
    await web.close();
    expect(b.actions).toEqual(a.actions);
    for (const d of config.actions)
      a.logpPerDim[d.name].forEach((x, i) => expect(b.logpPerDim[d.name][i]).toBeCloseTo(x, 5));
  });
});
