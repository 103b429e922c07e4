import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { CodeLockEnv } from '../../src/env/toys.ts';
import { Debiaser, resolveConfig, train } from '../../src/trainer/index.ts';
import { metrics, setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-train-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the WMRL loop on the code lock (known optimum: every digit right)', () => {
  it('real mode: GRPO raises the physics reward', { timeout: 120_000 }, async () => {
    const cfg = resolveConfig('smoke', {
      mode: 'real',
      iterations: 150,
      groupsPerIteration: 4,
      groupSize: 8,
      batch: 64,
      samplesPerRollout: 6,
      lr: 1e-2,
      klCoef: 0,
      evalEvery: 150,
      evalEpisodes: 32,
    });
    const dir = join(tmp, 'real');
    await train(setup(), cfg, dir);
    const m = metrics(dir);
    const early = m.slice(0, 5).reduce((s, x) => s + x['reward/anchor'], 0) / 5;
    const late = m.slice(-5).reduce((s, x) => s + x['reward/anchor'], 0) / 5;
    console.log(
      `code lock, real mode: reward ${early.toFixed(3)} (first 5 iterations) -> ${late.toFixed(3)} (last 5); held-out success ${m.at(-1)!['eval/success']}`,
    );
    expect(late).toBeGreaterThan(early + 0.1);
  });
});

describe('the WMRL loop with a biased, noisy "world model" (the true env, progress p reported as p^2 + noise)', () => {
  const distort = (p: number) => p * p;
  const run = async (mode: 'mix' | 'wmrl', name: string) => {
    const cfg = resolveConfig('smoke', {
      mode,
      iterations: 120,
      groupsPerIteration: 4,
      groupSize: 8,
      batch: 64,
      samplesPerRollout: 6,
      lr: 1e-2,
      klCoef: 0,
      minAnchors: 1,
      debias: { warmup: 64, refitEvery: 32 },
    });
    const dir = join(tmp, name);
    await train(setup(distort, 0.5), cfg, dir);
    return metrics(dir);
  };

  it('the debiaser learns the bias online (bias after the map near zero) and wmrl is not worse than mix', {
    timeout: 120_000,
  }, async () => {
    const mix = await run('mix', 'mix');
    const wmrl = await run('wmrl', 'wmrl');
    const last = (m: Record<string, number>[], k: string) => m.slice(-10).reduce((s, x) => s + x[k], 0) / 10;
    const end = wmrl.at(-1)!;
    console.log(
      `p^2 + noise world model: bias before ${end['debias/bias_before'].toFixed(3)}, after ${end['debias/bias_after'].toFixed(3)} (${end['debias/pairs']} pairs); w ${end['denoise/w'].toFixed(2)}; anchor reward over the last 10 iterations: mix ${last(mix, 'reward/anchor').toFixed(3)}, wmrl ${last(wmrl, 'reward/anchor').toFixed(3)}`,
    );
    expect(end['debias/pairs']).toBe(120 * 8);
    expect(Math.abs(end['debias/bias_after'])).toBeLessThan(0.01);
    expect(Math.abs(end['debias/bias_after'])).toBeLessThan(Math.abs(end['debias/bias_before']) / 2);
    expect(last(wmrl, 'reward/anchor')).toBeGreaterThanOrEqual(last(mix, 'reward/anchor') - 0.02);
  });

  it('a world model that gets noisier after the denoiser froze its scale: w rises above its target toward the clip', {
    timeout: 120_000,
  }, async () => {
    // noise width 0 for rollout keys below 1280 (iteration 40), then rising to 3 by iteration 80
    const noise = (_p: number, key: number) => 3 * Math.min(1, Math.max(0, key - 1280) / 1280);
    const cfg = resolveConfig('smoke', {
      mode: 'wmrl',
      iterations: 100,
      groupsPerIteration: 4,
      groupSize: 8,
      batch: 64,
      samplesPerRollout: 6,
      lr: 1e-2,
      klCoef: 0,
      denoise: { freezeAfter: 8 },
    });
    const dir = join(tmp, 'drift');
    await train(setup(distort, noise), cfg, dir);
    const m = metrics(dir);
    const w = (it: number) => m[it - 1]['denoise/w'];
    console.log(
      `drifting world model: w ${w(30).toFixed(2)} (iteration 30), ${w(50).toFixed(2)} (50), ${w(100).toFixed(2)} (100)`,
    );
    expect(w(50)).toBeLessThan(2.2); // frozen while the model was quiet: w near its target 2
    expect(w(100)).toBeGreaterThan(1.3 * w(50));
  });
});

describe('debias.perTask', () => {
  it("fits one map per task on that task's anchors (here two world models biased in opposite directions)", {
    timeout: 60_000,
  }, async () => {
    // task 0's world model reports p², task 1's √p: one map cannot undo both
    const [a, b] = [setup((p) => p * p), setup(Math.sqrt)];
    const two = { ...a, tasks: [a.tasks[0], { ...b.tasks[0], id: 'toy/code-lock-root' }] };
    const cfg = resolveConfig('smoke', {
      mode: 'wmrl',
      iterations: 8,
      groupsPerIteration: 4,
      minAnchors: 2,
      debias: { perTask: true, warmup: 8, refitEvery: 4 },
    });
    const dir = join(tmp, 'per-task');
    await train(two, cfg, dir);
    const info = JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8')).info;
    const [f0, f1] = info.debias.map((s: unknown) => Debiaser.fromState(s));
    // task 0's model reports too little, task 1's too much; each map removes its own task's bias
    const [r0, r1] = [f0.report(), f1.report()];
    expect(r0.biasBefore).toBeLessThan(-0.01);
    expect(r1.biasBefore).toBeGreaterThan(0.01);
    for (const r of [r0, r1]) expect(Math.abs(r.biasAfter)).toBeLessThan(Math.abs(r.biasBefore) / 2);
    expect(metrics(dir).at(-1)!['debias/pairs']).toBe(f0.report().pairs + f1.report().pairs);
  });
});

describe('resume', () => {
  it('stopping after k iterations and resuming gives the metrics of an uninterrupted run (time fields aside)', {
    timeout: 60_000,
  }, async () => {
    const cfg = resolveConfig('smoke', {
      mode: 'wmrl',
      iterations: 6,
      checkpointEvery: 2,
      debias: { warmup: 8, refitEvery: 4 },
    });
    const whole = join(tmp, 'whole');
    await train(setup(distort2, 0.2), cfg, whole);
    const cut = join(tmp, 'cut');
    let n = 0;
    await train(setup(distort2, 0.2), cfg, cut, { shouldStop: () => ++n >= 3 }); // stops after iteration 3 (no checkpoint due)
    expect(metrics(cut).length).toBe(3);
    await train(setup(distort2, 0.2), cfg, cut, { resume: true });
    const strip = (m: Record<string, number>[]) =>
      m.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));
    expect(strip(metrics(cut))).toEqual(strip(metrics(whole)));
  });

  it('results do not depend on the number of env slots', { timeout: 60_000 }, async () => {
    const strip = (m: Record<string, number>[]) =>
      m.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));
    const at = async (numEnvs: number) => {
      const dir = join(tmp, `slots${numEnvs}`);
      await train(setup(distort2, 0.2), resolveConfig('smoke', { mode: 'wmrl', iterations: 3, numEnvs }), dir);
      return strip(metrics(dir));
    };
    expect(await at(3)).toEqual(await at(8));
  });

  it('equalRewardRows drops rows of equal-reward groups only', {
    timeout: 60_000,
  }, async () => {
    const run = async (equalRewardRows: number) => {
      const dir = join(tmp, `equal${equalRewardRows}`);
      const cfg = resolveConfig('smoke', { mode: 'real', iterations: 4, groupsPerIteration: 6, equalRewardRows });
      await train(setup(), cfg, dir);
      return metrics(dir);
    };
    const [all, quarter] = [await run(1), await run(0.25)];
    const rows = (m: Record<string, number>[]) => m.reduce((n, x) => n + x['samples/rows'], 0);
    // the same rollouts: the rows dropped are rows of equal-reward groups only
    expect(quarter.map((x) => x['groups/zero_variance'])).toEqual(all.map((x) => x['groups/zero_variance']));
    const equalGroups = all.reduce((n, x) => n + x['groups/zero_variance'], 0);
    expect(equalGroups).toBeGreaterThan(0);
    const perGroup = 4 * 4; // at most groupSize x samplesPerRollout (smoke)
    const dropped = rows(all) - rows(quarter);
    expect(dropped).toBeGreaterThan(0);
    expect(dropped).toBeLessThanOrEqual(equalGroups * perGroup);
    expect(() => resolveConfig('smoke', { equalRewardRows: 0 })).toThrow(/equalRewardRows/);
  });

  it('a checkpoint whose fields do not parse is refused naming the field', { timeout: 60_000 }, async () => {
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 2 });
    const dir = join(tmp, 'bad-info');
    await train(setup(distort2, 0.2), cfg, dir);
    const path = join(dir, 'checkpoint.json');
    const ck = JSON.parse(readFileSync(path, 'utf8'));
    ck.info.pool[0].row = 'none';
    delete ck.info.totals.refreshes;
    writeFileSync(path, JSON.stringify(ck));
    const error = await train(setup(distort2, 0.2), { ...cfg, iterations: 3 }, dir, { resume: true }).catch(
      (e: Error) => e,
    );
    expect(error).toBeInstanceOf(InputError);
    expect(String(error)).toMatch(/checkpoint\.json info: \$\.totals\.refreshes: /);
    expect(String(error)).toMatch(/checkpoint\.json info: \$\.pool\[0\]\.row: /);
  });

  it('a checkpoint of before per-task debiasing (one debiaser state, not a list) resumes as the same run', {
    timeout: 60_000,
  }, async () => {
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 4, checkpointEvery: 2 });
    const whole = join(tmp, 'one-debiaser-whole');
    await train(setup(distort2, 0.2), cfg, whole);
    const cut = join(tmp, 'one-debiaser');
    let n = 0;
    await train(setup(distort2, 0.2), cfg, cut, { shouldStop: () => ++n >= 2 });
    const path = join(cut, 'checkpoint.json');
    const ck = JSON.parse(readFileSync(path, 'utf8'));
    expect(ck.info.debias).toHaveLength(1);
    ck.info.debias = ck.info.debias[0];
    writeFileSync(path, JSON.stringify(ck));
    await train(setup(distort2, 0.2), cfg, cut, { resume: true });
    const strip = (m: Record<string, number>[]) =>
      m.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));
    expect(strip(metrics(cut))).toEqual(strip(metrics(whole)));
  });

  it('a config with a wrong field fails naming its path', () => {
    expect(() => resolveConfig('smoke', { groupSize: 1 })).toThrow(/groupSize/);
    expect(() => resolveConfig('smoke', { debias: { warmup: -1 } })).toThrow(/debias\.warmup/);
    expect(() => resolveConfig('smoke', { colour: 'red' })).toThrow(/colour/);
    expect(() => resolveConfig('nope')).toThrow(/--preset: unknown preset "nope"/);
  });
});

const distort2 = (p: number) => 0.8 * p;

describe('rollout groups', () => {
  it('every member of a group starts bit-identically and draws its own actions', async () => {
    const s = setup();
    const { PolicySampler } = await import('../../src/policy/sampler.ts');
    const { runGroups } = await import('../../src/trainer/index.ts');
    const sampler = await PolicySampler.create(s.policy.config, s.policy.params);
    const env = new CodeLockEnv(3);
    const [group] = await runGroups(env, sampler, [{ kind: 'anchor', task: 0, start: 42, keys: [0, 1, 2, 3, 4, 5] }], {
      seed: 0,
      samplesPerRollout: 6,
    });
    const first = group.map((r) => r.samples[0].obs);
    for (const o of first.slice(1)) expect(o).toEqual(first[0]);
    expect(new Set(group.map((r) => Array.from(r.actions).join())).size).toBeGreaterThan(1);
    await sampler.close();
  });
});

describe('rollout temperature', () => {
  it('changes the actions tried; the stored log-probs are those of the tempered policy that drew them', async () => {
    const s = setup();
    const { PolicySampler } = await import('../../src/policy/sampler.ts');
    const { jointLogp, runGroups } = await import('../../src/trainer/rollouts.ts');
    const sampler = await PolicySampler.create(s.policy.config, s.policy.params);
    const job = { kind: 'anchor' as const, task: 0, start: 42, keys: Array.from({ length: 16 }, (_, k) => k) };
    const at = async (temperature: number) => {
      const [group] = await runGroups(new CodeLockEnv(16), sampler, [job], {
        seed: 0,
        samplesPerRollout: 6,
        temperature,
      });
      return group;
    };
    const [plain, sharp] = [await at(1), await at(0.05)];
    expect(sharp.map((r) => Array.from(r.actions).join())).not.toEqual(plain.map((r) => Array.from(r.actions).join()));
    const samples = sharp.flatMap((r) => r.samples);
    const drawn = await jointLogp(sampler, samples, 0.05);
    const own = await jointLogp(sampler, samples);
    samples.forEach((x, k) => expect(x.behaviourLogp).toBeCloseTo(drawn[k], 4));
    expect(samples.some((x, k) => Math.abs(x.behaviourLogp - own[k]) > 0.1)).toBe(true);
    await sampler.close();
  });
});
