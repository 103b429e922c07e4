// Role pooling of the instruction (VlaConfig `roles`): position embeddings and K attention queries keep the
// object and the target apart, where the masked mean (the shipped keypoints16 base) sees a bag of words.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ortWeb from 'onnxruntime-web';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { Graph, type TypedArray } from '../../src/nn/ir.ts';
import { loadModel } from '../../src/nn/modelfile.ts';
import { readOnnx } from '../../src/nn/onnx.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { type Feeds, tensor } from '../../src/nn/runtime.ts';
import { type BcDataset, BcTrainer } from '../../src/policy/bc.ts';
import { loadPolicy, savePolicy } from '../../src/policy/model.ts';
import { POLICY_KIND } from '../../src/policy/model-bytes.ts';
import { PRETRAIN_SIZES } from '../../src/policy/presets.ts';
import { PolicySampler, policyFeeds } from '../../src/policy/sampler.ts';
import { WordTokenizer } from '../../src/policy/tokenizer.ts';
import {
  VLA_IO,
  type VlaConfig,
  type VlaConfigInput,
  parseVlaConfig,
  vlaForwardBuilder,
} from '../../src/policy/vla.ts';
import { checkLoss } from '../nn/gradcheck.ts';
import { TOKENIZER, policyLoss, randomActions, randomObs, tinyConfig } from './fixtures.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const SWAPPED = ['stack the blue cube on the green cube', 'stack the green cube on the blue cube'];

/** The config of the base shipped before role pooling (keypoints16, mean pooling) less the legacy
 *  `valueHead` key. */
async function baseConfig(): Promise<Record<string, unknown>> {
  const { valueHead: _, ...config } = JSON.parse(await readFile('test/fixtures/legacy/vla-base.json', 'utf8')).config;
  return config;
}

function initParams(config: VlaConfig, seed: number): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return ParamStore.init(g.params, seed);
}

function paramCount(config: VlaConfig): number {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return g.params.reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
}

/** Log-probabilities of the two swapped instructions on one image: [row 0, row 1] per action dimension. */
async function swappedLogp(config: VlaConfig, params: ParamStore): Promise<[number[], number[]]> {
  const obs = randomObs(config, 2, 7);
  for (const cam of config.cameras) {
    const img = obs[cam] as Uint8Array;
    img.copyWithin(img.length / 2, 0, img.length / 2); // both rows see the same image
  }
  if (config.proprio) (obs[config.proprio.name] as Float32Array).fill(0.25);
  obs[config.instruction] = [...SWAPPED];
  const s = await PolicySampler.create(config, params);
  const f = await s.forward(obs, 2);
  await s.close();
  const rows: [number[], number[]] = [[], []];
  for (const a of config.actions)
    for (const r of [0, 1]) rows[r].push(...f.logp[a.name].subarray(r * a.n, (r + 1) * a.n));
  return rows;
}

describe('role pooling of the instruction', () => {
  it('mean pooling (keypoints16) cannot tell "blue on green" from "green on blue"; roles16 can', async () => {
    const base = parseVlaConfig((await baseConfig()) as VlaConfigInput);
    expect(base.pooling).toBe('mean');
    const gap = (x: number[], y: number[]): number => Math.max(...x.map((v, i) => Math.abs(v - y[i])));
    const [a, b] = await swappedLogp(base, initParams(base, 3));
    // the flaw: the same bag of words, so the same distribution (up to the order the MatMul sums the words in)
    expect(gap(a, b)).toBeLessThan(1e-6);
    const { proprioHidden: _, ...roles16 } = PRETRAIN_SIZES.roles16;
    const cfg = parseVlaConfig({ ...base, ...roles16 });
    expect(cfg.roles).toEqual({ queries: 2, film: 'concat' });
    const [c, d] = await swappedLogp(cfg, initParams(cfg, 3));
    console.log(`swapped instructions, max |logp difference|: mean ${gap(a, b)}, roles ${gap(c, d)}`);
    expect(gap(c, d)).toBeGreaterThan(1e-4);
    console.log(`parameters: keypoints16 ${paramCount(base)}, roles16 ${paramCount(cfg)} (vocabulary 40, 12 words)`);
  });

  it('roles16 is keypoints16 with role pooling, and keypoints16 keeps its old config', () => {
    const { pooling, roles, ...rest } = PRETRAIN_SIZES.roles16;
    expect(rest).toEqual(PRETRAIN_SIZES.keypoints16);
    expect([pooling, roles]).toEqual(['roles', { queries: 2 }]);
    expect('roles' in PRETRAIN_SIZES.keypoints16).toBe(false);
    expect('pooling' in PRETRAIN_SIZES.keypoints16).toBe(false);
  });

  it('old configs parse and re-serialise unchanged; the keypoints16 base sidecar round-trips byte for byte', async () => {
    const config = await baseConfig();
    const parsed = parseVlaConfig(config as VlaConfigInput);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(config));
    expect('roles' in parsed).toBe(false);
    expect('roles' in tinyConfig()).toBe(false);
    // models/tiny-policy (no legacy keys) saved again from what loads: the same sidecar and ONNX bytes
    const loaded = await loadPolicy('models/tiny-policy.onnx');
    const raw = await loadModel('models/tiny-policy.onnx', POLICY_KIND);
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-roles-'));
    dirs.push(dir);
    const path = join(dir, 'tiny-policy.onnx');
    await savePolicy(path, loaded.config, loaded.params, {
      provenance: raw.sidecar.provenance,
      specHash: raw.sidecar.specHash,
    });
    expect(await readFile(join(dir, 'tiny-policy.json'), 'utf8')).toBe(
      await readFile('models/tiny-policy.json', 'utf8'),
    );
    expect(Buffer.compare(await readFile(path), await readFile('models/tiny-policy.onnx'))).toBe(0);
  });

  it('validates by field: roles only with pooling "roles", at least one query, no unknown keys', () => {
    expect(() => parseVlaConfig({ ...tinyConfig(), pooling: 'mean', roles: { queries: 2 } })).toThrow(
      /roles: set, but pooling is "mean"/,
    );
    expect(() => parseVlaConfig({ ...tinyConfig(), pooling: 'roles', roles: { queries: 0 } })).toThrow(
      /roles\.queries/,
    );
    expect(() => parseVlaConfig({ ...tinyConfig(), pooling: 'roles', roles: { k: 2 } as never })).toThrow(/roles/);
    const c = parseVlaConfig({ ...tinyConfig(), pooling: 'roles' });
    expect(c.roles).toBeUndefined(); // absent: the defaults (2 queries, concatenated for FiLM)
    const g = new Graph();
    vlaForwardBuilder(c)(g);
    expect(g.paramByName('vla.text.queries').shape).toEqual([4, 2]);
    expect(g.paramByName('vla.text.pos').shape).toEqual([TOKENIZER.maxLength, 4]);
    expect(g.paramByName('vla.trunk.0.w').shape[0]).toBe(8 + 8 + 2 * 4 + 5); // two cameras, 2 x text, proprio
  });

  it.each([
    ['3 queries concatenated, FiLM on both convs, two cameras', { roles: { queries: 3 }, film: 2 }],
    [
      '2 queries, FiLM layers split by query, keypoints, one camera',
      { roles: { queries: 2, film: 'split' as const }, film: 2, keypoints: 'concat' as const, cameras: ['image'] },
    ],
  ])('%s: gradients match float64 finite differences', async (_, over) => {
    const cfg = tinyConfig({ pooling: 'roles', ...over });
    const n = 3;
    const feeds: Feeds = policyFeeds(cfg, TOKENIZER, randomObs(cfg, n, 13), n);
    for (const [name, a] of Object.entries(randomActions(cfg, n, 13)))
      feeds[VLA_IO.action(name)] = tensor('int32', a, [n]);
    const rng = new Rng(13, 3);
    feeds.adv = tensor(
      'float32',
      Float32Array.from({ length: n }, () => rng.normal()),
      [n],
    );
    const values = Object.fromEntries(
      Object.entries(feeds).map(([k, t]) => [
        k,
        t.type === 'float32' ? Float64Array.from(t.data as Float32Array) : (t.data as TypedArray),
      ]),
    );
    const r = await checkLoss((g) => policyLoss(g, cfg, n).loss, values, { sample: 4 });
    console.log(`role pooling policy loss FD: max relative error ${r.maxRelErr.toExponential(2)} over ${r.checked}`);
    expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
  });

  it('a role-pooling policy file: standard ONNX, loads back bit-identical, runs in onnxruntime-web', async () => {
    const cfg = tinyConfig({ imageSize: [16, 16], pooling: 'roles', film: 2, keypoints: 'replace' });
    const params = initParams(cfg, 9);
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-roles-'));
    dirs.push(dir);
    const path = join(dir, 'policy.onnx');
    await savePolicy(path, cfg, params, { provenance: { producer: 'test', seed: 9 }, specHash: 'abc' });
    expect(JSON.parse(await readFile(join(dir, 'policy.json'), 'utf8')).config.pooling).toBe('roles');
    const loaded = await loadPolicy(path);
    expect(loaded.config).toEqual(cfg);
    expect(readOnnx(loaded.model).opset).toBe(18);
    const n = 5;
    const obs = randomObs(cfg, n, 4);
    const [a, b] = [await PolicySampler.create(cfg, params), await PolicySampler.create(loaded.config, loaded.params)];
    const [fa, fb] = [await a.forward(obs, n), await b.forward(obs, n)];
    for (const k of Object.keys(fa.logp))
      expect(Buffer.from(fb.logp[k].buffer)).toEqual(Buffer.from(fa.logp[k].buffer));
    ortWeb.env.wasm.numThreads = 1;
    const web = await ortWeb.InferenceSession.create(loaded.model, { executionProviders: ['wasm'] });
    const feeds = policyFeeds(cfg, TOKENIZER, obs, n);
    const w = await web.run(
      Object.fromEntries(
        Object.entries(feeds).map(([k, t]) => [
          k,
          new ortWeb.Tensor(t.type as 'float32', t.data as Float32Array, t.dims),
        ]),
      ),
    );
    for (const [k, lp] of Object.entries(fa.logp)) {
      const wd = w[VLA_IO.logp(k)].data as Float32Array;
      lp.forEach((v, i) => expect(Math.abs(v - wd[i])).toBeLessThanOrEqual(1e-5));
    }
    await web.release();
    await a.close();
    await b.close();
  });

  it('split FiLM: FiLM layer j reads query j only', () => {
    const cfg = tinyConfig({ pooling: 'roles', roles: { queries: 2, film: 'split' }, film: 2 });
    const g = new Graph();
    vlaForwardBuilder(cfg)(g);
    expect(g.paramByName('vla.film0.w').shape).toEqual([4, 6]); // one query's vector, not both
    expect(g.paramByName('vla.film1.w').shape).toEqual([4, 8]);
    const concat = new Graph();
    vlaForwardBuilder({ ...cfg, roles: { queries: 2, film: 'concat' } })(concat);
    expect(concat.paramByName('vla.film0.w').shape).toEqual([8, 6]);
  });
});

// Which colour comes first decides the label; the image is the same in every row. A bag of words sees
// {a, b} for both orders, so a mean-pooled policy gives both the same distribution and is right on exactly one
// of each swapped pair: 50% on this balanced set. One pair of colours (both orders, every template) is held
// out of training, as the scene holds out one object-target pair per family.
const COLOURS = ['red', 'green', 'blue', 'yellow', 'purple', 'orange'];
const TEMPLATES = [
  'stack the {o} cube on the {t} cube',
  'put the {o} cube on top of the {t} cube',
  'place the {o} cube onto the {t} cube',
];
const HELD_OUT = ['red', 'blue'];

function orderDataset(tok: WordTokenizer, heldOut: boolean): { ds: BcDataset; texts: string[] } {
  const texts: string[] = [];
  const labels: number[] = [];
  for (const t of TEMPLATES)
    COLOURS.forEach((a, i) =>
      COLOURS.forEach((b, j) => {
        if (i === j || (HELD_OUT.includes(a) && HELD_OUT.includes(b)) !== heldOut) return;
        texts.push(t.replace('{o}', a).replace('{t}', b));
        labels.push(i < j ? 1 : 0);
      }),
    );
  const size = texts.length;
  const L = tok.maxLength;
  const tokens = new Int32Array(size * L);
  texts.forEach((s, r) => tokens.set(tok.encode(s), r * L));
  return {
    ds: {
      size,
      images: { image: new Uint8Array(size * 8 * 8 * 3).fill(new Rng(5).int(256)) },
      proprio: null,
      tokens,
      labels: { first: Int32Array.from(labels) },
    },
    texts,
  };
}

async function accuracy(sampler: PolicySampler, { ds, texts }: { ds: BcDataset; texts: string[] }): Promise<number> {
  const { logp } = await sampler.forward({ image: ds.images.image, instruction: texts }, ds.size);
  let hits = 0;
  for (let r = 0; r < ds.size; r++)
    if (Number(logp.first[2 * r + 1] > logp.first[2 * r]) === ds.labels.first[r]) hits++;
  return hits / ds.size;
}

/** BC for `steps` steps; accuracy on the training rows and on the held-out pair's rows. */
async function orderAccuracy(pooling: 'mean' | 'roles', steps: number): Promise<{ train: number; heldOut: number }> {
  const tok = WordTokenizer.fromCorpus(TEMPLATES.concat(COLOURS), { maxLength: 10 });
  const config = parseVlaConfig({
    cameras: ['image'],
    imageSize: [8, 8],
    conv: [{ out: 4, k: 3, stride: 2, pad: 1 }],
    imageFeatures: 8,
    film: 1,
    tokenizer: tok.config,
    embedDim: 16,
    pooling,
    proprio: null,
    trunk: [32],
    actions: [{ name: 'first', n: 2 }],
  });
  const train = orderDataset(tok, false);
  const trainer = await BcTrainer.create(config, initParams(config, 1), {
    batch: 32,
    lr: 1e-2,
    totalSteps: steps,
    seed: 2,
  });
  for (let s = 0; s < steps; s++) await trainer.step(train.ds);
  const sampler = await PolicySampler.create(config, trainer.params());
  await trainer.close();
  const out = { train: await accuracy(sampler, train), heldOut: await accuracy(sampler, orderDataset(tok, true)) };
  await sampler.close();
  return out;
}

describe('role pooling learns what the mean cannot', () => {
  it('label = which colour comes first (same image): 300 BC steps', async () => {
    const roles = await orderAccuracy('roles', 300);
    const mean = await orderAccuracy('mean', 300);
    const f = (a: { train: number; heldOut: number }) =>
      `${a.train.toFixed(3)} (held-out pair ${a.heldOut.toFixed(3)})`;
    console.log(`which-colour-first accuracy: roles ${f(roles)}, mean ${f(mean)}`);
    expect(roles.train).toBeGreaterThanOrEqual(0.95);
    expect(roles.heldOut).toBeGreaterThanOrEqual(0.8); // 1.0 on seeds 1-5; the label is a colour order
    expect(mean.train).toBeLessThanOrEqual(0.6);
  }, 60_000);
});
