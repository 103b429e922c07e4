import { describe, expect, it } from 'vitest';
import { type BatchAction, ChainEnv, CodeLockEnv, type StepOptions } from '../../src/env/index.ts';
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

  it('steps and resets only the slots that run an episode: idle slots cost nothing', async () => {
    /** The code lock counting what each slot is asked to do. */
    class Counting extends CodeLockEnv {
      readonly steps: number[];
      readonly resets: number[];
      constructor(n: number) {
        super(n);
        this.steps = new Array(n).fill(0);
        this.resets = new Array(n).fill(0);
      }
      override async reset(options: Parameters<CodeLockEnv['reset']>[0] = {}) {
        for (let i = 0; i < this.numEnvs; i++) if (!options.mask || options.mask[i]) this.resets[i]++;
        return super.reset(options);
      }
      override async step(action: BatchAction, options: StepOptions = {}) {
        for (let i = 0; i < this.numEnvs; i++) if (!options.mask || options.mask[i]) this.steps[i]++;
        return super.step(action, options);
      }
    }
    const seeds = [4, 6, 1];
    const run = async (n: number, horizons?: number[]) => {
      const env = new Counting(n);
      // the right code: every episode lasts the code's 4 digits
      const oracle: Policy = {
        act: (obs, ctx) => ({
          actions: {
            digit: Int32Array.from(ctx.keys, (key, i) =>
              key < 0 ? 0 : env.code(i)[Math.min((obs.entered as Int32Array)[i], 3)],
            ),
          },
        }),
      };
      const episodes = await collectEpisodes(env, oracle, { seeds, horizons });
      return { env, episodes };
    };
    const three = await run(3);
    const eight = await run(8);
    expect(eight.episodes).toEqual(three.episodes);
    expect(eight.env.resets).toEqual([1, 1, 1, 0, 0, 0, 0, 0]);
    // a slot steps exactly the steps of its episode
    expect(eight.env.steps.slice(0, 3)).toEqual([4, 4, 4]);
    expect(three.episodes.map((e) => [e.length, e.success])).toEqual(seeds.map(() => [4, true]));
    expect(eight.env.steps.slice(3)).toEqual([0, 0, 0, 0, 0]);
    // an episode cut by its horizon stops its slot at once, though the env has not ended it
    const cut = await run(8, [1, 2, 1]);
    expect(cut.episodes.map((e) => e.length)).toEqual([1, 2, 1]);
    expect(cut.env.steps).toEqual([1, 2, 1, 0, 0, 0, 0, 0]);
  });

  it('keeps one logp entry per token: NaN on steps the policy gave none for, none when no step had one', async () => {
    const env = new CodeLockEnv(2);
    // the right digit always (episodes of 4 steps); log-probabilities on odd steps only
    const policy = (withLogp: boolean): Policy => ({
      act: (obs, ctx) => {
        const digit = Int32Array.from(
          { length: 2 },
          (_, i) => env.code(i)[Math.min((obs.entered as Int32Array)[i], 3)],
        );
        const odd = withLogp && ctx.steps.some((t, i) => ctx.keys[i] >= 0 && t % 2 === 1);
        return { actions: { digit }, ...(odd && { logp: { digit: Float32Array.from(ctx.steps, (t) => -t) } }) };
      },
    });
    const eps = await collectEpisodes(env, policy(true), { seeds: [1, 2, 3] });
    for (const e of eps) {
      expect(e.logp).toHaveLength(e.actions.length);
      expect(Array.from(e.logp!)).toEqual([Number.NaN, -1, Number.NaN, -3]);
    }
    const none = await collectEpisodes(env, policy(false), { seeds: [1, 2] });
    for (const e of none) expect(e.logp).toBeUndefined();
  });
});
