// The handover probe: the scripted expert acts for the first K steps of every episode, then the policy.
import { describe, expect, it } from 'vitest';
import { handoverPolicy, handoverTable, runEval, runHandoverSweep } from '../../src/eval/index.ts';
import { createTabletopEnv } from '../../src/physics/index.ts';
import { collectEpisodes, type Policy } from '../../src/rollout/index.ts';
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

describe('the handover sweep', () => {
  it('runs each K on the same seeds as a single evaluation would, and tabulates them with the paired difference', async () => {
    const opts = {
      scene,
      tasks: ['tabletop/pick-place'],
      policies: ['expert', 'random'],
      split: 'heldout' as const,
      episodes: 4,
      seed: 0,
      temperature: 1,
      numEnvs: 4,
    };
    const seen: number[] = [];
    const points = await runHandoverSweep(opts, [0, 100], (p) => seen.push(p.k));
    expect(seen).toEqual([0, 100]);
    expect(points[1].report).toEqual(await runEval({ ...opts, handover: 100 }));
    const lines = handoverTable(points).split('\n');
    expect(lines[0]).toBe('| K | policy | pick-place | overall |');
    expect(lines.slice(2, 8)).toEqual([
      '| 0 | expert | 100% | 100% |',
      '| 0 | random | 0% | 0% |',
      '| 0 | paired A - B, points | +100.0 [+100.0, +100.0] | +100.0 [+100.0, +100.0] |',
      '| 100 | expert | 100% | 100% |',
      '| 100 | random | 100% | 100% |',
      '| 100 | paired A - B, points | +0.0 [+0.0, +0.0] | +0.0 [+0.0, +0.0] |',
    ]);
  }, 120_000);
});

describe('handoverPolicy', () => {
  it('keeps an episode’s logp one entry per token: NaN for the expert’s, the model’s own after', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/pick-place', numEnvs: 2, render: false });
    const dims = env.spec.action.map((a) => a.name);
    // a "model" that always asks for token 0 and reports its log-probability as -1 - step
    const model: Policy = {
      act: (_obs, ctx) => ({
        actions: Object.fromEntries(dims.map((d) => [d, new Int32Array(2)])),
        logp: Object.fromEntries(dims.map((d) => [d, Float32Array.from(ctx.steps, (t) => -1 - t)])),
      }),
    };
    const k = 3;
    try {
      // slots start out of step (the third episode begins when the first ends), so some steps mix both
      const eps = await collectEpisodes(env, handoverPolicy(env, model, k), {
        seeds: [0, 1, 2],
        horizons: [5, 9, 6],
      });
      for (const e of eps) {
        expect(e.logp).toHaveLength(e.actions.length);
        const perStep = Array.from({ length: e.length }, (_, t) => e.logp![t * dims.length]);
        expect(perStep).toEqual(Array.from({ length: e.length }, (_, t) => (t < k ? Number.NaN : -1 - t)));
      }
    } finally {
      env.close();
    }
  }, 60_000);
});
