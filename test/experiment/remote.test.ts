import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../../src/autoresearch/index.ts';
import { remoteTaskResolver, researchTrainSetup, tabletopTrainSetup } from '../../src/experiment/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { camerasOf, tabletopSpec } from '../../src/physics/index.ts';
import {
  type GroupRequest,
  InProcessTransport,
  type RefreshableModel,
  type TrainTask,
} from '../../src/trainer/index.ts';
import { OnlineWorldModel } from '../../src/worldmodel/index.ts';
import { QueueTransport, type WorkerHandle, encodeValue, startWorker } from '../../src/transport/index.ts';
import { type RedisServer, describeWithRedis, startRedis } from '../transport/redis-server.ts';

describe('remote task descriptions: what a worker builds from TrainTask.remote', () => {
  const resolve = remoteTaskResolver();
  it('a tabletop task round-trips through its JSON description', async () => {
    const { tasks } = await tabletopTrainSetup(loadSceneFile(DEFAULT_SCENE_PATH), ['tabletop/push'], {
      mode: 'real',
      worldModel: '',
      seed: 0,
    });
    const task = await resolve(JSON.parse(JSON.stringify(tasks[0].remote)));
    expect(task.id).toBe('tabletop/push');
    const env = await task.makeReal(2);
    expect(env.spec.id).toBe('tabletop/push');
    env.close();
  });

  it('refuses a description it cannot build, naming the field', async () => {
    await expect(resolve({ family: 'gym' })).rejects.toThrow(/job task: \$\.family/);
    await expect(resolve({ family: 'autoresearch', task: 7 })).rejects.toThrow(/\$\.task/);
    await expect(resolve({ family: 'tabletop', task: 'tabletop/push', scene: { robot: 1 } })).rejects.toThrow(/scene/);
  });
});

describeWithRedis('AutoResearch executions as worker jobs', () => {
  let server: RedisServer;
  let worker: WorkerHandle;
  const executor = new Executor({ concurrency: 1 });
  beforeAll(async () => {
    server = await startRedis();
    worker = await startWorker({ url: server.url, resolveTask: remoteTaskResolver({ executor: () => executor }) });
  }, 20_000);
  afterAll(async () => {
    await worker?.close();
    await server?.stop();
  });

  it('a group of proposals executed by a worker equals the same group executed in-process', {
    timeout: 120_000,
  }, async () => {
    const agent = await loadPolicy('models/agent-base.onnx');
    const tasks: TrainTask[] = researchTrainSetup({ mode: 'real', seed: 0, executor, tasks: ['iris-species'] }).tasks;
    const r: GroupRequest = {
      run: '0123456789abcdef',
      engine: 'real',
      tasks,
      jobs: [{ kind: 'anchor', task: 0, start: 3, startIndex: 3, keys: [40, 41] }],
      policy: { config: agent.config, params: agent.params },
      seed: 2,
      samplesPerRollout: 2,
    };
    const transport = await QueueTransport.open(server.url);
    const remote = await transport.run(r);
    await transport.close();
    const env = await tasks[0].makeReal(2);
    const sampler = await PolicySampler.create(agent.config, agent.params);
    const local = await new InProcessTransport([{ real: env, model: null }], sampler).run(r);
    env.close();
    await sampler.close();
    expect(remote[0].map((x) => x.length).reduce((a, b) => a + b)).toBeGreaterThan(0);
    expect(encodeValue(remote).equals(encodeValue(local))).toBe(true);
    expect(worker.done).toBe(1);
  });
});

describeWithRedis('world-model groups as worker jobs', () => {
  let server: RedisServer;
  let worker: WorkerHandle;
  beforeAll(async () => {
    server = await startRedis();
    worker = await startWorker({ url: server.url, resolveTask: remoteTaskResolver() });
  }, 20_000);
  afterAll(async () => {
    await worker?.close();
    await server?.stop();
  });

  it("run on the snapshot they name, before and after the world model's weights change, equal to in-process", {
    timeout: 120_000,
  }, async () => {
    const scene = loadSceneFile(DEFAULT_SCENE_PATH);
    const policy = await loadPolicy('models/vla-base.onnx');
    // the policy's cameras, as wmrl train sets them up (the job's task description carries them)
    const cameras = camerasOf(policy.config.cameras);
    const spec = tabletopSpec(scene, 'tabletop/pick-place', cameras);
    const online = await OnlineWorldModel.open('models/wm-base.onnx', scene, spec);
    const { tasks } = await tabletopTrainSetup(scene, ['tabletop/pick-place'], {
      mode: 'real',
      worldModel: '',
      seed: 0,
      cameras,
    });
    const env = online.envFor(scene, spec, 3);
    const sampler = await PolicySampler.create(policy.config, policy.params);
    const transport = await QueueTransport.open(server.url);
    try {
      const r: GroupRequest = {
        run: '0123456789abcdef',
        engine: 'model',
        tasks,
        worldModel: online as unknown as RefreshableModel,
        policy: { config: policy.config, params: policy.params },
        seed: 4,
        samplesPerRollout: 2,
        jobs: [0, 1].map((g) => ({
          kind: 'model',
          task: 0,
          start: tasks[0].trainSeed(g),
          startIndex: g,
          keys: [10 * g, 10 * g + 1],
          horizon: 8,
        })),
      };
      const local = () => new InProcessTransport([{ real: null, model: env }], sampler).run(r);
      const before = await transport.run(r);
      expect(encodeValue(before).equals(encodeValue(await local()))).toBe(true);
      // new kept weights (as a refresh that improved them would leave), baked into the trainer's dynamics
      const state = online.exportState();
      for (const n of state.best.names)
        state.best.get(n).forEach((v, i, a) => {
          a[i] = v * 0.9;
        });
      await online.restore(state);
      const after = await transport.run(r);
      expect(encodeValue(after).equals(encodeValue(await local()))).toBe(true);
      expect(encodeValue(after).equals(encodeValue(before))).toBe(false);
      expect(worker.done).toBe(4);
    } finally {
      env.close();
      await transport.close();
      await sampler.close();
      await online.close();
    }
  });
});
