import { describe, expect, it } from 'vitest';
import type { BatchAction, StepResult } from '../../src/env/types.ts';
import { createTabletopEnv } from '../../src/physics/env.ts';
import { ScriptedExpert } from '../../src/physics/expert.ts';
import { scene } from './helpers.ts';

const taskId = 'tabletop/pick-place';
/** Env `i` of a batch as a one-env row: its image, proprio, reward, termination and Φ. */
const rowOf = (r: Pick<StepResult, 'obs'> & Partial<StepResult>, i: number, n: number) => {
  const image = r.obs.image_front as Uint8Array;
  const size = image.length / n;
  return {
    image: Buffer.from(image.subarray(i * size, (i + 1) * size)).toString('base64'),
    proprio: Array.from((r.obs.proprio as Float32Array).subarray(7 * i, 7 * i + 7)),
    reward: r.reward?.[i],
    terminated: r.terminated?.[i],
    truncated: r.truncated?.[i],
    progress: r.info?.progress[i],
  };
};
const slice = (a: BatchAction, i: number, n: number, slot: number): BatchAction =>
  Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, Int32Array.from({ length: n }, (_, j) => (j === slot ? v[i] : 0))]),
  );

describe('physics resetFrom', () => {
  it('starts a recorded state exactly: the rest of the episode is the recorded one, byte for byte, in any env and slot', async () => {
    // the recording: the scripted expert grasping (contacts, finger motors) in env 1 of two
    const rec = await createTabletopEnv({ scene, taskId, numEnvs: 2 });
    const expert = new ScriptedExpert(rec);
    await rec.reset({ seed: [41, 42] });
    for (let t = 0; t < 30; t++) await rec.step(expert.act());
    const start = rec.capture(1, { exact: true });
    expect(start).toMatchObject({ seed: 42, elapsed: 30 });
    const actions: BatchAction[] = [];
    const recorded = [];
    for (let t = 0; t < 40; t++) {
      const a = expert.act();
      actions.push(a);
      recorded.push(rowOf(await rec.step(a), 1, 2));
    }
    expect(recorded.at(-1)!.progress).toBeGreaterThan(0.5); // the segment holds the grasp and the lift

    // the branch: another env size, another slot, after other episodes
    const env = await createTabletopEnv({ scene, taskId, numEnvs: 3 });
    await env.reset({ seed: 7 });
    await env.step(new ScriptedExpert(env).act());
    const out = await env.resetFrom([2], [start]);
    expect(env.elapsed(2)).toBe(30);
    expect(out.info.seeds[2]).toBe(42);
    let differing = 0;
    for (let t = 0; t < actions.length; t++) {
      const r = rowOf(await env.step(slice(actions[t], 1, 3, 2)), 2, 3);
      if (JSON.stringify(r) !== JSON.stringify(recorded[t])) differing++;
    }
    expect(differing).toBe(0);
    rec.close();
    env.close();
  });

  it('refuses a start without the exact copy, naming what is missing', async () => {
    const env = await createTabletopEnv({ scene, taskId, numEnvs: 1, render: false });
    await env.reset({ seed: 3 });
    const { exact: _exact, ...rowOnly } = env.capture(0, { exact: true });
    await expect(env.resetFrom([0], [rowOnly])).rejects.toThrow(/starts\[0\] has no exact snapshot/);
    await expect(env.resetFrom([0], [{ ...rowOnly, elapsed: 500 }])).rejects.toThrow(
      /starts\[0\]\.elapsed must be an integer in \[0, /,
    );
    env.close();
  });
});
