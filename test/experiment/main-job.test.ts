import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMainJob, tabletopTrainSetup } from '../../src/experiment/index.ts';
import { camerasOf } from '../../src/physics/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-main-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

describe('the main job', () => {
  it('stops training at the budget, reports the paired difference, and the printed iteration count reproduces policy.onnx byte for byte', {
    timeout: 240_000,
  }, async () => {
    const tasks = ['tabletop/pick-place'];
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 1_000_000 });
    const o = {
      scene,
      tasks,
      policy: 'models/vla-base.onnx',
      worldModel: 'models/wm-base.onnx',
      cfg,
      minutes: 0.2,
      episodes: 2,
    };
    const r = await runMainJob({ ...o, out: join(tmp, 'job') });
    expect(r.iterations).toBeGreaterThan(0);
    expect(r.reproduce).toContain(`--iterations ${r.iterations}`);
    expect(r.report.paired!.overall.episodes).toBe(2);
    expect(r.report.policies.map((p) => p.policy)).toEqual([
      `${join(tmp, 'job', 'policy.onnx')} (after)`,
      'models/vla-base.onnx (before)',
    ]);

    const model = await loadPolicy(o.policy);
    const { tasks: trainTasks, worldModel } = await tabletopTrainSetup(scene, tasks, {
      mode: 'wmrl',
      worldModel: o.worldModel,
      seed: 0,
      cameras: camerasOf(model.config.cameras),
    });
    await train(
      {
        tasks: trainTasks,
        worldModel,
        policy: { config: model.config, params: model.params, specHash: model.sidecar.specHash },
      },
      { ...cfg, iterations: r.iterations },
      join(tmp, 'again'),
    );
    await worldModel?.close();
    expect(readFileSync(join(tmp, 'again', 'policy.onnx')).equals(readFileSync(join(tmp, 'job', 'policy.onnx')))).toBe(
      true,
    );
  });
});
