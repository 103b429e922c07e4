import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { EnvSpecSchema } from '../../src/core/spec.ts';
import type { BatchObs } from '../../src/env/types.ts';
import { Graph, type TypedArray } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { AGENT_SIZES } from '../../src/policy/presets.ts';
import { PolicySampler, samplerPolicy } from '../../src/policy/sampler.ts';
import { vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import {
  VLA_IO,
  type VlaConfig,
  type VlaConfigInput,
  parseVlaConfig,
  vlaForwardBuilder,
} from '../../src/policy/vla.ts';
import { stepContext } from '../../src/rollout/collect.ts';
import { type PolicySample, PolicyTrainer, obsRow } from '../../src/trainer/policy-trainer.ts';
import { checkLoss } from '../nn/gradcheck.ts';
import { policyLoss } from './fixtures.ts';

// The AutoResearch agent's interface (docs/autoresearch.md#the-agent): a text (task description + feedback) and a box of dataset
// meta-features, no camera; the action is a program of 12 token slots over the ~50-word DSL vocabulary.
const SLOTS = 12;
const VOCAB = 50;
const META = 8;
const CORPUS = [
  'classify income from census rows with 14 features',
  'regress house prices',
  'feedback last accuracy improved by 0.02 with a forest',
  'feedback the program was malformed',
];
const TOKENIZER = WordTokenizer.fromCorpus(CORPUS, { maxLength: 12 });
const SPEC = EnvSpecSchema.parse({
  id: 'autoresearch/tabular',
  observation: [
    { kind: 'text', name: 'task', maxLength: 256 },
    { kind: 'box', name: 'meta', shape: [META], low: -10, high: 10 },
  ],
  action: Array.from({ length: SLOTS }, (_, t) => ({ kind: 'discrete', name: `tok_${t}`, n: VOCAB })),
  maxEpisodeSteps: 8,
  rewardTerms: ['score'],
});

function initParams(cfg: VlaConfig, seed: number): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(cfg)(g);
  return ParamStore.init(g.params, seed);
}

function agentObs(cfg: VlaConfig, n: number, seed: number): BatchObs {
  const rng = new Rng(seed, 1);
  return {
    [cfg.instruction]: Array.from({ length: n }, (_, i) => CORPUS[(i * 7 + seed) % CORPUS.length]),
    [cfg.proprio!.name]: Float32Array.from({ length: n * cfg.proprio!.dim }, () => rng.range(-1, 1)),
  };
}

function randomTokens(cfg: VlaConfig, n: number, seed: number): Record<string, Int32Array> {
  const rng = new Rng(seed, 2);
  return Object.fromEntries(cfg.actions.map((a) => [a.name, Int32Array.from({ length: n }, () => rng.int(a.n))]));
}

const rowsOf = (obs: BatchObs, n: number, rows: number[]): BatchObs => {
  const one = rows.map((r) => obsRow(obs, n, r));
  return Object.fromEntries(
    Object.keys(obs).map((k) => {
      const v = obs[k];
      if (Array.isArray(v)) return [k, one.map((o) => (o[k] as string[])[0])];
      const size = v.length / n;
      const out = new Float32Array(rows.length * size);
      one.forEach((o, b) => out.set(o[k] as Float32Array, b * size));
      return [k, out];
    }),
  );
};

describe('autoregressive agent policy (text + box, no camera)', () => {
  const cfg = vlaConfigFromSpec(SPEC, TOKENIZER.config, AGENT_SIZES);

  it('a text+box spec builds a config without image encoder and a net whose heads take the earlier tokens', () => {
    expect(cfg.cameras).toEqual([]);
    expect(cfg.conv).toEqual([]);
    expect(cfg.imageFeatures).toBeUndefined();
    expect(cfg.proprio).toEqual({ name: 'meta', dim: META, hidden: AGENT_SIZES.proprioHidden });
    expect(cfg.autoregressive).toEqual({ embedDim: 64 });
    expect(cfg.actions.map((a) => a.name)).toEqual(Array.from({ length: SLOTS }, (_, t) => `tok_${t}`));
    const g = new Graph();
    const out = vlaForwardBuilder(cfg)(g);
    for (const [name, t] of Object.entries(out)) g.output(name, t);
    const names = g.params.map((p) => p.name);
    expect(names.some((n) => n.startsWith('vla.conv') || n.startsWith('vla.img'))).toBe(false);
    expect(names.filter((n) => n.startsWith('vla.ar.embed.'))).toEqual(
      Array.from({ length: SLOTS - 1 }, (_, t) => `vla.ar.embed.tok_${t}.table`),
    );
    const size = g.params.reduce((s, p) => s + p.shape.reduce((a, b) => a * b, 1), 0);
    console.log(`agent net (${SLOTS} slots x ${VOCAB} tokens, vocab ${TOKENIZER.vocabSize} words): ${size} parameters`);
    // the sampler graph takes the tokens of every slot but the last (which conditions nothing)
    const inputs = g.inputs.map((t) => t.name);
    expect(inputs).toContain(VLA_IO.action('tok_0'));
    expect(inputs).toContain(VLA_IO.tokens);
    expect(inputs).toContain('meta');
    // the checks of the config stay by field
    const base: VlaConfigInput = { ...cfg };
    expect(() => parseVlaConfig({ ...base, conv: [{ out: 4, k: 3, stride: 2, pad: 1 }] })).toThrow(
      /conv: an image setting, but there are no cameras/,
    );
    expect(() => parseVlaConfig({ ...base, film: 1 })).toThrow(/film: an image setting/);
    expect(() => parseVlaConfig({ ...base, cameras: ['image'] })).toThrow(/conv: at least one layer/);
    expect(() => parseVlaConfig({ ...base, cameras: ['image'], conv: [{ out: 4, k: 3, stride: 2, pad: 1 }] })).toThrow(
      /imageFeatures: required with cameras/,
    );
    expect(() => parseVlaConfig({ ...base, autoregressive: { embedDim: 0 } })).toThrow(/autoregressive\.embedDim/);
    const twoImages = {
      ...SPEC,
      observation: [
        ...SPEC.observation,
        ...['a', 'b', 'c'].map((name) => ({ kind: 'image' as const, name, shape: [8, 8, 3] as [number, number, 3] })),
      ],
    };
    expect(() => vlaConfigFromSpec(twoImages, TOKENIZER.config, AGENT_SIZES)).toThrow(
      /at most 2 image observations, found 3/,
    );
  });

  it('head t does not depend on tokens >= t, and does depend on the earlier ones', async () => {
    const sampler = await PolicySampler.create(cfg, initParams(cfg, 1));
    const n = 4;
    const obs = agentObs(cfg, n, 2);
    const a = randomTokens(cfg, n, 3);
    const base = await sampler.forward(obs, n, a);
    await expect(sampler.forward(obs, n)).rejects.toThrow(/needs the action tokens/);
    for (const t of [0, 1, 5, SLOTS - 1]) {
      // change every token from slot t on: slots 0..t keep their exact bits
      const b = Object.fromEntries(
        cfg.actions.map((d, s) => [d.name, s < t ? a[d.name] : a[d.name].map((k) => (k + 1 + s) % d.n)]),
      );
      const f = await sampler.forward(obs, n, b);
      cfg.actions.forEach((d, s) => {
        if (s <= t) expect(f.logp[d.name], `slot ${s} after changing slots >= ${t}`).toEqual(base.logp[d.name]);
        else if (s === t + 1) expect(f.logp[d.name], `slot ${s} must see slot ${t}`).not.toEqual(base.logp[d.name]);
      });
    }
    await sampler.close();
  });

  it('gradients match float64 finite differences (small agent net)', async () => {
    const tiny = parseVlaConfig({
      ...cfg,
      embedDim: 4,
      proprio: { name: 'meta', dim: 3, hidden: 4 },
      trunk: [6],
      act: 'silu',
      actions: [
        { name: 'tok_0', n: 3 },
        { name: 'tok_1', n: 4 },
        { name: 'tok_2', n: 3 },
      ],
      autoregressive: { embedDim: 5 },
    });
    const B = 3;
    const rng = new Rng(5, 3);
    const values: Record<string, TypedArray> = {
      [VLA_IO.tokens]: TOKENIZER.encodeBatch(agentObs(tiny, B, 4).task as string[]),
      meta: Float64Array.from({ length: B * 3 }, () => rng.range(-1, 1)),
      adv: Float64Array.from({ length: B }, () => rng.normal()),
    };
    for (const [name, t] of Object.entries(randomTokens(tiny, B, 6))) values[VLA_IO.action(name)] = t;
    const r = await checkLoss((g) => policyLoss(g, tiny, B).loss, values, { diff: ['meta'] });
    console.log(
      `autoregressive policy loss FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked} elements`,
    );
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it("the sampler samples slot by slot; its log-probs are the training graph's for the sampled tokens", async () => {
    const params = initParams(cfg, 7);
    const sampler = await PolicySampler.create(cfg, params);
    const B = 16;
    const obs = agentObs(cfg, B, 8);
    const acted = await sampler.act(obs, B, new Rng(9));
    // teacher forcing with the chosen tokens gives the same bits per slot
    const forced = await sampler.forward(obs, B, acted.actions);
    for (const a of cfg.actions) {
      expect(Float32Array.from(acted.actions[a.name], (k, i) => forced.logp[a.name][i * a.n + k])).toEqual(
        acted.logpPerDim[a.name],
      );
    }
    const rows: PolicySample[] = Array.from({ length: B }, (_, i) => ({
      obs: obsRow(obs, B, i),
      tokens: Object.fromEntries(cfg.actions.map((a) => [a.name, acted.actions[a.name][i]])),
      behaviourLogp: acted.logp[i],
      refLogp: acted.logp[i],
      advantage: i % 2 ? 1 : -1,
      weight: 1,
    }));
    const trainer = await PolicyTrainer.create(cfg, params, { batch: B, lr: 1e-2 });
    const gap = await trainer.logpGap(rows);
    const r = await trainer.step(rows);
    console.log(
      `autoregressive: trainer vs sampler joint log-prob over ${SLOTS} slots: logpGap ${gap.toExponential(2)}, in the step ${r.logpGap.toExponential(2)}; per-slot entropy sum ${r.entropy.toFixed(3)} (uniform: ${(SLOTS * Math.log(VOCAB)).toFixed(3)})`,
    );
    expect(gap).toBeLessThan(1e-5);
    expect(r.logpGap).toBeLessThan(1e-5);
    // after the update: a rebuilt sampler agrees again, with padding rows
    await sampler.update(trainer.params());
    const again = await sampler.act(
      rowsOf(
        obs,
        B,
        Array.from({ length: B - 5 }, (_, i) => i),
      ),
      B - 5,
      null,
      0,
    );
    const rows2 = rows.slice(0, B - 5).map((s, i) => ({
      ...s,
      tokens: Object.fromEntries(cfg.actions.map((a) => [a.name, again.actions[a.name][i]])),
      behaviourLogp: again.logp[i],
    }));
    expect(await trainer.logpGap(rows2)).toBeLessThan(1e-5);
    await trainer.close();
    await sampler.close();
  });

  it('samples deterministically per (seed, episode key, step), whatever the batch', async () => {
    const sampler = await PolicySampler.create(cfg, initParams(cfg, 11));
    const policy = samplerPolicy(sampler, { seed: 3, temperature: 1 });
    const n = 8;
    const obs = agentObs(cfg, n, 12);
    const keys = Array.from({ length: n }, (_, i) => 100 + i);
    const steps = Array.from({ length: n }, (_, i) => i % 3);
    const a = await policy.act(obs, stepContext(keys, steps));
    const b = await policy.act(obs, stepContext(keys, steps));
    expect(a.actions).toEqual(b.actions);
    expect(a.logp).toEqual(b.logp);
    const c = await policy.act(
      obs,
      stepContext(
        keys.map((k) => k + 50),
        steps,
      ),
    );
    const program = (x: typeof a, i: number) => cfg.actions.map((d) => (x.actions[d.name] as Int32Array)[i]).join(',');
    for (let i = 0; i < n; i++) expect(program(c, i), `env ${i}: other keys, other program`).not.toBe(program(a, i));
    // row i's program and log-probs are the same at batch 1, 3 and 8, wherever the row sits
    for (const size of [1, 3]) {
      for (let at = 0; at + size <= n; at += size) {
        const rows = Array.from({ length: size }, (_, j) => (at + j * 5) % n);
        const r = await policy.act(
          rowsOf(obs, n, rows),
          stepContext(
            rows.map((k) => keys[k]),
            rows.map((k) => steps[k]),
          ),
        );
        rows.forEach((row, j) => {
          expect(program(r, j), `row ${row} at ${j} of ${size}`).toBe(program(a, row));
          for (const d of cfg.actions)
            expect(r.logp![d.name][j], `${d.name} of row ${row} at ${j} of ${size}`).toBe(a.logp![d.name][row]);
        });
      }
    }
    await sampler.close();
  });

  it('PPO on a toy reward over programs learns to copy tok_0 into tok_1: beyond any independent-head policy', async () => {
    // 3 slots of 5 tokens. A member earns 1 when tok_1 == tok_0, scaled down when its tok_0 is more
    // common in its group than 1/5 (min(1, G / (5 count))): collapsing on one program earns 0.2, copying
    // from a spread tok_0 earns ~1. The metric is exact, not sampled: mean_k p(tok_1 = k | tok_0 = k),
    // exactly 1/5 for every policy whose heads are independent (the p(tok_1 = k) sum to 1), so only
    // heads that condition on tok_0 can exceed it. A strong entropy bonus (per-slot entropies given the
    // sampled prefix) keeps tok_0 spread while tok_1 learns to follow it.
    const toy = parseVlaConfig({
      ...cfg,
      actions: [
        { name: 'tok_0', n: 5 },
        { name: 'tok_1', n: 5 },
        { name: 'tok_2', n: 5 },
      ],
      trunk: [32],
      autoregressive: { embedDim: 32 },
    });
    const G = 40;
    const params = initParams(toy, 21);
    const sampler = await PolicySampler.create(toy, params);
    const trainer = await PolicyTrainer.create(toy, params, {
      batch: G,
      lr: 1e-2,
      coefficients: { klCoef: 0, entropyCoef: 0.3 },
    });
    const probe = agentObs(toy, 1, 0);
    const copy = async (): Promise<{ copy: number; plain: number }> => {
      const k = Int32Array.from({ length: 5 }, (_, i) => i);
      const f = await sampler.forward(rowsOf(probe, 1, [0, 0, 0, 0, 0]), 5, {
        tok_0: k,
        tok_1: new Int32Array(5),
        tok_2: new Int32Array(5),
      });
      let c = 0;
      let plain = 0;
      for (let i = 0; i < 5; i++) {
        const p1 = Math.exp(f.logp.tok_1[i * 5 + i]);
        c += p1 / 5;
        plain += Math.exp(f.logp.tok_0[i * 5 + i]) * p1;
      }
      return { copy: c, plain };
    };
    const before = await copy();
    const obs = rowsOf(probe, 1, Array(G).fill(0));
    let first = 0;
    let last = 0;
    const iterations = 50;
    for (let it = 0; it < iterations; it++) {
      const a = await sampler.act(
        obs,
        G,
        Array.from({ length: G }, (_, i) => new Rng([it, i], 7)),
      );
      const count = new Map<number, number>();
      for (const k of a.actions.tok_0) count.set(k, (count.get(k) ?? 0) + 1);
      const rewards = Array.from(a.actions.tok_0, (k, i) =>
        k === a.actions.tok_1[i] ? Math.min(1, G / (5 * count.get(k)!)) : 0,
      );
      const mean = rewards.reduce((s, x) => s + x, 0) / G;
      if (it < 5) first += mean / 5;
      if (it >= iterations - 5) last += mean / 5;
      const std = Math.sqrt(rewards.reduce((s, x) => s + (x - mean) ** 2, 0) / G);
      const rows: PolicySample[] = rewards.map((r, i) => ({
        obs: obsRow(obs, G, i),
        tokens: { tok_0: a.actions.tok_0[i], tok_1: a.actions.tok_1[i], tok_2: a.actions.tok_2[i] },
        behaviourLogp: a.logp[i],
        refLogp: a.logp[i],
        advantage: (r - mean) / (std + 1e-4),
        weight: 1,
      }));
      for (let e = 0; e < 2; e++) {
        const s = await trainer.step(rows);
        if (e === 0) expect(s.logpGap).toBeLessThan(1e-5);
      }
      await sampler.update(trainer.params());
    }
    const after = await copy();
    console.log(
      `toy PPO (${iterations} iterations x ${G} samples, 2 steps each): mean reward ${first.toFixed(3)} (first 5) -> ${last.toFixed(3)} (last 5); mean_k p(tok_1 = k | tok_0 = k) ${before.copy.toFixed(3)} -> ${after.copy.toFixed(3)} (independent heads: exactly 0.200); P(tok_1 = tok_0) ${before.plain.toFixed(3)} -> ${after.plain.toFixed(3)}`,
    );
    expect(Math.abs(before.copy - 0.2)).toBeLessThan(0.02);
    expect(after.copy).toBeGreaterThan(0.6);
    expect(last).toBeGreaterThan(first + 0.3);
    await trainer.close();
    await sampler.close();
  });
});
