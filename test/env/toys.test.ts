import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { ChainEnv, CodeLockEnv, EpisodeStatistics, randomAction, TimeLimit, type Env } from '../../src/env/index.ts';

async function successRate(
  env: Env,
  act: (t: number) => Record<string, Int32Array>,
  episodes: number,
): Promise<number> {
  const stats = new EpisodeStatistics(env);
  for (let seed = 0; stats.episodes.length < episodes; seed += env.numEnvs) {
    await stats.reset({ seed });
    for (let t = 0; t < env.spec.maxEpisodeSteps; t++) await stats.step(act(t));
  }
  return stats.episodes.slice(0, episodes).filter((e) => e.success).length / episodes;
}

describe('toy envs', () => {
  it('chain: the oracle always succeeds, random almost never', async () => {
    const env = new ChainEnv(50);
    expect(await successRate(env, () => ({ move: new Int32Array(50).fill(1) }), 200)).toBe(1);
    const rng = new Rng(7);
    expect(
      await successRate(env, () => randomAction(env.spec, 50, rng) as Record<string, Int32Array>, 1000),
    ).toBeLessThan(0.02);
  });

  it('code-lock: reading the instruction solves it, random almost never', async () => {
    const env = new CodeLockEnv(50);
    const oracle = (t: number) => Int32Array.from({ length: 50 }, (_, i) => env.code(i)[Math.min(t, 3)]);
    expect(await successRate(env, (t) => ({ digit: oracle(t) }), 200)).toBe(1);
    const rng = new Rng(8);
    expect(
      await successRate(env, () => randomAction(env.spec, 50, rng) as Record<string, Int32Array>, 1000),
    ).toBeLessThan(0.01);
  });

  it('names the bad action entry', async () => {
    const env = new CodeLockEnv(2);
    await env.reset({ seed: 0 });
    await expect(env.step({})).rejects.toThrow(/toy\/code-lock action\.digit is missing/);
    await expect(env.step({ digit: new Int32Array([0, 9]) })).rejects.toThrow(
      /action\.digit\[1\] = 9 is outside \[0, 6\)/,
    );
  });
});

describe('wrappers', () => {
  it('TimeLimit truncates and survives snapshot/restore', async () => {
    const env = new TimeLimit(new ChainEnv(2), 3);
    await env.reset({ seed: 1 });
    const left = { move: new Int32Array([0, 0]) };
    expect(Array.from((await env.step(left)).truncated)).toEqual([0, 0]);
    const snap = env.snapshot!();
    await env.step(left);
    expect(Array.from((await env.step(left)).truncated)).toEqual([1, 1]);
    env.restore!(snap);
    await env.step(left);
    expect(Array.from((await env.step(left)).truncated)).toEqual([1, 1]);
  });

  it('EpisodeStatistics records return, length and success once per episode', async () => {
    const env = new EpisodeStatistics(new ChainEnv(1));
    await env.reset({ seed: 0 }); // seed 0 starts at cell 0 or 1
    const start = (await env.reset({ seed: 0 })).obs.cell[0] as number;
    for (let t = 0; t < 15; t++) await env.step({ move: new Int32Array([1]) });
    expect(env.episodes).toEqual([{ env: 0, seed: 0, return: 1, length: 10 - start, success: true, progress: 1 }]);
  });

  it('forwards capabilities only when the inner env has them', () => {
    const plain: Env = {
      spec: new ChainEnv(1).spec,
      numEnvs: 1,
      reset: async () => ({ obs: {}, info: { source: 'toy', seeds: new Int32Array(1) } }),
      step: async () => {
        throw new Error('unused');
      },
      close() {},
    };
    expect(new TimeLimit(plain, 2).snapshot).toBeUndefined();
    expect(new TimeLimit(new ChainEnv(1), 2).snapshot).toBeTypeOf('function');
  });
});
