import { describe, expect, it } from 'vitest';
import { PhysicsDynamics, expertPolicy } from '../../src/eval/index.ts';
import { randomPolicy } from '../../src/rollout/index.ts';
import { createTabletopEnv } from '../../src/physics/index.ts';
import { splitSeed } from '../../src/task/index.ts';
import {
  ActionCoder,
  EnsembleDynamics,
  limitsFromScene,
  linePlot,
  runShadow,
  stateLayout,
  TransitionSet,
  WorldModelEnv,
  WorldModelTrainer,
} from '../../src/worldmodel/index.ts';
import { knownDynamicsEpisodes, scene, specOf } from './helpers.ts';

const taskId = 'tabletop/push';
const seeds = [0, 1, 2].map((k) => splitSeed(scene, 'heldout', k));

describe('shadow mode', () => {
  it('reports zero divergence and no hallucinated success when the "world model" is the physics itself', async () => {
    const real = await createTabletopEnv({ scene, taskId, numEnvs: 3 });
    const wm = new WorldModelEnv({
      scene,
      spec: real.spec,
      numEnvs: 3,
      dynamics: await PhysicsDynamics.create(scene, taskId, 3),
    });
    const report = await runShadow(real, wm, { seeds, policy: expertPolicy(real, 0.1, 0) });
    real.close();
    wm.close();
    expect(report.episodes).toBe(3);
    expect(report.steps).toBeGreaterThan(30);
    for (const k of ['ee_m', 'fingers_m', 'objects_m', 'task_object_m'] as const) expect(report.max[k], k).toBe(0);
    expect(report.max.image_mae).toBeLessThan(0.2); // the fingers' dynamic bodies tilt a hair in physics
    expect(report.hallucinated_success_rate).toBe(0);
    expect(report.hallucinated_step_rate).toBe(0);
    expect(report.wm_success_rate).toBe(report.env_success_rate);
    expect(report.curves.ee_m.length).toBe(report.alive.length);
  });

  it('reports divergence for a world model that does not know the physics', async () => {
    const spec = specOf(taskId);
    const layout = stateLayout(scene.objects);
    const trainer = await WorldModelTrainer.create(
      TransitionSet.fromEpisodes(layout, new ActionCoder(spec), knownDynamicsEpisodes(10, 4, 1)),
      null,
      { net: { members: 2, hidden: [16] }, batch: 8 },
    );
    const dynamics = await EnsembleDynamics.create(
      trainer.config,
      trainer.params(),
      layout,
      limitsFromScene(scene),
      spec,
    );
    await trainer.close();
    const real = await createTabletopEnv({ scene, taskId, numEnvs: 2 });
    const wm = new WorldModelEnv({ scene, spec, numEnvs: 2, dynamics });
    const report = await runShadow(real, wm, { seeds: seeds.slice(0, 2), policy: randomPolicy(real.spec, 0) });
    real.close();
    wm.close();
    expect(report.episodes).toBe(2);
    expect(report.mean.ee_m).toBeGreaterThan(1e-3);
    expect(report.mean.image_mae).toBeGreaterThan(0.1);
    const plot = linePlot([{ name: 'ee', values: report.curves.ee_m, colour: [255, 0, 0] }], 64, 32);
    expect(plot.rgb.length).toBe(64 * 32 * 3);
    expect(plot.rgb.some((v, k) => k % 3 === 1 && v === 0 && plot.rgb[k - 1] === 255)).toBe(true); // the red line was drawn
  });
});
