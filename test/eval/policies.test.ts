import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import type { BatchObs } from '../../src/env/index.ts';
import { policySource, runEval } from '../../src/eval/index.ts';
import { runEpisodes } from '../../src/physics/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { PolicySampler, temperedLogp } from '../../src/policy/sampler.ts';
import type { Policy } from '../../src/rollout/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const TINY = join(import.meta.dirname, '../../models/tiny-policy.onnx');

/** Five episodes of one policy at a given number of parallel envs: everything they recorded. `wrap`
 *  sees the policy the source made for the env. */
async function run(
  name: string,
  numEnvs: number,
  o: { noise?: number; temperature?: number } = {},
  wrap: (policy: Policy, dims: string[]) => Policy = (p) => p,
) {
  const source = await policySource(name, { seed: 3, ...o });
  try {
    const episodes = await runEpisodes({
      scene,
      taskId: 'tabletop/pick-place',
      policyName: name,
      episodes: 5,
      split: 'train',
      seedOffset: 20,
      numEnvs,
      recordStates: true,
      makePolicy: (env) =>
        wrap(
          source.make(env),
          env.spec.action.filter((a) => a.kind === 'discrete').map((a) => a.name),
        ),
    });
    return episodes.map((e) => ({
      ...e,
      actions: Array.from(e.actions),
      rewards: Array.from(e.rewards),
      states: Array.from(e.states!),
      logp: e.logp && Array.from(e.logp),
    }));
  } finally {
    await source.close();
  }
}

describe('policy random draws derive from (seed, episode, step), never from the batch layout', () => {
  const cases: [string, string, { noise?: number; temperature?: number }][] = [
    ['noisy expert', 'expert', { noise: 0.3 }],
    ['random tokens', 'random', {}],
    ['a sampled model policy', TINY, { temperature: 1 }],
  ];
  for (const [what, name, o] of cases) {
    it(`${what}: identical episodes at 1, 3 and 5 parallel envs`, async () => {
      const one = await run(name, 1, o);
      expect(await run(name, 3, o)).toEqual(one);
      expect(await run(name, 5, o)).toEqual(one);
      // The draws differ between episodes (not one stream replayed in every slot).
      expect(one[1].actions.slice(0, 10)).not.toEqual(one[0].actions.slice(0, 10));
    });
  }

  it('a model policy records the log-probability of every executed token under the distribution it drew from', async () => {
    // Every batch the policy acted on, as it was then (the env reuses its buffers, ctx is mutated).
    const acted: { obs: BatchObs; keys: number[]; steps: number[]; actions: Record<string, Int32Array> }[] = [];
    let dims: string[] = [];
    const tap = (policy: Policy, names: string[]): Policy => {
      dims = names;
      return {
        async act(obs, ctx) {
          const out = await policy.act(obs, ctx);
          const copy = Object.fromEntries(Object.entries(obs).map(([k, v]) => [k, v.slice()])) as BatchObs;
          const actions = Object.fromEntries(dims.map((d) => [d, Int32Array.from(out.actions[d])]));
          acted.push({ obs: copy, keys: Array.from(ctx.keys), steps: Array.from(ctx.steps), actions });
          return out;
        },
      };
    };
    // Temperature 0.5 samples from sharpened logits; what is recorded is the log-probability under the
    // distribution the token was drawn from (log softmax(logp / 0.5)).
    const episodes = await run(TINY, 2, { temperature: 0.5 }, tap);

    // The tempered log-probability of each executed token, from a forward pass on the same batch.
    const model = await loadPolicy(TINY);
    const sampler = await PolicySampler.create(model.config, model.params);
    const expected = new Map(episodes.map((e) => [e.seed, new Array<number>(e.actions.length).fill(Number.NaN)]));
    try {
      for (const { obs, keys, steps, actions } of acted) {
        const f = await sampler.forward(obs, keys.length);
        keys.forEach((key, i) => {
          if (key < 0) return; // an idle slot
          dims.forEach((d, t) => {
            const bins = model.config.actions.find((a) => a.name === d)!.n;
            expected.get(key)![steps[i] * dims.length + t] = Math.fround(
              temperedLogp(f.logp[d], i * bins, bins, 0.5, actions[d][i]),
            );
          });
        });
      }
    } finally {
      await sampler.close();
    }
    for (const e of episodes) {
      expect(e.logp!.length).toBe(e.actions.length);
      expect(e.logp).toEqual(expected.get(e.seed)); // bit for bit, both float32
    }
  });
});

describe('eval --compare', () => {
  it('loads both policies before running either: a bad second file fails before any episode', async () => {
    let episodes = 0;
    const run = runEval({
      scene,
      tasks: ['tabletop/push'],
      policies: [TINY, 'models/no-such-policy.onnx'],
      split: 'heldout',
      episodes: 3,
      seed: 0,
      temperature: 1,
      numEnvs: 3,
      flag: '--compare',
      onEpisode: () => episodes++,
    });
    await expect(run).rejects.toThrow(InputError);
    await expect(run).rejects.toThrow(/--compare: model file "models\/no-such-policy.onnx" does not exist/);
    expect(episodes).toBe(0);
  });
});
