import { describe, expect, it } from 'vitest';
import type { BatchAction } from '../../src/env/types.ts';
import { emptyAction, encodeAction, putTokens } from '../../src/physics/actions.ts';
import { createTabletopEnv } from '../../src/physics/env.ts';
import { ScriptedExpert } from '../../src/physics/expert.ts';
import { splitSeed, taskIds } from '../../src/task/index.ts';
import { RepeatPenaltySchema, degenerateSteps, repeatPenalty } from '../../src/trainer/repeat.ts';
import { scene } from '../physics/helpers.ts';

const config = RepeatPenaltySchema.parse({ coef: 1 });

/** One physics episode of `act` (step t -> action), recording action tokens and capture() rows. */
async function rollout(taskId: string, seed: number, act: (t: number, expert: ScriptedExpert) => BatchAction) {
  const env = await createTabletopEnv({ scene, taskId, numEnvs: 1, render: false });
  try {
    await env.reset({ seed: [seed] });
    const expert = new ScriptedExpert(env);
    const actions: number[] = [];
    const states: number[] = Array.from(env.capture(0).row);
    let length = 0;
    for (;;) {
      const a = act(length, expert);
      const r = await env.step(a);
      for (const e of env.spec.action) actions.push((a[e.name] as Int32Array)[0]);
      states.push(...Array.from(env.capture(0).row));
      length++;
      if (r.terminated[0] || r.truncated[0]) return { actions, states, length, success: r.info.success[0] === 1 };
    }
  } finally {
    env.close();
  }
}

const fixed = (move: { dx?: number; dz?: number }, grip = 0) => {
  const a = emptyAction(1);
  putTokens(a, 0, encodeAction(scene.control, { dx: 0, dy: 0, dz: 0, dyaw: 0, ...move, grip }));
  return a;
};

describe("River's repeat penalty on physics rollouts", () => {
  it('does not fire on the scripted expert of any family', { timeout: 120_000 }, async () => {
    for (const taskId of taskIds(scene))
      for (const k of [0, 1]) {
        const r = await rollout(taskId, splitSeed(scene, 'train', k), (_t, expert) => expert.act());
        expect(r.success).toBe(true);
        expect(degenerateSteps(r.actions, r.states, r.length, config)).toBe(0);
        expect(repeatPenalty(r, config)).toBe(0);
      }
  });

  it('fires on a rollout that keeps the arm still, or pushes it into the table, or shakes it back and forth', {
    timeout: 60_000,
  }, async () => {
    const seed = splitSeed(scene, 'train', 0);
    const still = await rollout('tabletop/push', seed, () => fixed({}));
    expect(degenerateSteps(still.actions, still.states, still.length, config)).toBeGreaterThan(still.length - 10);
    expect(repeatPenalty(still, config)).toBeGreaterThan(0.9);
    const down = await rollout('tabletop/push', seed, () => fixed({ dz: -0.05 }));
    expect(repeatPenalty(down, config)).toBeGreaterThan(0.5);
    const centre = (scene.control.bins - 1) / 2;
    const shake = await rollout('tabletop/push', seed, (t) => {
      const a = fixed({});
      a.dx[0] = centre + (t % 2 ? 2 : -2); // one bin pair symmetric about no motion
      return a;
    });
    expect(repeatPenalty(shake, config)).toBeGreaterThan(0.5);
    expect(repeatPenalty(shake, { ...config, coef: 0 })).toBe(0);
  });
});
