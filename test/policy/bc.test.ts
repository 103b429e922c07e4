import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeLockEnv } from '../../src/env/toys.ts';
import { Graph } from '../../src/nn/ir.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { BcTrainer, type BcDataset, bcBatch, checkBcDataset, shiftImage } from '../../src/policy/bc.ts';
import { loadBcCheckpoint, saveBcCheckpoint } from '../../src/policy/bc-checkpoint.ts';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { PAD_ID, UNK_ID, WordTokenizer } from '../../src/policy/tokenizer.ts';
import { type VlaConfig, vlaForwardBuilder } from '../../src/policy/vla.ts';
import { collectEpisodes } from '../../src/rollout/collect.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const SIZES = {
  conv: [{ out: 4, k: 3, stride: 2, pad: 1 }],
  imageFeatures: 16,
  embedDim: 8,
  proprioHidden: 4,
  trunk: [32],
};

function lockConfig(env: CodeLockEnv): VlaConfig {
  const tok = WordTokenizer.fromCorpus(['enter 0 1 2 3 4 5'], { maxLength: 6 });
  return vlaConfigFromSpec(env.spec, tok.config, SIZES);
}

/** Oracle demonstrations of the code lock: every step's observation and the correct digit. */
async function lockDataset(config: VlaConfig, episodes: number): Promise<BcDataset> {
  const env = new CodeLockEnv(episodes);
  const tok = new WordTokenizer(config.tokenizer);
  let { obs } = await env.reset({ seed: 100 });
  const px = CodeLockEnv.IMAGE * CodeLockEnv.IMAGE * 3;
  const size = episodes * CodeLockEnv.LENGTH;
  const ds: BcDataset = {
    size,
    images: { image: new Uint8Array(size * px) },
    proprio: null,
    tokens: new Int32Array(size * 6),
    labels: { digit: new Int32Array(size) },
  };
  for (let t = 0; t < CodeLockEnv.LENGTH; t++) {
    const digit = Int32Array.from({ length: episodes }, (_, i) => env.code(i)[t]);
    for (let i = 0; i < episodes; i++) {
      const row = t * episodes + i;
      ds.images.image.set((obs.image as Uint8Array).subarray(i * px, (i + 1) * px), row * px);
      ds.tokens.set(tok.encode((obs.instruction as string[])[i]), row * 6);
      ds.labels.digit[row] = digit[i];
    }
    obs = (await env.step({ digit })).obs;
  }
  return ds;
}

function initParams(config: VlaConfig, seed: number): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return ParamStore.init(g.params, seed);
}

describe('behaviour cloning', () => {
  it('clones the code-lock oracle to ~100% success (random: (1/6)^4)', async () => {
    const probe = new CodeLockEnv(1);
    const config = lockConfig(probe);
    const ds = await lockDataset(config, 64);
    checkBcDataset(ds, config);
    const trainer = await BcTrainer.create(config, initParams(config, 1), {
      batch: 32,
      lr: 1e-2,
      totalSteps: 300,
      shift: 1,
      seed: 3,
    });
    let last = null;
    for (let s = 0; s < 300; s++) last = await trainer.step(ds);
    expect(last!.accuracy.digit).toBeGreaterThan(0.95);
    const sampler = await PolicySampler.create(config, trainer.params());
    const env = new CodeLockEnv(16);
    const eps = await collectEpisodes(
      env,
      { act: async (obs) => ({ actions: (await sampler.act(obs, 16, null, 0)).actions }) },
      { seeds: Array.from({ length: 64 }, (_, k) => 5000 + k) },
    );
    const rate = eps.filter((e) => e.success).length / eps.length;
    console.log(`code-lock BC: train accuracy ${last!.accuracy.digit.toFixed(3)}, held-out seed success ${rate}`);
    expect(rate).toBeGreaterThanOrEqual(0.95);
    await sampler.close();
    await trainer.close();
  });

  it('resuming from a checkpoint continues bit-identically (same batches, same AdamW state)', async () => {
    const config = lockConfig(new CodeLockEnv(1));
    const ds = await lockDataset(config, 16);
    const opts = { batch: 8, lr: 3e-3, totalSteps: 20, shift: 1, seed: 9 };
    const straight = await BcTrainer.create(config, initParams(config, 2), opts);
    for (let s = 0; s < 20; s++) await straight.step(ds);
    const first = await BcTrainer.create(config, initParams(config, 2), opts);
    for (let s = 0; s < 10; s++) await first.step(ds);
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-bc-'));
    dirs.push(dir);
    saveBcCheckpoint(dir, {
      step: first.stepCount,
      config,
      run: { seed: 9 },
      params: first.params(),
      optimizer: first.exportOptimizer(),
    });
    const ck = loadBcCheckpoint(dir);
    expect(ck.step).toBe(10);
    const second = await BcTrainer.create(config, ck.params, opts);
    second.resume(ck.optimizer, ck.step);
    for (let s = 0; s < 10; s++) await second.step(ds);
    const [a, b] = [straight.params(), second.params()];
    for (const name of a.names) expect(Buffer.from(b.get(name).buffer)).toEqual(Buffer.from(a.get(name).buffer));
    for (const t of [straight, first, second]) await t.close();
  });

  it('batches depend only on (seed, step); shifts replicate edges; bad datasets name the field', async () => {
    const config = lockConfig(new CodeLockEnv(1));
    const ds = await lockDataset(config, 8);
    const a = bcBatch(ds, config, 4, 1, 7, 1);
    const b = bcBatch(ds, config, 4, 1, 7, 1);
    expect(a.rows).toEqual(b.rows);
    expect(a.feeds.image.data).toEqual(b.feeds.image.data);
    expect(bcBatch(ds, config, 4, 1, 8, 1).rows).not.toEqual(a.rows);
    const src = Uint8Array.from({ length: 2 * 2 * 3 }, (_, i) => i);
    const dst = new Uint8Array(12);
    shiftImage(src, 0, dst, 0, 2, 2, 0, 1);
    expect(Array.from(dst)).toEqual([3, 4, 5, 3, 4, 5, 9, 10, 11, 9, 10, 11]);
    expect(() => checkBcDataset({ ...ds, labels: { digit: ds.labels.digit.map(() => 9) } }, config)).toThrow(
      /labels\.digit\[0\] = 9/,
    );
    expect(() => checkBcDataset({ ...ds, tokens: new Int32Array(3) }, config)).toThrow(/tokens/);
  });

  it('a weighted dataset draws its rows in proportion to the weights (weight 0: never)', async () => {
    const config = lockConfig(new CodeLockEnv(1));
    const ds = await lockDataset(config, 8);
    const weights = new Float32Array(ds.size);
    weights[2] = 1;
    weights[5] = 3;
    const { rows } = bcBatch({ ...ds, weights }, config, 4000, 1, 0);
    const five = rows.filter((r) => r === 5).length;
    expect(rows.every((r) => r === 2 || r === 5)).toBe(true);
    expect(five / rows.length).toBeGreaterThan(0.72);
    expect(five / rows.length).toBeLessThan(0.78);
  });

  it('word dropout turns only instruction words into <unk>, at about its rate, and leaves rows and images alone', async () => {
    const config = lockConfig(new CodeLockEnv(1));
    const ds = await lockDataset(config, 8);
    const plain = bcBatch(ds, config, 256, 1, 3, 1);
    const dropped = bcBatch(ds, config, 256, 1, 3, 1, 0.3);
    expect(dropped.rows).toEqual(plain.rows);
    expect(dropped.feeds.image.data).toEqual(plain.feeds.image.data);
    expect(bcBatch(ds, config, 256, 1, 3, 1, 0).feeds.tokens.data).toEqual(plain.feeds.tokens.data);
    const before = plain.feeds.tokens.data as Int32Array;
    const after = dropped.feeds.tokens.data as Int32Array;
    let words = 0;
    let unk = 0;
    before.forEach((id, k) => {
      if (id === PAD_ID) return expect(after[k]).toBe(PAD_ID);
      words++;
      if (after[k] !== id) {
        expect(after[k]).toBe(UNK_ID);
        unk++;
      }
    });
    expect(unk / words).toBeGreaterThan(0.25);
    expect(unk / words).toBeLessThan(0.35);
  });
});
