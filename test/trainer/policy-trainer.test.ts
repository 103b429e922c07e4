import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { type VlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { type PolicySample, PolicyTrainer, obsRow } from '../../src/trainer/policy-trainer.ts';
import { randomObs, tinyConfig } from '../policy/fixtures.ts';

function initParams(cfg: VlaConfig, seed: number): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(cfg)(g);
  return ParamStore.init(g.params, seed);
}

/** Rows sampled by a PolicySampler with `params` on random observations (behaviour = reference). */
async function sampled(cfg: VlaConfig, params: ParamStore, n: number, seed: number): Promise<PolicySample[]> {
  const sampler = await PolicySampler.create(cfg, params);
  const obs = randomObs(cfg, n, seed);
  const a = await sampler.act(obs, n, new Rng(seed, 5));
  await sampler.close();
  return Array.from({ length: n }, (_, i) => ({
    obs: obsRow(obs, n, i),
    tokens: Object.fromEntries(cfg.actions.map((d) => [d.name, a.actions[d.name][i]])),
    behaviourLogp: a.logp[i],
    refLogp: a.logp[i],
    advantage: 0,
    weight: 1,
  }));
}

const sameBits = (a: ParamStore, b: ParamStore): boolean =>
  a.names.every((n) => Buffer.from(a.get(n).buffer).equals(Buffer.from(b.get(n).buffer)));

describe('PolicyTrainer', () => {
  it.each([
    ['attention pooling, silu', tinyConfig({ imageSize: [16, 16] })],
    [
      'FiLM, keypoints, relu (like the base VLA)',
      tinyConfig({ imageSize: [16, 16], film: 2, keypoints: 'replace', act: 'relu' }),
    ],
  ])('trainer and sampler log-probs of the sampled tokens agree within 1e-5 (%s)', async (what, cfg) => {
    const params = initParams(cfg, 1);
    const B = 16;
    const rows = await sampled(cfg, params, B, 2);
    const trainer = await PolicyTrainer.create(cfg, params, { batch: B, lr: 1e-2 });
    const gap = await trainer.logpGap(rows);
    const r = await trainer.step(rows.map((s, i) => ({ ...s, advantage: i % 2 ? 1 : -1 })));
    console.log(
      `${what}: log-prob gap vs PolicySampler: logpGap ${gap.toExponential(2)}, in the step ${r.logpGap.toExponential(2)} (${B} rows)`,
    );
    expect(gap).toBeLessThan(1e-5);
    expect(r.logpGap).toBeLessThan(1e-5);
    // after the update, a sampler rebuilt from the new weights agrees again
    const after = await sampled(cfg, trainer.params(), B - 5, 3);
    const gap2 = await trainer.logpGap(after);
    console.log(`${what}: after one update, ${B - 5} rows with padding: logpGap ${gap2.toExponential(2)}`);
    expect(gap2).toBeLessThan(1e-5);
    await trainer.close();
  });

  it('a positive advantage raises the sampled token log-prob, a negative one lowers it', async () => {
    const cfg = tinyConfig();
    const params = initParams(cfg, 4);
    const [row] = await sampled(cfg, params, 1, 5);
    const coefficients = { klCoef: 0, entropyCoef: 0 };
    for (const sign of [1, -1]) {
      const trainer = await PolicyTrainer.create(cfg, params, { batch: 4, lr: 3e-3, coefficients });
      const sample = { ...row, advantage: sign };
      const start = (await trainer.logp([sample]))[0];
      for (let s = 0; s < 8; s++) await trainer.step([sample]);
      const end = (await trainer.logp([sample]))[0];
      console.log(`advantage ${sign}: log-prob ${start.toFixed(4)} -> ${end.toFixed(4)}`);
      expect(sign * (end - start)).toBeGreaterThan(0.05);
      await trainer.close();
    }
  });

  it('padding rows (weight 0) change nothing: bit-identical updates whatever they hold', async () => {
    const cfg = tinyConfig();
    const params = initParams(cfg, 6);
    const rows = (await sampled(cfg, params, 6, 7)).map((s, i) => ({
      ...s,
      advantage: (i % 3) - 1,
      refLogp: s.behaviourLogp - 0.1,
    }));
    const run = async (batch: number, data: PolicySample[]) => {
      const t = await PolicyTrainer.create(cfg, params, { batch, lr: 1e-2 });
      const r = await t.step(data);
      const p = t.params();
      await t.close();
      return { r, p };
    };
    const padded = await run(6, rows.slice(0, 4));
    const garbage = await run(6, [
      ...rows.slice(0, 4),
      ...rows.slice(4).map((s) => ({ ...s, advantage: 9, weight: 0 })),
    ]);
    expect(garbage.r.loss).toBe(padded.r.loss);
    expect(garbage.r.gradNorm).toBe(padded.r.gradNorm);
    expect(sameBits(garbage.p, padded.p)).toBe(true);
    // a session of exactly the real rows: the same loss and gradient (up to float32 summation order)
    const exact = await run(4, rows.slice(0, 4));
    expect(exact.r.loss).toBeCloseTo(padded.r.loss, 6);
    expect(exact.r.gradNorm / padded.r.gradNorm).toBeCloseTo(1, 5);
    console.log(`B = 4 vs 4 + 2 padding: params bit-identical ${sameBits(exact.p, padded.p)}`);
  });

  it('reports KL 0 against itself and > 0 against another reference; rejects bad rows by field', async () => {
    const cfg = tinyConfig();
    const params = initParams(cfg, 8);
    const rows = await sampled(cfg, params, 5, 9);
    const trainer = await PolicyTrainer.create(cfg, params, { batch: 5, lr: 0 });
    const own = await trainer.logp(rows);
    const self = await trainer.step(rows.map((s, i) => ({ ...s, refLogp: own[i] })));
    expect(self.kl).toBe(0);
    // another policy's log-probs of the same tokens on the same observations
    const other = await PolicySampler.create(cfg, initParams(cfg, 99));
    const f = await other.forward(randomObs(cfg, 5, 9), 5);
    await other.close();
    const refLogp = rows.map((s, i) =>
      cfg.actions.reduce((sum, a) => sum + f.logp[a.name][i * a.n + s.tokens[a.name]], 0),
    );
    const vsOther = await trainer.step(rows.map((s, i) => ({ ...s, refLogp: refLogp[i] })));
    console.log(`KL to itself ${self.kl}, to another policy ${vsOther.kl.toExponential(3)}`);
    expect(vsOther.kl).toBeGreaterThan(1e-4);
    await expect(trainer.step([{ ...rows[0], tokens: { ...rows[0].tokens, dx: 7 } }])).rejects.toThrow(
      /row 0 tokens\.dx = 7/,
    );
    await expect(trainer.step([rows[0], { ...rows[1], weight: -1 }])).rejects.toThrow(/row 1 weight/);
    await expect(trainer.step(Array(6).fill(rows[0]))).rejects.toThrow(/6 rows for a batch of 5/);
    await trainer.close();
  });

  it('resumes exactly from exported parameters and optimizer state', async () => {
    const cfg = tinyConfig();
    const params = initParams(cfg, 10);
    const rows = (await sampled(cfg, params, 3, 11)).map((s, i) => ({ ...s, advantage: i - 1 }));
    const opts = { batch: 4, lr: 1e-2, weightDecay: 0.01 };
    const straight = await PolicyTrainer.create(cfg, params, opts);
    for (let s = 0; s < 4; s++) await straight.step(rows);
    const first = await PolicyTrainer.create(cfg, params, opts);
    for (let s = 0; s < 2; s++) await first.step(rows);
    const second = await PolicyTrainer.create(cfg, first.params(), opts);
    second.importOptimizer(first.exportOptimizer());
    for (let s = 0; s < 2; s++) await second.step(rows);
    expect(second.stepCount).toBe(4);
    expect(sameBits(second.params(), straight.params())).toBe(true);
    for (const t of [straight, first, second]) await t.close();
  });
});
