import { describe, expect, it } from 'vitest';
import { Hasher } from '../../src/core/hash.ts';
import { Rng } from '../../src/core/rng.ts';
import { checkEnv, randomAction } from '../../src/env/check.ts';
import { hasFrame, hasSnapshot } from '../../src/env/types.ts';
import { createTabletopEnv, type TabletopEnv } from '../../src/physics/env.ts';
import { PROPRIO } from '../../src/tabletop/spec.ts';
import { sceneBodies } from '../../src/scene/bodies.ts';
import { scene, stateHash } from './helpers.ts';

const N = 2;
const states = (env: TabletopEnv) => Array.from({ length: env.numEnvs }, (_, i) => env.state(i));

/** Steps with seeded random tokens; returns a hash of every state, reward and image along the way. */
async function play(env: TabletopEnv, steps: number, seed: number): Promise<string> {
  const rng = new Rng(seed, 9);
  const h = new Hasher();
  for (let t = 0; t < steps; t++) {
    const r = await env.step(randomAction(env.spec, env.numEnvs, rng));
    h.update(stateHash(states(env)))
      .update(r.reward)
      .update(r.info.progress)
      .update(r.obs.proprio as Float32Array)
      .update(r.obs.image_front as Uint8Array);
  }
  return h.digest();
}

describe('TabletopEnv', () => {
  it('passes checkEnv for every task family', async () => {
    for (const task of scene.tasks) {
      const env = await createTabletopEnv({ scene, taskId: task.id, numEnvs: N });
      const ran = await checkEnv(env, { steps: 4 });
      expect(ran).toEqual(
        expect.arrayContaining([
          'spec',
          'seed-determinism',
          'mask-reset',
          'mask-step',
          'snapshot',
          'branching',
          'frame',
        ]),
      );
      env.close();
    }
  });

  it('has a spec with named image, proprio, instruction and token entries', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/stack', numEnvs: 1, render: false });
    expect(env.spec.id).toBe('tabletop/stack');
    expect(env.spec.observation.map((o) => o.name)).toEqual(['image_front', 'proprio', 'instruction']);
    expect(env.spec.observation[1]).toMatchObject({ kind: 'box', shape: [PROPRIO.length] });
    expect(env.spec.action.map((a) => [a.name, a.kind === 'discrete' ? a.n : 0])).toEqual([
      ['dx', scene.control.bins],
      ['dy', scene.control.bins],
      ['dz', scene.control.bins],
      ['dyaw', scene.control.bins],
      ['grip', scene.control.gripperBins],
    ]);
    expect(env.spec.maxEpisodeSteps).toBe(scene.tasks.find((t) => t.id === 'tabletop/stack')!.maxEpisodeSteps);
    await expect(createTabletopEnv({ scene, taskId: 'tabletop/nope', numEnvs: 1 })).rejects.toThrow(/tabletop\/nope/);
    await expect(createTabletopEnv({ scene, taskId: 'tabletop/push', numEnvs: 1, cameras: ['side'] })).rejects.toThrow(
      /camera "side"/,
    );
    env.close();
  });

  it('gives env i seed + i and continues each env on its own sequence', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/push', numEnvs: 3, render: false });
    const a = await env.reset({ seed: 40 });
    expect(Array.from(a.info.seeds)).toEqual([40, 41, 42]);
    expect(a.info.instruction).toEqual([0, 1, 2].map((i) => env.task(i).instruction));
    const b = await env.reset();
    expect(Array.from(b.info.seeds)).toEqual([43, 44, 45]);
    expect(env.task(1).seed).toBe(44);
    env.close();
  });

  it('is bit-identical across two fresh envs with the same seed and actions', async () => {
    const hashes = [];
    for (let k = 0; k < 2; k++) {
      const env = await createTabletopEnv({ scene, taskId: 'tabletop/pick-place', numEnvs: N });
      await env.reset({ seed: 7 });
      hashes.push(await play(env, 30, 1));
      env.close();
    }
    expect(hashes[0]).toBe(hashes[1]);
  });

  it('continues bit-identically after snapshot/restore, also versus an uninterrupted env', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/push', numEnvs: N });
    expect(hasSnapshot(env)).toBe(true);
    await env.reset({ seed: 11 });
    await play(env, 10, 2);
    const snap = env.snapshot();
    const first = await play(env, 20, 3);
    env.restore(snap);
    const second = await play(env, 20, 3);
    env.restore(snap);
    const third = await play(env, 20, 3);
    expect(second).toBe(first);
    expect(third).toBe(first);

    const fresh = await createTabletopEnv({ scene, taskId: 'tabletop/push', numEnvs: N });
    await fresh.reset({ seed: 11 });
    await play(fresh, 10, 2);
    expect(await play(fresh, 20, 3)).toBe(first);
    env.close();
    fresh.close();
  });

  it('resets only the masked envs', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/put-in-bin', numEnvs: 3 });
    await env.reset({ seed: 100 });
    await play(env, 5, 4);
    const before = [0, 1, 2].map((i) => stateHash([env.state(i)]));
    const task0 = env.task(0);
    const r = await env.reset({ seed: 500, mask: [false, true, false] });
    expect(Array.from(r.info.seeds)).toEqual([100, 501, 102]);
    expect(env.task(0)).toBe(task0);
    expect(stateHash([env.state(0)])).toBe(before[0]);
    expect(stateHash([env.state(2)])).toBe(before[2]);
    expect(stateHash([env.state(1)])).not.toBe(before[1]);
    expect(env.elapsed(0)).toBe(5);
    expect(env.elapsed(1)).toBe(0);
    env.close();
  });

  it('renders the camera and reports the poses of every moving body by scene name', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/pick-place', numEnvs: 1 });
    const r0 = await env.reset({ seed: 3 });
    const img0 = r0.obs.image_front as Uint8Array;
    expect(img0.length).toBe(64 * 64 * 3);
    expect(new Set(img0).size).toBeGreaterThan(8);
    const up = {
      dx: new Int32Array([10]),
      dy: new Int32Array([10]),
      dz: new Int32Array([10]),
      dyaw: new Int32Array([5]),
      grip: new Int32Array([0]),
    };
    const r1 = await env.step(up);
    expect(Buffer.compare(Buffer.from(img0), Buffer.from(r1.obs.image_front as Uint8Array))).not.toBe(0);
    expect(hasFrame(env)).toBe(true);
    const moving = sceneBodies(scene)
      .filter((b) => !b.pose)
      .map((b) => b.name);
    expect(
      env
        .frame(0)
        .map((p) => p.name)
        .sort(),
    ).toEqual(moving.sort());
    const p = r1.obs.proprio as Float32Array;
    const s = env.state(0);
    expect(p[0]).toBeCloseTo(s.eePos[0], 6);
    expect(p[3]).toBeCloseTo(s.eeYaw, 6);
    expect(p[6]).toBe(0);
    env.close();
  });
});
