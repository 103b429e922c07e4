import { describe, expect, it } from 'vitest';
import { ChainEnv, CodeLockEnv } from '../../src/env/index.ts';
import { collectEpisodes, type Policy } from '../../src/rollout/index.ts';

describe('collectEpisodes', () => {
  it('returns one episode per seed, in seed order, independent of the number of slots', async () => {
    const seeds = [5, 9, 2, 7, 11, 3, 8];
    const run = async (numEnvs: number) => {
      const env = new CodeLockEnv(numEnvs);
      // Enters the right code for even seeds and a wrong first digit for odd ones.
      const current: number[] = [];
      const policy: Policy = {
        onReset: (idx, info) => {
          for (const i of idx) current[i] = info.seeds[i];
        },
        act: (obs) => ({
          actions: {
            digit: Int32Array.from({ length: numEnvs }, (_, i) => {
              const entered = (obs.entered as Int32Array)[i];
              const right = env.code(i)[Math.min(entered, 3)];
              return current[i] % 2 === 0 ? right : (right + 1) % 6;
            }),
          },
        }),
      };
      return collectEpisodes(env, policy, { seeds });
    };
    const a = await run(1);
    const b = await run(3);
    expect(a.map((e) => e.seed)).toEqual(seeds);
    expect(a.map((e) => e.success)).toEqual(seeds.map((s) => s % 2 === 0));
    expect(a.map((e) => e.length)).toEqual(seeds.map((s) => (s % 2 === 0 ? 4 : 1)));
    expect(b).toEqual(a);
    expect(a[0].instruction).toMatch(/^enter \d \d \d \d$/);
  });

  it('records actions, rewards and privileged states per step', async () => {
    const env = new ChainEnv(2);
    const eps = await collectEpisodes(
      env,
      { act: () => ({ actions: { move: new Int32Array([1, 1]) } }) },
      { seeds: [0, 1], recordState: () => [42] },
    );
    for (const e of eps) {
      expect(e.success).toBe(true);
      expect(e.actions.length).toBe(e.length);
      expect(Array.from(e.actions).every((x) => x === 1)).toBe(true);
      expect(e.rewards[e.length - 1]).toBe(1);
      expect(e.states!.length).toBe(e.length + 1);
    }
  });
});
