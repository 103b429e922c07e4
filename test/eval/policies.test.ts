import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { policySource, runEval } from '../../src/eval/index.ts';
import { runEpisodes } from '../../src/physics/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const TINY = join(import.meta.dirname, '../../models/tiny-policy.onnx');

/** Five episodes of one policy at a given number of parallel envs: everything they recorded. */
async function run(name: string, numEnvs: number, o: { noise?: number; temperature?: number } = {}) {
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
      makePolicy: (env) => source.make(env),
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

  it('a model policy records the sampler log-probability of every executed token', async () => {
    const [e] = await run(TINY, 2, { temperature: 1 });
    expect(e.logp!.length).toBe(e.actions.length);
    expect(e.logp!.every((x) => Number.isFinite(x) && x <= 0)).toBe(true);
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
