import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { randomAction } from '../../src/env/index.ts';
import { createTabletopEnv } from '../../src/physics/index.ts';
import { scoreTask } from '../../src/task/verify.ts';
import {
  ActionCoder,
  EnsembleDynamics,
  limitsFromScene,
  stateLayout,
  tabletopBranching,
  TransitionSet,
  WorldModelEnv,
  WorldModelTrainer,
} from '../../src/worldmodel/index.ts';
import { knownDynamicsEpisodes, scene, specOf } from './helpers.ts';

const taskId = 'tabletop/pick-place';
const spec = specOf(taskId);

describe('branching a world model from physics', () => {
  it('a world-model slot started from a recorded physics row sees exactly what physics saw (image, proprio, Φ), every slot alike', async () => {
    const trainer = await WorldModelTrainer.create(
      TransitionSet.fromEpisodes(stateLayout(scene.objects), new ActionCoder(spec), knownDynamicsEpisodes(10, 4, 1)),
      null,
      { net: { members: 2, hidden: [16] }, batch: 16, seed: 1 },
    );
    const dynamics = await EnsembleDynamics.create(
      trainer.config,
      trainer.params(),
      stateLayout(scene.objects),
      limitsFromScene(scene),
      spec,
    );
    await trainer.close();
    const real = await createTabletopEnv({ scene, taskId, numEnvs: 1 });
    const model = new WorldModelEnv({ scene, spec, numEnvs: 3, dynamics });
    const branching = tabletopBranching(scene, taskId);
    await real.reset({ seed: 12 });
    const rng = new Rng(5);
    let last = await real.step(randomAction(real.spec, 1, rng));
    for (let t = 1; t < 15; t++) last = await real.step(randomAction(real.spec, 1, rng));
    const { row } = real.capture(0);
    const out = await model.resetFrom(
      [0, 2],
      [0, 2].map((k) => ({ seed: 12, key: k, elapsed: 15, row })),
    );
    const px = spec.observation.find((e) => e.name === 'image_front')!;
    const size = px.kind === 'image' ? px.shape[0] * px.shape[1] * px.shape[2] : 0;
    const realImage = last.obs.image_front as Uint8Array;
    const modelImage = out.obs.image_front as Uint8Array;
    const differing = realImage.reduce((n, v, i) => n + (v !== modelImage[i] ? 1 : 0), 0);
    expect(differing).toBe(0);
    expect(modelImage.subarray(2 * size, 3 * size)).toEqual(modelImage.subarray(0, size));
    const proprio = (o: typeof out.obs, i: number) =>
      Array.from((o.proprio as Float32Array).subarray(7 * i, 7 * i + 7));
    proprio(out.obs, 0).forEach((v, k) => expect(v).toBeCloseTo(proprio(last.obs, 0)[k], 5));
    expect(branching.progress(12, row)).toBe(scoreTask(scene, real.task(0), real.state(0)).progress);
    await expect(() =>
      model.resetFrom([1], [{ seed: 12, key: 1, elapsed: 15, row: Array.from(row).slice(1) }]),
    ).rejects.toThrow(/expected/);
    real.close();
    model.close();
  });
});
