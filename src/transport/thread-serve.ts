// A rollout helper thread's side of src/transport/thread.ts: runs each call that comes on its port,
// rollout groups (engines built through `resolveTask`, kept per task, world-model snapshot and slot
// count; one sampler per policy version) and gradient graphs of data-parallel steps.
import type { MessagePort } from 'node:worker_threads';
import { InputError } from '../core/errors.ts';
import type { Env } from '../env/types.ts';
import { Session } from '../nn/runtime.ts';
import { PolicySampler } from '../policy/sampler.ts';
import { recordRow, runGroups } from '../trainer/rollouts.ts';
import { checkContent, decodePolicy } from './codec.ts';
import {
  type GroupsCall,
  type HelperAnswer,
  type HelperCall,
  type Versioned,
  fromWire,
  toWire,
} from './thread-protocol.ts';
import type { RemoteTask } from './worker.ts';

/** Answers the calls on `port` one at a time, in the order they come. */
export function serveRolloutHelper(
  port: MessagePort,
  resolveTask: (remote: Record<string, unknown>, worldModel?: unknown) => Promise<RemoteTask>,
  threads = 1,
): void {
  const rollouts = rolloutRunner(resolveTask, threads);
  const graphs = new Map<number, Session>();
  const answer = async (c: HelperCall): Promise<HelperAnswer> => {
    switch (c.op) {
      case 'groups':
        return { id: c.id, ...(await rollouts(c)) };
      case 'open':
        graphs.set(c.graph, await Session.create(c.model, { threads }));
        return { id: c.id, done: true };
      case 'run': {
        const graph = graphs.get(c.graph);
        if (!graph) throw new InputError(`graph ${c.graph} is not open on this helper`);
        return { id: c.id, outputs: toWire(await graph.run(fromWire(c.feeds))) };
      }
      case 'close':
        await graphs.get(c.graph)?.close();
        graphs.delete(c.graph);
        return { id: c.id, done: true };
    }
  };
  let queue = Promise.resolve();
  port.on('message', (c: HelperCall) => {
    queue = queue.then(async () => {
      let a: HelperAnswer;
      try {
        a = await answer(c);
      } catch (e) {
        a = { id: c.id, error: (e as Error).stack ?? String(e) };
      }
      port.postMessage(a);
    });
  });
}

/** Runs rollout calls: engines through `resolveTask`, kept per task, world-model snapshot and slot
 *  count; one sampler per policy version. */
function rolloutRunner(
  resolveTask: (remote: Record<string, unknown>, worldModel?: unknown) => Promise<RemoteTask>,
  threads: number,
) {
  let policy: { hash: string; sampler: Promise<PolicySampler> } | null = null;
  let model: { hash: string; value: unknown } | null = null;
  const tasks = new Map<string, Promise<RemoteTask>>();
  const idle = new Map<string, Env[]>();

  const samplerFor = (v: Versioned): Promise<PolicySampler> => {
    if (policy?.hash !== v.hash) {
      if (!v.bytes) throw new InputError(`policy ${v.hash.slice(0, 12)} was never sent to this helper`);
      const old = policy?.sampler;
      const { config, params } = decodePolicy(v.bytes, v.hash);
      policy = { hash: v.hash, sampler: PolicySampler.create(config, params, { threads }) };
      void old?.then((s) => s.close());
    }
    return policy.sampler;
  };
  const taskFor = async (remote: Record<string, unknown>, v: Versioned | undefined): Promise<RemoteTask> => {
    if (v && model?.hash !== v.hash) {
      if (!v.bytes) throw new InputError(`world model ${v.hash.slice(0, 12)} was never sent to this helper`);
      model = { hash: v.hash, value: checkContent(v.bytes, v.hash, 'world-model snapshot') };
      for (const [key, t] of tasks) // engines of older snapshots go
        if (!key.endsWith('#real')) {
          tasks.delete(key);
          for (const env of idle.get(key) ?? []) env.close();
          idle.delete(key);
          void t.then((x) => x.close?.());
        }
    }
    const key = `${JSON.stringify(remote)}#${v ? v.hash : 'real'}`;
    if (!tasks.has(key)) tasks.set(key, resolveTask(remote, v ? model!.value : undefined));
    return tasks.get(key)!;
  };

  return async (c: GroupsCall) => {
    const task = await taskFor(c.task, c.worldModel);
    const sampler = await samplerFor(c.policy);
    const slots = c.jobs.reduce((n, j) => n + j.keys.length, 0);
    const key = `${JSON.stringify(c.task)}#${c.worldModel?.hash ?? 'real'}`;
    const pool = idle.get(key) ?? [];
    idle.set(key, pool);
    const at = pool.findIndex((e) => e.numEnvs === slots);
    const make = () => (c.engine === 'model' ? task.makeModel!(slots) : task.makeReal(slots));
    const env = at >= 0 ? pool.splice(at, 1)[0] : await make();
    const clock = { policy: 0 };
    try {
      const record = c.record ? recordRow(env) : undefined;
      const groups = await runGroups(env, sampler, c.jobs, {
        seed: c.seed,
        samplesPerRollout: c.samplesPerRollout,
        temperature: c.temperature,
        record,
        clock,
      });
      return { groups, policySeconds: clock.policy };
    } finally {
      pool.push(env);
      if (pool.length > 4) pool.shift()!.close(); // slot counts the split no longer asks for
    }
  };
}
