import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tabletopTrainSetup } from '../../src/experiment/index.ts';
import { camerasOf, tabletopSpec } from '../../src/physics/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import {
  type GroupRequest,
  InProcessTransport,
  type RefreshableModel,
  resolveConfig,
  train,
} from '../../src/trainer/index.ts';
import { encodeValue, splitKeys } from '../../src/transport/index.ts';
import { OnlineWorldModel } from '../../src/worldmodel/index.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const tmp = mkdtempSync(join(tmpdir(), 'wmrl-thread-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('splitKeys', () => {
  it('cuts keys into contiguous parts, in order, every key once', () => {
    expect(splitKeys([1, 2, 3, 4, 5], 2)).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(splitKeys([7], 3)).toEqual([[], [7], []]);
    expect(splitKeys([1, 2, 3, 4, 5, 6, 7], 3).flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('SplitTransport: rollouts on helper threads', () => {
  it('anchors (initial states and a branch) and world-model groups equal the in-process ones bit for bit', {
    timeout: 120_000,
  }, async () => {
    const taskId = 'tabletop/pick-place';
    const policy = await loadPolicy('models/vla-base.onnx');
    const cameras = camerasOf(policy.config.cameras);
    const spec = tabletopSpec(scene, taskId, cameras);
    const online = await OnlineWorldModel.open('models/wm-base.onnx', scene, spec);
    const setup = await tabletopTrainSetup(scene, [taskId], { mode: 'real', worldModel: '', seed: 0, cameras });
    const task = setup.tasks[0];
    const envs = [{ real: await task.makeReal(5), model: online.envFor(scene, spec, 4) }];
    const sampler = await PolicySampler.create(policy.config, policy.params);
    const local = new InProcessTransport(envs, sampler);
    const base = {
      run: '0123456789abcdef',
      tasks: setup.tasks,
      policy: { config: policy.config, params: policy.params },
      worldModel: online as unknown as RefreshableModel,
      seed: 4,
      samplesPerRollout: 2,
    };
    const branch = { task: 0, seed: task.trainSeed(1), elapsed: 0, row: [] as number[] };
    const anchors: GroupRequest = {
      ...base,
      engine: 'real',
      jobs: [
        { kind: 'anchor', task: 0, start: task.trainSeed(0), startIndex: 0, keys: [1, 2, 3, 4, 5] },
        { kind: 'anchor', task: 0, start: task.trainSeed(1), keys: [9] },
      ],
    };
    const real = await local.run(anchors);
    // a branch from a state an anchor visited, as world-model groups start
    const visited = real[0][0].states!;
    const width = visited.length / (real[0][0].length + 1);
    branch.row = Array.from(visited.subarray(3 * width, 4 * width));
    branch.elapsed = 3;
    const model: GroupRequest = {
      ...base,
      engine: 'model',
      jobs: [
        { kind: 'model', task: 0, start: task.trainSeed(0), startIndex: 0, keys: [20, 21, 22], horizon: 6 },
        { kind: 'model', task: 0, start: branch.seed, keys: [30, 31, 32, 33], branch, horizon: 5 },
      ],
    };
    const expected = [real, await local.run(model)].map((x) => encodeValue(x));
    try {
      for (const helpers of [1, 2]) {
        const split = setup.split!(local, helpers);
        try {
          for (const [k, r] of [anchors, model].entries()) {
            const got = await split.run(r);
            expect(got.map((g) => g.map((x) => x.key))).toEqual(r.jobs.map((j) => j.keys));
            expect(encodeValue(got).equals(expected[k])).toBe(true);
          }
        } finally {
          await split.close();
        }
      }
    } finally {
      envs[0].real.close();
      envs[0].model.close();
      await sampler.close();
      await online.close();
    }
  });

  it("a helper's failure reaches the trainer as an error naming its cause", { timeout: 60_000 }, async () => {
    const policy = await loadPolicy('models/vla-base.onnx');
    const cameras = camerasOf(policy.config.cameras);
    const setup = await tabletopTrainSetup(scene, ['tabletop/push'], {
      mode: 'real',
      worldModel: '',
      seed: 0,
      cameras,
    });
    const tasks = [{ ...setup.tasks[0], remote: { ...setup.tasks[0].remote, task: 'tabletop/nothing' } }];
    const sampler = await PolicySampler.create(policy.config, policy.params);
    const env = await tasks[0].makeReal(1);
    const split = setup.split!(new InProcessTransport([{ real: env, model: null }], sampler), 1);
    try {
      const r: GroupRequest = {
        run: '0123456789abcdef',
        engine: 'real',
        tasks,
        policy: { config: policy.config, params: policy.params },
        seed: 0,
        samplesPerRollout: 1,
        jobs: [{ kind: 'anchor', task: 0, start: tasks[0].trainSeed(0), keys: [1, 2] }],
      };
      await expect(split.run(r)).rejects.toThrow(/rollout helper: .*tabletop\/nothing/);
    } finally {
      await split.close();
      env.close();
      await sampler.close();
    }
  });
});

describe('wmrl training with helper threads', () => {
  it('gives the metrics and policy of a run without them', { timeout: 300_000 }, async () => {
    const policy = await loadPolicy('models/vla-base.onnx');
    const run = async (helpers: number) => {
      const dir = join(tmp, `helpers${helpers}`);
      const s = await tabletopTrainSetup(scene, ['tabletop/pick-place', 'tabletop/put-in-bin'], {
        mode: 'wmrl',
        worldModel: 'models/wm-base.onnx',
        seed: 3,
        cameras: camerasOf(policy.config.cameras),
      });
      const setup = { ...s, policy: { config: policy.config, params: policy.params, specHash: 'x' } };
      const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 2, helpers, evolution: { enabled: true } });
      try {
        await train(setup, cfg, dir);
      } finally {
        await s.worldModel?.close();
      }
      const rows = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n');
      const strip = (line: string) =>
        Object.fromEntries(Object.entries(JSON.parse(line)).filter(([k]) => !k.startsWith('time/')));
      return { metrics: rows.map(strip), policy: readFileSync(join(dir, 'policy.onnx')) };
    };
    const [none, two] = [await run(0), await run(2)];
    expect(none.metrics.length).toBe(2);
    expect(two.metrics).toEqual(none.metrics);
    expect(two.policy.equals(none.policy)).toBe(true);
  });
});
