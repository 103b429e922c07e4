import { describe, expect, it } from 'vitest';
import { createTabletopEnv } from '../../src/physics/env.ts';
import { expertStart } from '../../src/physics/expert-start.ts';
import { ScriptedExpert } from '../../src/physics/expert.ts';
import { splitSeed } from '../../src/task/index.ts';
import { scene } from './helpers.ts';

describe('expertStart', () => {
  const taskId = 'tabletop/stack';
  const seed = splitSeed(scene, 'train', 3);

  it('remaining 1 is the initial state; less starts later on the expert episode, from where the expert succeeds', {
    timeout: 60_000,
  }, async () => {
    const env = await createTabletopEnv({ scene, taskId, numEnvs: 2, render: false });
    try {
      await env.reset({ seed: [seed, seed] });
      const { start: initial, steps } = await expertStart(scene, taskId, seed, 1);
      expect(initial.elapsed).toBe(0);
      expect(Array.from(initial.row)).toEqual(Array.from(env.capture(0).row));
      const { start: late } = await expertStart(scene, taskId, seed, 0.25);
      const { start: half } = await expertStart(scene, taskId, seed, 0.5);
      expect(half.elapsed).toBeGreaterThan(10);
      expect(steps).toBeGreaterThan(late.elapsed); // the pass ran the whole expert episode
      expect(late.elapsed).toBeGreaterThan(half.elapsed);
      expect(late.exact).toBeInstanceOf(Uint8Array);
      await env.resetFrom([0, 1], [half, late]);
      expect(env.capture(1).elapsed).toBe(late.elapsed);
      const expert = new ScriptedExpert(env);
      const ended = [false, false];
      const success = [false, false];
      for (let t = 0; t < 100 && !(ended[0] && ended[1]); t++) {
        const r = await env.step(expert.act());
        for (const i of [0, 1])
          if (!ended[i] && (r.terminated[i] || r.truncated[i])) {
            ended[i] = true;
            success[i] = r.info.success[i] === 1;
          }
      }
      expect(success).toEqual([true, true]);
    } finally {
      env.close();
    }
  });

  it('remaining outside (0, 1] is refused', async () => {
    await expect(expertStart(scene, taskId, seed, 0)).rejects.toThrow(/remaining/);
  });

  it('only train seeds start groups (validation and held-out seeds may name reserved pairs)', async () => {
    for (const split of ['validation', 'heldout'] as const)
      await expect(expertStart(scene, taskId, splitSeed(scene, split, 0), 0.5)).rejects.toThrow(/train split/);
  });
});
