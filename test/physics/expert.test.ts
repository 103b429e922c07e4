import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { randomAction } from '../../src/env/check.ts';
import { createTabletopEnv, type TabletopEnv } from '../../src/physics/env.ts';
import { ScriptedExpert } from '../../src/physics/expert.ts';
import type { BatchAction } from '../../src/env/types.ts';
import { splitSeed } from '../../src/task/families.ts';
import { scene } from './helpers.ts';

/** Runs one batch of episodes (env i from seeds[i]) to the end; returns how many succeeded. */
async function episodes(env: TabletopEnv, seeds: number[], policy: () => BatchAction): Promise<number> {
  await env.reset({ seed: seeds });
  const done = new Array(seeds.length).fill(false);
  let ok = 0;
  for (let t = 0; t < env.spec.maxEpisodeSteps && done.includes(false); t++) {
    const r = await env.step(policy());
    for (let i = 0; i < seeds.length; i++) {
      if (done[i] || !(r.terminated[i] || r.truncated[i])) continue;
      done[i] = true;
      ok += r.terminated[i];
    }
  }
  return ok;
}

describe('ScriptedExpert', () => {
  // The full bar (>= 95% on 200 train and 200 held-out episodes per family) is measured in a script;
  // here 10 train and 5 held-out episodes per family, at most one failure in all.
  for (const task of scene.tasks) {
    it(`solves ${task.id} on train and held-out seeds`, async () => {
      const seeds = [
        ...Array.from({ length: 10 }, (_, k) => splitSeed(scene, 'train', 300 + k)),
        ...Array.from({ length: 5 }, (_, k) => splitSeed(scene, 'heldout', 300 + k)),
      ];
      const env = await createTabletopEnv({ scene, taskId: task.id, numEnvs: seeds.length, render: false });
      const expert = new ScriptedExpert(env);
      const ok = await episodes(env, seeds, () => expert.act());
      expect(env.task(12).split).toBe('heldout');
      expect(ok).toBeGreaterThanOrEqual(seeds.length - 1);
      env.close();
    });
  }

  it('beats the random policy', async () => {
    const seeds = Array.from({ length: 6 }, (_, k) => 40 + k);
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/pick-place', numEnvs: seeds.length, render: false });
    const rng = new Rng(8);
    const random = await episodes(env, seeds, () => randomAction(env.spec, seeds.length, rng));
    expect(random).toBeLessThanOrEqual(1);
    const expert = new ScriptedExpert(env);
    expect(await episodes(env, seeds, () => expert.act())).toBeGreaterThanOrEqual(5);
    env.close();
  });
});
