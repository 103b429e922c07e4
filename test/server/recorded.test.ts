// A tabletop training run's recorded episodes as the viewer's server lists and replays them: held-out
// physics episodes by iteration, and world-model rollouts beside their physics twin.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sceneContract } from '../../src/demos/folder.ts';
import { tabletopTrainSetup } from '../../src/experiment/index.ts';
import { camerasOf } from '../../src/physics/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { episodeSummaries, replayEpisode } from '../../src/server/replay.ts';
import { resolveConfig, SAMPLE_GROUP, train } from '../../src/trainer/index.ts';
import { SCENE } from './fixture.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-recorded-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a training run’s recorded episodes in the viewer', () => {
  it('are listed by iteration and replay: physics alone, world-model rollouts beside their physics twin', {
    timeout: 240_000,
  }, async () => {
    const model = await loadPolicy('models/vla-base.onnx');
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 1, evalEvery: 1, evalEpisodes: 2 });
    const { tasks, worldModel } = await tabletopTrainSetup(SCENE, ['tabletop/pick-place'], {
      mode: 'wmrl',
      worldModel: 'models/wm-base.onnx',
      seed: 0,
      cameras: camerasOf(model.config.cameras),
    });
    const dir = join(tmp, 'run');
    const policy = { config: model.config, params: model.params, specHash: model.sidecar.specHash };
    await train({ tasks, worldModel, policy }, cfg, dir);
    await worldModel?.close();

    const contract = sceneContract(SCENE);
    const list = episodeSummaries(dir, contract);
    expect(list.map((e) => [e.iteration, e.source ?? 'physics'])).toEqual(
      [0, 1].flatMap((it) => [[it, 'physics'], ...Array(SAMPLE_GROUP).fill([it, 'world-model'])]),
    );
    const wm = list[1];
    expect(wm.twin).toBe(0);
    const sources = { scene: SCENE, contract };
    const side = await replayEpisode(sources, 'run', dir, wm.index);
    const steps = side.physics.length;
    expect(side.worldModel?.length).toBe(steps);
    expect(side.divergence?.tcp_m.length).toBe(steps);
    expect(steps).toBe(Math.min(wm.length, list[0].length - wm.start!) + 1);
    // both start from the same branch point: no divergence at its first step
    expect(side.divergence!.tcp_m[0]).toBeLessThan(1e-6);
    expect(side.divergence!.objects_m[0]).toBeLessThan(1e-6);
    expect(side.worldModel!.every((f) => f.source === 'world-model')).toBe(true);
    const physics = await replayEpisode(sources, 'run', dir, 0);
    expect(physics.physics.length).toBe(list[0].length + 1);
  });
});
