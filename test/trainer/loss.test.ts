import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { backward } from '../../src/nn/grad.ts';
import { Graph, type TypedArray } from '../../src/nn/ir.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { Session, type Feeds, floatData } from '../../src/nn/runtime.ts';
import type { VlaConfig } from '../../src/policy/vla.ts';
import { PPO_IO, type PpoCoefficients, ppoLossBuilder } from '../../src/trainer/loss.ts';
import { type PolicySample, obsRow, ppoFeeds } from '../../src/trainer/policy-trainer.ts';
import { checkLoss, randValues } from '../nn/gradcheck.ts';
import { TOKENIZER, randomActions, randomObs, tinyConfig } from '../policy/fixtures.ts';

/** Rows on random observations and tokens; log-probs and advantages are set by each test. */
function samples(cfg: VlaConfig, n: number, seed: number): PolicySample[] {
  const obs = randomObs(cfg, n, seed);
  const acts = randomActions(cfg, n, seed);
  return Array.from({ length: n }, (_, i) => ({
    obs: obsRow(obs, n, i),
    tokens: Object.fromEntries(cfg.actions.map((a) => [a.name, acts[a.name][i]])),
    behaviourLogp: 0,
    refLogp: 0,
    advantage: 0,
    weight: 1,
  }));
}

function values(feeds: Feeds): Record<string, TypedArray> {
  return Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, t.data as TypedArray]));
}

/** checkLoss's parameter values: Rng(7, 99) draws randValues per parameter in declaration order. */
function checkLossParams(cfg: VlaConfig, batch: number): Map<string, Float64Array> {
  const g = new Graph('float64');
  ppoLossBuilder(cfg, batch)(g);
  const rng = new Rng(7, 99);
  return new Map(g.params.map((p) => [p.name, randValues(rng, p.tensor.size)]));
}

/** Loss, per-row log-prob and gradients (parameters, then the behaviour log-probs) in float64. */
async function evaluate(cfg: VlaConfig, batch: number, feeds: Feeds, params: Map<string, Float64Array>) {
  const g = new Graph('float64');
  const { loss, metrics } = ppoLossBuilder(cfg, batch)(g);
  g.output('loss', loss);
  g.output('logp', metrics![PPO_IO.logp]);
  g.output('clip_fraction', metrics![PPO_IO.clipFraction]);
  g.output('entropy', metrics![PPO_IO.entropy]);
  const wrt = [...g.params.map((p) => p.tensor), g.inputs.find((t) => t.name === PPO_IO.behaviourLogp)!];
  backward(loss, wrt).forEach((t, i) => g.output(`g${i}`, t));
  const s = await Session.create(writeOnnx(g, { initializers: params }), {}, 'float64');
  const out = await s.run(feeds);
  await s.close();
  return {
    loss: floatData(out.loss)[0],
    logp: Float64Array.from(floatData(out.logp)),
    clipFraction: floatData(out.clip_fraction)[0],
    entropy: floatData(out.entropy)[0],
    grads: wrt.map((_, i) => Float64Array.from(floatData(out[`g${i}`]))),
  };
}

/** Sets each row's behaviour log-prob so that its ratio is ratios[i] under `logp`. */
function placeRatios(rows: PolicySample[], logp: Float64Array, ratios: number[]): void {
  rows.forEach((r, i) => (r.behaviourLogp = logp[i] - Math.log(ratios[i])));
}

describe('PPO-clipped loss with k3 KL and entropy', () => {
  it('whole loss (clip, KL, entropy, weights): gradients match float64 finite differences', async () => {
    const cfg = tinyConfig();
    const B = 7;
    const coef: PpoCoefficients = { clip: 0.2, klCoef: 0.3, entropyCoef: 0.05 };
    const params = checkLossParams(cfg, B);
    const rows = samples(cfg, B, 11);
    const logp = (await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params)).logp;
    // inside the range, below it and above it, with advantages of both signs: rows 2 and 5 are clipped
    // (beyond the range in their advantage's direction), rows 1 and 4 are beyond it but unclipped.
    placeRatios(rows, logp, [0.9, 0.5, 0.7, 1.1, 1.35, 1.6, 1.05]);
    const adv = [0.5, 1, -0.8, -1.5, -0.6, 1.2, 0.7];
    const weight = [1, 0.5, 1.5, 1, 2, 1, 0];
    const rng = new Rng(3, 1);
    rows.forEach((r, i) =>
      Object.assign(r, { advantage: adv[i], weight: weight[i], refLogp: logp[i] + rng.range(-0.5, 0.5) }),
    );
    const feeds = ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64');
    // the value against the formula, computed here from the graph's log-probs and entropy
    const ev = await evaluate(cfg, B, feeds, params);
    const W = weight.reduce((a, b) => a + b, 0);
    const wmean = (f: (i: number) => number): number => rows.reduce((s, _, i) => s + weight[i] * f(i), 0) / W;
    const ratio = (i: number): number => Math.exp(ev.logp[i] - rows[i].behaviourLogp);
    const surrogate = wmean((i) => Math.min(ratio(i) * adv[i], Math.min(Math.max(ratio(i), 0.8), 1.2) * adv[i]));
    const kl = wmean((i) => Math.exp(rows[i].refLogp - ev.logp[i]) - (rows[i].refLogp - ev.logp[i]) - 1);
    expect(ev.loss).toBeCloseTo(-surrogate + 0.3 * kl - 0.05 * ev.entropy, 12);
    expect(ev.clipFraction).toBeCloseTo((0.5 + 1.5 + 2 + 1) / W, 12);
    const diff = ['proprio', PPO_IO.behaviourLogp, PPO_IO.refLogp, PPO_IO.clip, PPO_IO.klCoef, PPO_IO.entropyCoef];
    const r = await checkLoss((g) => ppoLossBuilder(cfg, B)(g).loss, values(feeds), { diff, sample: 6 });
    console.log(`PPO loss FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked} elements`);
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('a row beyond the clip in its advantage direction gets exactly zero gradient; the other side does not', async () => {
    const cfg = tinyConfig();
    const B = 4;
    const coef: PpoCoefficients = { clip: 0.2, klCoef: 0, entropyCoef: 0 };
    const params = checkLossParams(cfg, B);
    const rows = samples(cfg, B, 12);
    const logp = (await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params)).logp;
    // rows 0, 1: ratio 1.5 with A > 0 and 0.6 with A < 0 (clipped); rows 2, 3: the mirror cases
    placeRatios(rows, logp, [1.5, 0.6, 0.6, 1.5]);
    [1, -1, 1, -1].forEach((a, i) => (rows[i].advantage = a));
    for (let k = 0; k < B; k++) {
      rows.forEach((r, i) => (r.weight = i === k ? 1 : 0));
      const { grads } = await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params);
      const norm = Math.hypot(...grads.flatMap((g) => [...g]));
      if (k < 2) expect(norm, `row ${k}`).toBe(0);
      else expect(norm, `row ${k}`).toBeGreaterThan(1e-3);
    }
  });

  it('clipHigh: a row with A > 0 at ratio 1.25 keeps its gradient under clipHigh 0.28, not under 0.2', async () => {
    const cfg = tinyConfig();
    const B = 3;
    const params = checkLossParams(cfg, B);
    const rows = samples(cfg, B, 14);
    const symmetric: PpoCoefficients = { clip: 0.2, klCoef: 0, entropyCoef: 0 };
    const logp = (await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, symmetric, 'float64'), params)).logp;
    // row 0: 1.25 with A > 0 (inside 1 + 0.28, outside 1 + 0.2); row 1: 0.75 with A < 0 (outside 1 - 0.2
    // either way); row 2: 1.35 with A > 0 (outside both)
    placeRatios(rows, logp, [1.25, 0.75, 1.35]);
    [1, -1, 1].forEach((a, i) => (rows[i].advantage = a));
    const gradNorm = async (coef: PpoCoefficients, k: number) => {
      rows.forEach((r, i) => (r.weight = i === k ? 1 : 0));
      const { grads } = await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params);
      return Math.hypot(...grads.flatMap((g) => [...g]));
    };
    const high = { ...symmetric, clipHigh: 0.28 };
    expect(await gradNorm(symmetric, 0)).toBe(0);
    expect(await gradNorm(high, 0)).toBeGreaterThan(1e-3);
    expect(await gradNorm(high, 1)).toBe(0);
    expect(await gradNorm(high, 2)).toBe(0);
    rows.forEach((r) => (r.weight = 1));
    const fraction = async (coef: PpoCoefficients) =>
      (await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params)).clipFraction;
    expect(await fraction(symmetric)).toBeCloseTo(1, 12);
    expect(await fraction(high)).toBeCloseTo(2 / 3, 12);
  });

  it('the KL term is 0 when the reference is the current policy and positive otherwise', async () => {
    const cfg = tinyConfig();
    const B = 5;
    const coef: PpoCoefficients = { clip: 0.2, klCoef: 1, entropyCoef: 0 };
    const params = checkLossParams(cfg, B);
    const rows = samples(cfg, B, 13);
    const base = await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params);
    rows.forEach((r, i) => Object.assign(r, { behaviourLogp: base.logp[i], refLogp: base.logp[i] }));
    const same = await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params);
    const noKl = await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, { ...coef, klCoef: 0 }, 'float64'), params);
    expect(same.loss).toBe(noKl.loss);
    rows.forEach((r, i) => (r.refLogp = base.logp[i] + (i % 2 ? 0.3 : -0.4)));
    const other = await evaluate(cfg, B, ppoFeeds(cfg, TOKENIZER, rows, B, coef, 'float64'), params);
    const k3 = (d: number): number => Math.exp(d) - d - 1;
    const want = [0, 1, 2, 3, 4].reduce((s, i) => s + k3(i % 2 ? 0.3 : -0.4), 0) / B;
    expect(other.loss - noKl.loss).toBeCloseTo(want, 10);
    expect(want).toBeGreaterThan(0);
  });
});
