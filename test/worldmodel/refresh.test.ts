import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ActionCoder,
  evaluateDynamics,
  OnlineWorldModel,
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

describe('online refresh', () => {
  it('adds physics episodes, retrains warm-started for a step count and re-bakes the shared dynamics', async () => {
    const spec = specOf('tabletop/push');
    const coder = new ActionCoder(spec);
    const layout = stateLayout(scene.objects);
    const trainer = await WorldModelTrainer.create(
      TransitionSet.fromEpisodes(layout, coder, knownDynamicsEpisodes(200, 6, 1)),
      null,
      { net: { members: 2, hidden: [48, 48] }, batch: 64, seed: 1 },
    );
    await trainer.fit({ steps: 30, lr: 3e-3, evalEvery: 30 }); // barely trained
    const dir = await mkdtemp(join(tmpdir(), 'wmrl-refresh-'));
    dirs.push(dir);
    const path = join(dir, 'wm.onnx');
    await saveWmModel(
      path,
      trainer.config,
      trainer.params(),
      { objects: scene.objects.map((o) => o.name), specs: { [spec.id]: spec }, command: 'test' },
      1,
      30,
    );
    await trainer.close();

    const val = knownDynamicsEpisodes(10, 6, 2);
    const online = await OnlineWorldModel.open(path, scene, spec, { val, batch: 64 });
    const env = new WorldModelEnv({
      scene,
      spec,
      numEnvs: 2,
      dynamics: online.dynamics,
      render: false,
      ownsDynamics: false,
    });
    const before = await evaluateDynamics(online.dynamics, scene, coder.names, val, [5]);
    expect((await online.refresh({ steps: 50 })).steps).toBe(0); // empty buffer: nothing to do
    expect(online.addEpisodes(knownDynamicsEpisodes(200, 6, 3))).toBe(1200);
    const r = await online.refresh({ steps: 200, lr: 3e-3, evalEvery: 50 });
    expect(r.steps).toBe(200);
    expect(r.transitions).toBe(1200);
    const after = await evaluateDynamics(online.dynamics, scene, coder.names, val, [5]);
    console.log(
      `refresh: ${r.steps} steps, 1-step ee ${(1000 * before.one_step.ee_m).toFixed(2)} -> ${(1000 * after.one_step.ee_m).toFixed(2)} mm`,
    );
    expect(after.one_step.ee_m).toBeLessThan(0.7 * before.one_step.ee_m);
    // The env built on the shared dynamics steps with the refreshed weights.
    await env.reset({ seed: 3 });
    await online.save(join(dir, 'wm2.onnx'), 'refreshed');
    env.close();
    await online.close();
  });
});
