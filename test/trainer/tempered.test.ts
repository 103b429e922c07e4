// Tempered rollouts are scored by the policy that drew them: at a rollout temperature T the sampler
// stores log softmax(logp / T) of the drawn tokens and the loss graph scores the same tempered policy,
// so a fresh row's PPO ratio is 1 and the expected gradient is that of the tempered policy's return.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { backward } from '../../src/nn/grad.ts';
import { Graph } from '../../src/nn/ir.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { floatData, Session, tensor } from '../../src/nn/runtime.ts';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { VLA_IO, type VlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { ppoLossBuilder } from '../../src/trainer/loss.ts';
import { type PolicySample, PolicyTrainer, obsRow, ppoFeeds } from '../../src/trainer/policy-trainer.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import { randomObs, tinyConfig } from '../policy/fixtures.ts';

const T = 1.6;

function initParams(cfg: VlaConfig, seed: number, float: 'float32' | 'float64' = 'float32'): ParamStore {
  const g = new Graph(float);
  vlaForwardBuilder(cfg, 1)(g);
  return ParamStore.init(g.params, seed, float);
}

describe('tempered rollouts', () => {
  it(`at temperature ${T} a fresh row's ratio is 1 (the untempered loss's is not)`, async () => {
    const cfg = tinyConfig({ imageSize: [16, 16] });
    const params = initParams(cfg, 3);
    // sharpen the heads so that temperature matters
    for (const name of params.names.filter((n) => n.startsWith('vla.head.')))
      params.set(
        name,
        params.get(name).map((v) => v * 40),
      );
    const B = 16;
    const sampler = await PolicySampler.create(cfg, params);
    const obs = randomObs(cfg, B, 4);
    const a = await sampler.act(obs, B, new Rng(4, 5), T);
    await sampler.close();
    const rows: PolicySample[] = Array.from({ length: B }, (_, i) => ({
      obs: obsRow(obs, B, i),
      tokens: Object.fromEntries(cfg.actions.map((d) => [d.name, a.actions[d.name][i]])),
      behaviourLogp: a.logp[i],
      refLogp: a.logp[i],
      advantage: i % 2 ? 1 : -1,
      weight: 1,
    }));
    const tempered = await PolicyTrainer.create(cfg, params, { batch: B, lr: 1e-2, temperature: T });
    const plain = await PolicyTrainer.create(cfg, params, { batch: B, lr: 1e-2 });
    const gap = await tempered.logpGap(rows);
    const oldGap = await plain.logpGap(rows);
    const step = await tempered.step(rows);
    expect(gap).toBeLessThan(1e-5);
    expect(step.clipFraction).toBe(0);
    expect(Math.abs(step.approxKl)).toBeLessThan(1e-6);
    expect(oldGap).toBeGreaterThan(0.05);
    await tempered.close();
    await plain.close();
  });

  it('on a bandit, the expected gradient of the loss is the gradient of the tempered return', async () => {
    // One observation; every joint token (dx, grip) a row weighted by its tempered probability, with
    // advantage r - J: the loss's gradient is then -dJ/dθ exactly, J = Σ π_T(a) r(a).
    const cfg = tinyConfig({ imageSize: [16, 16] });
    const params = initParams(cfg, 5, 'float64');
    for (const name of params.names.filter((n) => n.startsWith('vla.head.')))
      params.set(
        name,
        params.get(name).map((v) => v * 60),
      );
    const obs = randomObs(cfg, 1, 6);
    const feedsOf = (g: Graph) => Object.fromEntries(g.params.map((p) => [p.name, p]));
    // the model's own per-dimension log-probs at this observation (float64 forward)
    const fg = new Graph('float64');
    const outs = vlaForwardBuilder(cfg, 1)(fg);
    for (const [k, t] of Object.entries(outs)) fg.output(k, t);
    const fs = await Session.create(writeOnnx(fg), {}, 'float64');
    const tokenizer = new WordTokenizer(cfg.tokenizer);
    const probe: PolicySample = {
      obs: obsRow(obs, 1, 0),
      tokens: { dx: 0, grip: 0 },
      behaviourLogp: 0,
      refLogp: 0,
      advantage: 0,
      weight: 1,
    };
    const coef = { clip: 0.2, klCoef: 0, entropyCoef: 0 };
    const base = ppoFeeds(cfg, tokenizer, [probe], 1, coef, 'float64');
    const pf = Object.fromEntries(
      Object.keys(feedsOf(fg)).map((n) => [n, tensor('float64', params.get(n), params.info(n).shape)]),
    );
    const lp = await fs.run({ ...Object.fromEntries(fg.inputs.map((i) => [i.name, base[i.name]])), ...pf });
    await fs.close();
    const tempered = (name: string): number[] => {
      const v = Array.from(floatData(lp[VLA_IO.logp(name)]));
      const e = v.map((x) => Math.exp(x / T));
      const z = e.reduce((s, x) => s + x, 0);
      return e.map((x) => x / z);
    };
    const pDx = tempered('dx');
    const pGrip = tempered('grip');
    const reward = (dx: number, grip: number) => [0.1, 0.7, 0.3][dx] + [0, 0.25][grip];
    let J = 0;
    for (let i = 0; i < 3; i++) for (let j = 0; j < 2; j++) J += pDx[i] * pGrip[j] * reward(i, j);
    const rows: PolicySample[] = [];
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 2; j++) {
        const logp = Math.log(pDx[i]) + Math.log(pGrip[j]);
        rows.push({
          ...probe,
          tokens: { dx: i, grip: j },
          behaviourLogp: logp,
          refLogp: logp,
          advantage: reward(i, j) - J,
          weight: pDx[i] * pGrip[j],
        });
      }
    const g = new Graph('float64');
    const { loss } = ppoLossBuilder(cfg, rows.length, T)(g);
    const bias = g.params.find((p) => p.name.startsWith('vla.head.dx') && p.tensor.rank === 1)!;
    const [grad] = backward(loss, [bias.tensor]);
    g.output('grad', grad);
    const s = await Session.create(writeOnnx(g), {}, 'float64');
    const feeds = ppoFeeds(cfg, tokenizer, rows, rows.length, coef, 'float64');
    for (const p of g.params) feeds[p.name] = tensor('float64', params.get(p.name), params.info(p.name).shape);
    const got = Array.from(floatData((await s.run(feeds)).grad));
    await s.close();
    // dJ/d(bias_k) = (1/T) π_T(k) (E[r | dx = k] - J)
    const analytic = pDx.map((p, k) => (p * (pGrip[0] * reward(k, 0) + pGrip[1] * reward(k, 1) - J)) / T);
    got.forEach((v, k) => expect(-v).toBeCloseTo(analytic[k], 8));
    expect(Math.max(...analytic.map(Math.abs))).toBeGreaterThan(1e-3);
  });
});
