import { describe, expect, it } from 'vitest';
import type { BatchAction } from '../../src/env/types.ts';
import { expertPolicy } from '../../src/eval/index.ts';
import { runEpisodes } from '../../src/physics/index.ts';
import { sampleTask, stateSize, unpackState } from '../../src/task/index.ts';
import {
  type Dynamics,
  familyVerdict,
  finalMisses,
  gradeVerdicts,
  type Prediction,
  verdictCounts,
  verdictSegments,
  WorldModelEnv,
} from '../../src/worldmodel/index.ts';
import { scene, specOf } from './helpers.ts';

const taskId = 'tabletop/stack';
const S = stateSize(scene.objects.length);
/** A state's float32 values without the object velocities (a perturbed velocity still finds its row). */
const key = (v: ArrayLike<number>, o: number) =>
  Array.from({ length: S }, (_, j) => j)
    .filter((j) => j < 6 || (j - 6) % 10 < 7)
    .map((j) => Math.fround(v[o + j]))
    .join(',');

/** A "world model" that knows the recorded physics: the next recorded state of the state it is in, with
 *  `vz` added to the vertical velocity of every object on top of another (centre above 5 cm). */
function oracle(rollouts: { length: number; states: Float32Array }[], vz = 0): Dynamics {
  const next = new Map<string, Float64Array>();
  for (const r of rollouts)
    for (let t = 0; t < r.length; t++) {
      const n = Float64Array.from(r.states.subarray((t + 1) * S, (t + 2) * S));
      for (let i = 0; i < scene.objects.length; i++) if (n[6 + 10 * i + 2] > 0.05) n[6 + 10 * i + 9] += vz;
      next.set(key(r.states, t * S), n);
    }
  return {
    members: 1,
    start() {},
    async predict(states: Float64Array, _a: BatchAction, rows: readonly number[]): Promise<Prediction> {
      const mean = new Float64Array(rows.length * S);
      rows.forEach((row, r) => mean.set(next.get(key(states, row * S))!, r * S));
      return { members: mean.slice(), mean };
    },
    close() {},
  };
}

describe("the world model's success verdict", () => {
  it('cuts the trainer segments: every `every` steps, `horizon` long or to the end, positive where physics ends in success', () => {
    const r = { seed: 0, length: 12, success: true, actions: new Int32Array(), states: new Float32Array() };
    expect(verdictSegments([r, { ...r, success: false }], 5, 10)).toEqual([
      { rollout: 0, elapsed: 0, steps: 10, env: false },
      { rollout: 0, elapsed: 5, steps: 7, env: true },
      { rollout: 0, elapsed: 10, steps: 2, env: true },
      { rollout: 1, elapsed: 0, steps: 10, env: false },
      { rollout: 1, elapsed: 5, steps: 7, env: false },
      { rollout: 1, elapsed: 10, steps: 2, env: false },
    ]);
  });

  it('counts TP/FP/FN/TN with Wilson intervals', () => {
    const pairs = [
      ...Array(8).fill({ env: true, wm: true }),
      ...Array(2).fill({ env: true, wm: false }),
      { env: false, wm: true },
      ...Array(5).fill({ env: false, wm: false }),
    ];
    const c = verdictCounts(pairs);
    expect([c.tp, c.fp, c.fn, c.tn, c.segments]).toEqual([8, 1, 2, 5, 16]);
    expect(c.precision.rate).toBeCloseTo(8 / 9);
    expect(c.recall.rate).toBeCloseTo(0.8);
    expect(c.recall.n).toBe(10);
    expect(c.recall.low).toBeGreaterThan(0.4);
    expect(c.recall.high).toBeLessThan(1);
    expect(verdictCounts([]).precision).toEqual({ rate: 0, low: 0, high: 1, n: 0 });
  });

  it('names the part of the stacked stage a state misses', () => {
    const task = sampleTask(scene, taskId, 3);
    const t = task.initObjects[task.target.index].pos;
    const state = unpackState(new Float64Array(S), scene.objects.length);
    task.initObjects.forEach((o, i) => {
      state.objects[i].pos = [...o.pos];
      state.objects[i].quat = [0, 0, 0, 1];
    });
    state.objects[task.object].pos = [t[0], t[1], t[2] + 0.04];
    state.eePos = [t[0], t[1], 0.2];
    state.fingers = [0.04, 0.04];
    expect(Object.values(finalMisses(scene, task, state).holds).every(Boolean)).toBe(true);
    state.objects[task.object].linVel = [0, 0, -0.3];
    state.objects[task.object].pos[2] -= 0.005;
    const m = finalMisses(scene, task, state);
    expect(Object.keys(m.holds).filter((k) => !m.holds[k])).toEqual(['still']);
    expect(m.speed).toBeCloseTo(0.3);
    expect(m.zError).toBeCloseTo(0.005);
  });

  it('against the recorded physics itself: every success seen at its step; a lagging velocity misses "still"', async () => {
    const spec = specOf(taskId);
    const eps = await runEpisodes({
      scene,
      taskId,
      policyName: 'expert',
      episodes: 2,
      split: 'train',
      seedOffset: 0,
      numEnvs: 2,
      recordStates: true,
      makePolicy: (env) => expertPolicy(env),
    });
    const rollouts = eps.map((e) => ({ ...e, states: e.states! }));
    expect(rollouts.every((r) => r.success)).toBe(true);
    const grade = async (vz: number) => {
      const wm = new WorldModelEnv({ scene, spec, numEnvs: 4, dynamics: oracle(rollouts, vz), render: false });
      const segs = await gradeVerdicts(wm, rollouts, { every: 5, horizon: 10 });
      wm.close();
      return familyVerdict(scene, taskId, rollouts, segs);
    };
    const exact = await grade(0);
    expect(exact.family).toBe('stack');
    expect([exact.tp, exact.fp, exact.fn]).toEqual([4, 0, 0]);
    expect(exact.tp_same_step).toBe(4);
    expect(exact.recall.rate).toBe(1);
    const lagging = await grade(-0.3);
    expect([lagging.tp, lagging.fp, lagging.fn]).toEqual([0, 0, 4]);
    expect(lagging.fn_only).toEqual({ still: 4 });
    expect(lagging.fn_median.speed).toBeGreaterThan(0.25);
  });
});
