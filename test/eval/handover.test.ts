// The handover probe: the scripted expert acts for the first K steps of every episode, then the policy.
import { describe, expect, it } from 'vitest';
import { runEval } from '../../src/eval/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const run = (policy: string, handover?: number) =>
  runEval({
    scene,
    tasks: ['tabletop/pick-place'],
    policies: [policy],
    split: 'heldout',
    episodes: 6,
    seed: 0,
    temperature: 1,
    numEnvs: 3,
    handover,
  });

describe('eval --handover', () => {
  it('a random policy handed over after the whole episode has the expert’s outcomes; before, its own', async () => {
    const expert = (await run('expert')).policies[0].outcomes;
    const random = (await run('random')).policies[0].outcomes;
    const late = await run('random', 100);
    expect(late.handover).toBe(100);
    expect(late.policies[0].outcomes).toEqual(expert);
    const successes = (o: (0 | 1)[]) => o.filter((x) => x === 1).length;
    expect(successes(expert['tabletop/pick-place'])).toBeGreaterThan(successes(random['tabletop/pick-place']));
    const none = await run('random', 0);
    expect(none.handover).toBeUndefined();
    expect(none.policies[0].outcomes).toEqual(random);
  }, 120_000);
});
