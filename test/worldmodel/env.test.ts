import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { checkEnv, randomAction } from '../../src/env/index.ts';
import { hashObs } from '../../src/env/check.ts';
import { createTabletopEnv } from '../../src/physics/index.ts';
import { packState } from '../../src/task/state.ts';
import { taskIds } from '../../src/task/index.ts';
import {
  ActionCoder,
  assertSameSpec,
  openWorldModelEnv,
  EnsembleDynamics,
  limitsFromScene,
  loadEnsembleDynamics,
  saveWmModel,
  stateLayout,
  TransitionSet,
  WorldModelEnv,
  WorldModelTrainer,
} from '../../src/worldmodel/index.ts';
import { knownDynamicsEpisodes, scene, specOf } from './helpers.ts';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const spec = specOf('tabletop/pick-place');
const layout = stateLayout(scene.objects);

/** A small untrained ensemble (normalisers fitted on synthetic transitions): enough for the contract. */
async function smallModel(steps = 0) {
  const coder = new ActionCoder(spec);
  const trainer = await WorldModelTrainer.create(
    TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(20, 4, 1)),
    null,
    { net: { members: 3, hidden: [32] }, batch: 16, seed: 3 },
  );
  if (steps) await trainer.fit({ steps, evalEvery: steps });
  const params = trainer.params();
  await trainer.close();
  return { config: trainer.config, params };
}

async function makeEnv(
  numEnvs: number,
  opts: { sampling?: 'mean' | 'member'; seed?: number; render?: boolean; reward?: 'phi' | 'shaped' } = {},
) {
  const { config, params } = await smallModel();
  const dynamics = await EnsembleDynamics.create(config, params, layout, limitsFromScene(scene), spec);
  return new WorldModelEnv({ scene, spec, numEnvs, dynamics, ...opts });
}

describe('WorldModelEnv', () => {
  it('passes checkEnv (ensemble mean and member sampling) with the physics spec', async () => {
    for (const sampling of ['mean', 'member'] as const) {
      const env = await makeEnv(3, { sampling, seed: 4 });
      const ran = await checkEnv(env, { steps: 4 });
      expect(ran).toEqual(
        expect.arrayContaining([
          'spec',
          'shapes',
          'seed-determinism',
          'mask-reset',
          'mask-step',
          'snapshot',
          'branching',
          'frame',
        ]),
      );
      assertSameSpec(specOf('tabletop/pick-place'), env.spec);
      const r = await env.step(randomAction(env.spec, 3, new Rng(1)));
      expect(r.info.source).toBe('world-model');
      expect(r.rewardVar).toBeInstanceOf(Float64Array);
      env.close();
    }
  });

  it('starts where physics starts: same state, same pixels, same body poses', async () => {
    const physics = await createTabletopEnv({ scene, taskId: spec.id, numEnvs: 2 });
    const env = await makeEnv(2);
    const a = await physics.reset({ seed: 77 });
    const b = await env.reset({ seed: 77 });
    for (let i = 0; i < 2; i++) {
      const p = packState(physics.state(i));
      const w = packState(env.state(i));
      const off = Math.max(...Array.from(p, (v, j) => Math.abs(v - w[j])));
      expect(off).toBeLessThan(2e-6);
      expect(env.task(i)).toEqual(physics.task(i));
    }
    const img = spec.observation[0].name;
    const pa = a.obs[img] as Uint8Array,
      pb = b.obs[img] as Uint8Array;
    const mae = pa.reduce((s, v, k) => s + Math.abs(v - pb[k]), 0) / pa.length;
    expect(mae).toBeLessThan(0.05);
    const qa = a.obs.proprio as Float32Array,
      qb = b.obs.proprio as Float32Array;
    qa.forEach((v, k) => expect(Math.abs(v - qb[k]), `proprio[${k}]`).toBeLessThan(2e-6));
    const fa = physics.frame(1),
      fb = env.frame(1);
    expect(fb.map((p) => p.name)).toEqual(fa.map((p) => p.name));
    fa.forEach((p, k) => {
      for (let d = 0; d < 3; d++) expect(Math.abs(p.pos[d] - fb[k].pos[d]), `${p.name} pos`).toBeLessThan(1e-4);
      const dot = Math.abs(p.quat.reduce((s, v, d) => s + v * fb[k].quat[d], 0));
      expect(dot, `${p.name} quat`).toBeGreaterThan(1 - 1e-5);
    });
    physics.close();
    env.close();
  });

  it('is deterministic (same seed, same predictions) and branches many futures from one real state', async () => {
    const run = async (sampling: 'mean' | 'member', seed: number) => {
      const env = await makeEnv(4, { sampling, seed, render: false });
      await env.reset({ seed: 5 });
      const rng = new Rng(9);
      const hashes: string[] = [];
      for (let t = 0; t < 3; t++) {
        const r = await env.step(randomAction(spec, 4, rng));
        hashes.push(hashObs(spec, r.obs), Buffer.from(r.reward.buffer).toString('hex'));
      }
      env.close();
      return hashes.join();
    };
    expect(await run('mean', 1)).toBe(await run('mean', 1));
    expect(await run('member', 1)).toBe(await run('member', 1));
    expect(await run('member', 1)).not.toBe(await run('member', 2));

    // Branching: 6 branches from one physics state, each with its own actions.
    const physics = await createTabletopEnv({ scene, taskId: spec.id, numEnvs: 1, render: false });
    await physics.reset({ seed: 31 });
    for (let t = 0; t < 3; t++) await physics.step(randomAction(spec, 1, new Rng(t)));
    const env = await makeEnv(6);
    const start = { seed: physics.task(0).seed, elapsed: physics.elapsed(0), row: packState(physics.state(0)) };
    const r0 = await env.resetFrom(
      [0, 1, 2, 3, 4, 5],
      Array.from({ length: 6 }, () => start),
    );
    expect(r0.info.seeds.every((s) => s === physics.task(0).seed)).toBe(true);
    for (let i = 0; i < 6; i++) expect(packState(env.state(i))).toEqual(packState(physics.state(0)));
    expect(env.elapsed(5)).toBe(3);
    await env.step(randomAction(spec, 6, new Rng(42)));
    const after = new Set(Array.from({ length: 6 }, (_, i) => packState(env.state(i)).join()));
    expect(after.size).toBeGreaterThan(1);
    await expect(env.resetFrom([0, 1], [start])).rejects.toThrow(/1 starts for 2 slots/);
    physics.close();
    env.close();
  });

  it('model files keep the physics spec: a different spec is refused, naming the task', async () => {
    const { config, params } = await smallModel(5);
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-wmenv-'));
    dirs.push(dir);
    const path = join(dir, 'wm.onnx');
    await saveWmModel(
      path,
      config,
      params,
      { objects: scene.objects.map((o) => o.name), specs: { [spec.id]: spec }, command: 'test' },
      3,
      5,
    );
    const ok = await loadEnsembleDynamics(path, scene, spec);
    await ok.dynamics.close();
    const other = { ...spec, maxEpisodeSteps: spec.maxEpisodeSteps + 1 };
    await expect(loadEnsembleDynamics(path, scene, other)).rejects.toThrow(
      /differs from the physics spec of tabletop\/pick-place/,
    );
    await expect(loadEnsembleDynamics(path, scene, specOf('tabletop/push'))).rejects.toThrow(
      /not trained for tabletop\/push/,
    );
    expect(() => assertSameSpec(spec, other)).toThrow(/maxEpisodeSteps/);
  });

  // The registry keys envs by spec.id, which a world-model env shares with its physics env, so the
  // shipped model is covered here instead of by the registry-wide test.
  it.each(taskIds(scene).map((id) => [id]))(
    'the shipped models/wm-base.onnx runs %s and passes checkEnv',
    async (id) => {
      const env = await openWorldModelEnv('models/wm-base.onnx', { scene, spec: specOf(id), numEnvs: 3 });
      try {
        const ran = await checkEnv(env, { steps: 4 });
        expect(ran).toEqual(
          expect.arrayContaining(['spec', 'shapes', 'seed-determinism', 'mask-reset', 'mask-step', 'snapshot']),
        );
      } finally {
        env.close();
      }
    },
  );
  it("reward 'shaped': the members' progress is shapedProgress, finer than Φ's levels, and is the episode's progress", async () => {
    const n = 5; // pick-place predicates
    const K = 3; // ensemble members
    const run = async (reward: 'phi' | 'shaped') => {
      const env = await makeEnv(4, { render: false, reward });
      await env.reset({ seed: 5 });
      const rng = new Rng(9);
      const terms: number[] = [];
      const info: number[] = [];
      for (let t = 0; t < 3; t++) {
        const r = await env.step(randomAction(spec, 4, rng));
        terms.push(...r.info.terms.progress);
        info.push(...r.info.progress);
      }
      env.close();
      return { terms, info };
    };
    const { terms: phi, info: phiInfo } = await run('phi');
    const { terms: shaped, info: shapedInfo } = await run('shaped');
    // phi: the episode's progress is Φ of the stepped state (one of n + 1 levels); shaped: the members' mean
    expect(phiInfo.every((v) => Number.isInteger(v * n))).toBe(true);
    expect(shapedInfo).toEqual(shaped);
    const onGrid = (v: number) => Math.abs(v * n * K - Math.round(v * n * K)) < 1e-9;
    expect(phi.every(onGrid)).toBe(true);
    expect(shaped.filter(onGrid).length).toBeLessThan(shaped.length);
    // same states (deterministic mean stepping): the members' mean shaped value lies in [mean Φ, mean Φ + 1/n)
    shaped.forEach((v, j) => {
      expect(v).toBeGreaterThanOrEqual(phi[j]);
      expect(v).toBeLessThan(phi[j] + 1 / n);
    });
  });
  it('member sampling draws per rollout key: one seed, several keys, any slot, any batch', async () => {
    const env = await makeEnv(4, { sampling: 'member', seed: 5, render: false });
    const single = await makeEnv(1, { sampling: 'member', seed: 5, render: false });
    await env.reset({ seed: [9, 9, 9, 9], keys: [10, 11, 10, 12] });
    await single.reset({ seed: 9, keys: [11] });
    const rng = new Rng(2);
    for (let t = 0; t < 6; t++) {
      const a = randomAction(env.spec, 1, rng);
      const batch = Object.fromEntries(
        Object.entries(a).map(([k, v]) => [k, Int32Array.from({ length: 4 }, () => v[0])]),
      );
      await env.step(batch);
      await single.step(a);
    }
    const st = (e: WorldModelEnv, i: number) => Array.from(packState(e.state(i)));
    expect(st(env, 2)).toEqual(st(env, 0)); // same key: same member sequence
    expect(st(env, 1)).not.toEqual(st(env, 0)); // same seed, another key: another sequence
    expect(st(env, 3)).not.toEqual(st(env, 1));
    expect(st(single, 0)).toEqual(st(env, 1)); // a key's rollout does not depend on its slot or batch
    env.close();
    single.close();
  });
});
