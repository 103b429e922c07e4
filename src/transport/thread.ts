// Both cores in one run: every group's rollouts split by key between this process and helper threads
// (worker_threads), each with its own engines and policy sampler, all running at once. A rollout's
// result depends only on (policy, world model, task, start, key), never on the batch it shares, so the
// split decides nothing: any number of helpers gives the same rollouts. The policy version and the
// world-model snapshot travel once per change, by content hash.
import { type MessagePort, Worker } from 'node:worker_threads';
import { InputError } from '../core/errors.ts';
import type { Env } from '../env/types.ts';
import { PolicySampler } from '../policy/sampler.ts';
import { type GroupJob, type Rollout, recordRow, runGroups } from '../trainer/rollouts.ts';
import type { GroupRequest, RolloutTransport } from '../trainer/types.ts';
import { checkContent, contentAddressed, decodePolicy, encodePolicy } from './codec.ts';
import type { RemoteTask } from './worker.ts';

type Versioned = { hash: string; bytes?: Uint8Array };

/** One call to a helper: the groups of one task and start kind, with what they run on. */
interface HelperCall {
  id: number;
  task: Record<string, unknown>;
  engine: 'real' | 'model';
  policy: Versioned;
  worldModel?: Versioned;
  jobs: GroupJob[];
  seed: number;
  samplesPerRollout: number;
  record: boolean;
}

type HelperAnswer = { id: number; groups: Rollout[][]; policySeconds: number } | { id: number; error: string };

/** Contiguous parts of `keys` for `n` runners (the first part is this process's); some may be empty. */
export function splitKeys(keys: readonly number[], n: number): number[][] {
  return Array.from({ length: n }, (_, i) =>
    keys.slice(Math.round((i * keys.length) / n), Math.round(((i + 1) * keys.length) / n)),
  );
}

/** A helper thread as the trainer sees it. */
class RolloutHelper {
  private next = 0;
  private readonly waiting = new Map<number, (a: HelperAnswer) => void>();
  /** What the helper holds already (sent once per change). */
  private readonly held = { policy: '', worldModel: '' };
  private failure: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (a: HelperAnswer) => {
      this.waiting.get(a.id)?.(a);
      this.waiting.delete(a.id);
    });
    worker.on('error', (e) => this.fail(e));
    worker.on('exit', (code) => this.fail(new Error(`rollout helper thread exited (code ${code})`)));
  }

  static open(entry: URL): RolloutHelper {
    return new RolloutHelper(new Worker(entry));
  }

  private fail(e: Error): void {
    this.failure ??= e;
    for (const [id, resolve] of this.waiting) resolve({ id, error: e.message });
    this.waiting.clear();
  }

  async run(call: Omit<HelperCall, 'id' | 'policy' | 'worldModel'>, policy: Versioned, model?: Versioned) {
    if (this.failure) throw this.failure;
    const send = (v: Versioned | undefined, kind: 'policy' | 'worldModel'): Versioned | undefined => {
      if (!v) return undefined;
      const fresh = this.held[kind] !== v.hash;
      this.held[kind] = v.hash;
      return fresh ? v : { hash: v.hash };
    };
    const id = this.next++;
    const answer = new Promise<HelperAnswer>((resolve) => this.waiting.set(id, resolve));
    this.worker.postMessage({ ...call, id, policy: send(policy, 'policy'), worldModel: send(model, 'worldModel') });
    const a = await answer;
    if ('error' in a) {
      this.held.policy = this.held.worldModel = ''; // resend both after a failure
      throw new Error(`rollout helper: ${a.error}`);
    }
    return a;
  }

  async close(): Promise<void> {
    this.failure ??= new Error('rollout helper: closed');
    await this.worker.terminate();
  }
}

/** Splits every request between `local` (this process) and helper threads. Requests it cannot send (a
 *  task without a remote description, a world model without a snapshot) run wholly in this process. */
export class SplitTransport implements RolloutTransport {
  private constructor(
    private readonly local: RolloutTransport,
    private readonly helpers: readonly RolloutHelper[],
  ) {}

  /** `count` helper threads, each running `entry` (a module that calls serveRolloutHelper). */
  static open(local: RolloutTransport, entry: URL, count: number): SplitTransport {
    return new SplitTransport(
      local,
      Array.from({ length: count }, () => RolloutHelper.open(entry)),
    );
  }

  async run(r: GroupRequest): Promise<Rollout[][]> {
    const snapshot = r.engine === 'model' ? r.worldModel?.snapshot : undefined;
    if (r.tasks.some((t) => !t.remote) || (r.engine === 'model' && !snapshot)) return this.local.run(r);
    const parts = r.jobs.map((j) => splitKeys(j.keys, this.helpers.length + 1).map((keys) => ({ ...j, keys })));
    const policy = encodePolicy(r.policy.config, r.policy.params);
    const model = snapshot ? contentAddressed(snapshot.call(r.worldModel)) : undefined;
    const helped = this.helpers.map(async (h, i) => {
      const jobs = parts.map((p) => p[i + 1]);
      const out = new Map<GroupJob, Rollout[]>();
      // one call per task and start kind, as InProcessTransport batches them
      for (const [t, task] of r.tasks.entries())
        for (const branched of [false, true]) {
          const some = jobs.filter((j) => j.task === t && !!j.branch === branched && j.keys.length);
          if (!some.length) continue;
          const call = {
            task: task.remote!,
            engine: r.engine,
            jobs: some,
            seed: r.seed,
            samplesPerRollout: r.samplesPerRollout,
            record: (r.engine === 'real' || !!r.recordStates) && !!task.branching,
          };
          const a = await h.run(call, policy, model);
          if (r.clock) r.clock.policy += a.policySeconds;
          some.forEach((j, k) => out.set(j, a.groups[k]));
        }
      return jobs.map((j) => out.get(j) ?? []);
    });
    const mine = parts.map((p) => p[0]).filter((j) => j.keys.length);
    const [local, ...theirs] = await Promise.all([this.local.run({ ...r, jobs: mine }), ...helped]);
    let at = 0;
    return parts.map((p, k) => [...(p[0].keys.length ? local[at++] : []), ...theirs.flatMap((groups) => groups[k])]);
  }

  async close(): Promise<void> {
    await Promise.all(this.helpers.map((h) => h.close()));
  }
}

/** The helper thread's side: answers each call on `port` with its groups' rollouts, building engines
 *  through `resolveTask` (kept per task, world-model snapshot and slot count) and one sampler per policy
 *  version. */
export function serveRolloutHelper(
  port: MessagePort,
  resolveTask: (remote: Record<string, unknown>, worldModel?: unknown) => Promise<RemoteTask>,
  threads = 1,
): void {
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

  port.on('message', async (c: HelperCall) => {
    try {
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
          record,
          clock,
        });
        port.postMessage({ id: c.id, groups, policySeconds: clock.policy } satisfies HelperAnswer);
      } finally {
        pool.push(env);
        if (pool.length > 4) pool.shift()!.close(); // slot counts the split no longer asks for
      }
    } catch (e) {
      port.postMessage({ id: c.id, error: (e as Error).stack ?? String(e) } satisfies HelperAnswer);
    }
  });
}
