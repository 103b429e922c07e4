import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchAction } from '../../src/env/types.ts';
import { createTabletopEnv } from '../../src/physics/env.ts';
import { ScriptedExpert } from '../../src/physics/expert.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { branchPoints, exactStates, type Rollout } from '../../src/trainer/rollouts.ts';
import { scene } from '../physics/helpers.ts';
import { setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-real-branch-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const metrics = (dir: string): Record<string, number>[] =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const strip = (m: Record<string, number>[]) =>
  m.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => !k.startsWith('time/'))));

describe('exactStates (real-branch): a branch point replayed in physics', () => {
  it('reaches the recorded state exactly, from an initial state or an exact start, and continues as the recording did', {
    timeout: 60_000,
  }, async () => {
    const taskId = 'tabletop/pick-place';
    const rec = await createTabletopEnv({ scene, taskId, numEnvs: 1, render: false });
    const expert = new ScriptedExpert(rec);
    await rec.reset({ seed: [42] });
    const dims = rec.spec.action.map((e) => e.name);
    const rows = [rec.capture(0).row];
    const exactAt = [rec.capture(0, { exact: true }).exact!];
    const tokens: number[] = [];
    for (let t = 0; t < 40; t++) {
      const a: BatchAction = expert.act();
      for (const d of dims) tokens.push(a[d][0]);
      await rec.step(a);
      rows.push(rec.capture(0).row);
      exactAt.push(rec.capture(0, { exact: true }).exact!);
    }
    rec.close();
    // the anchor as the trainer keeps it (states as float32), and a second one that started at step 10
    const rollout = (from: number): Rollout => ({
      key: 0,
      seed: 42,
      reward: 0,
      rewardVar: 0,
      success: false,
      length: 40 - from,
      start: from,
      actions: Int32Array.from(tokens.slice(from * dims.length)),
      states: Float32Array.from(rows.slice(from).flatMap((r) => Array.from(r))),
      samples: [],
    });
    const points = [
      ...branchPoints(0, rollout(0), 10, undefined, {}),
      ...branchPoints(0, rollout(10), 10, undefined, { exact: exactAt[10] }),
    ];
    expect(points.map((p) => p.elapsed)).toEqual([0, 10, 20, 30, 10, 20, 30]);
    const env = await createTabletopEnv({ scene, taskId, numEnvs: 2, render: false });
    const { starts: captured, steps } = await exactStates(env, points);
    // each replay runs from its origin to the point (at least one step): 1+10+20+30 and 1+10+20
    expect(steps).toBe(92);
    points.forEach((p, k) => {
      expect(Array.from(captured[k].row, Math.fround)).toEqual(p.row);
      expect(captured[k].exact).toBeInstanceOf(Uint8Array);
    });
    // from the replayed copy of step 20, the recorded actions give the recorded states
    await env.resetFrom([0], [captured[2]]);
    for (let t = 20; t < 30; t++) {
      const a = Object.fromEntries(dims.map((d, j) => [d, Int32Array.of(tokens[t * dims.length + j], 0)]));
      await env.step(a);
      expect(env.capture(0).row).toEqual(rows[t + 1]);
    }
    // a replay that leaves the recorded path is refused
    const wrong = rollout(0);
    wrong.actions = wrong.actions.map((v, i) => (i % dims.length === 0 ? (v + 3) % 11 : v));
    const bad = branchPoints(0, wrong, 10, undefined, {}).slice(2, 3);
    await expect(exactStates(env, bad)).rejects.toThrow(/left the recorded state/);
    env.close();
  });
});

describe('real-branch mode', () => {
  it("runs mix's groups (same anchors, same branch points) in physics: no world-model step, the branched groups' steps counted as physics", {
    timeout: 60_000,
  }, async () => {
    const run = async (mode: 'mix' | 'real-branch') => {
      const dir = join(tmp, mode);
      await train(setup(), resolveConfig('smoke', { mode, iterations: 3, groupsPerIteration: 4 }), dir);
      return metrics(dir);
    };
    const mix = await run('mix');
    const branch = await run('real-branch');
    for (const m of branch) {
      expect(m['steps/world_model']).toBe(0);
      expect(m['groups/anchor']).toBe(1);
      expect(m['groups/wm']).toBe(3);
      expect(m['groups/branched']).toBe(3);
    }
    // iteration 0: the same policy, so the same anchors and branch points; mix ran the branched
    // rollouts in its "world model" (here the true env, so the same rollouts), real-branch in physics
    expect(branch[0]['branch/pool']).toBe(mix[0]['branch/pool']);
    expect(branch[0]['reward/wm']).toBe(mix[0]['reward/wm']);
    expect(branch[0]['reward/anchor']).toBe(mix[0]['reward/anchor']);
    expect(branch[0]['steps/physics']).toBeGreaterThan(mix[0]['steps/physics']);
  });

  it('resumes exactly (the pool keeps how to replay to each branch point)', { timeout: 60_000 }, async () => {
    const cfg = resolveConfig('smoke', { mode: 'real-branch', iterations: 4, checkpointEvery: 2 });
    const whole = join(tmp, 'whole');
    await train(setup(), cfg, whole);
    const cut = join(tmp, 'cut');
    let n = 0;
    await train(setup(), cfg, cut, { shouldStop: () => ++n >= 2 });
    expect(metrics(cut).length).toBe(2);
    await train(setup(), cfg, cut, { resume: true });
    expect(strip(metrics(cut))).toEqual(strip(metrics(whole)));
  });
});
