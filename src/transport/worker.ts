// The worker's side: takes rollout jobs of any run from the queue, validates each payload, fetches the
// policy version and world-model snapshot it names (checked against their sha256; a few kept loaded),
// builds the task's engine through `resolveTask` (a pool of envs per engine and size), runs the group
// and writes the result once. A bad payload fails that job only; a killed worker's jobs go back to the
// queue when their lock lapses.
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { canonicalJson, formatZodError } from '../core/spec.ts';
import type { Env } from '../env/types.ts';
import { PolicySampler } from '../policy/sampler.ts';
import type { TrainTask } from '../trainer/types.ts';
import { recordRow, recordsStates, runGroups } from '../trainer/rollouts.ts';
import { buildId } from './build.ts';
import { JobSchema, checkContent, decodeJson, decodePolicy, encodeResult, groupOfJob, jobId } from './codec.ts';
import { KEY_TTL_S, QUEUE, connectRedis, keys, redisOptions } from './redis.ts';

/** What a worker builds from a job's task description: the real engine, and with a world-model
 *  snapshot also makeModel; close() frees what it holds. */
export type RemoteTask = TrainTask & { close?(): Promise<void> };

export interface WorkerOptions {
  url: string;
  /** Jobs run at once in this process (default 1; one process per core is the usual layout). */
  concurrency?: number;
  /** How long a job's lock lasts without renewal: a killed worker's jobs are retaken after about this long. */
  lockDurationMs?: number;
  /** Builds a job's engine from its `task` description (and world-model snapshot); throws an
   *  InputError for a bad one. */
  resolveTask(remote: Record<string, unknown>, worldModel?: unknown): Promise<RemoteTask>;
  log?: (line: string) => void;
  /** ORT threads per policy session (decide no result). */
  threads?: number;
}

export interface WorkerHandle {
  /** Jobs finished (results written). */
  readonly done: number;
  close(): Promise<void>;
}

/** Loaded values by key, the most recently used `limit` kept; one in use is never disposed. */
class Kept<T> {
  private readonly entries = new Map<string, { value: Promise<T>; users: number }>();
  constructor(
    private readonly limit: number,
    private readonly dispose: (v: T) => Promise<void>,
  ) {}

  async use<R>(key: string, make: () => Promise<T>, f: (v: T) => Promise<R>): Promise<R> {
    let e = this.entries.get(key);
    if (!e) {
      e = { value: make(), users: 0 };
      e.value.catch(() => this.entries.delete(key));
    }
    this.entries.delete(key);
    this.entries.set(key, e); // most recent last
    e.users++;
    try {
      return await f(await e.value);
    } finally {
      e.users--;
      for (const [k, x] of this.entries) {
        if (this.entries.size <= this.limit) break;
        if (x.users === 0) {
          this.entries.delete(k);
          void x.value.then(this.dispose, () => {});
        }
      }
    }
  }

  async clear(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    for (const e of all) await e.value.then(this.dispose, () => {});
  }
}

export async function startWorker(o: WorkerOptions): Promise<WorkerHandle> {
  const log = o.log ?? (() => {});
  const redis = await connectRedis(o.url);
  const fetch = async (run: string, kind: 'policy' | 'world-model', hash: string) => {
    const bytes = await redis.getBuffer(keys.version(run, kind, hash));
    if (bytes === null)
      throw new Error(
        `${kind} ${hash.slice(0, 12)} of run ${run} is not in Redis (its trainer has moved on or stopped)`,
      );
    return bytes;
  };
  const policies = new Kept<PolicySampler>(4, (s) => s.close());
  type Engine = { task: RemoteTask; idle: Map<number, Env[]> };
  const engines = new Kept<Engine>(4, async (e) => {
    for (const envs of e.idle.values()) for (const env of envs) env.close();
    await e.task.close?.();
  });
  let done = 0;

  const lockDuration = o.lockDurationMs ?? 10_000;
  const processor = async (job: Job, token?: string): Promise<string> => {
    const parsed = JobSchema.safeParse(decodeJson(JSON.stringify(job.data ?? null)));
    if (!parsed.success) throw new UnrecoverableError(formatZodError(parsed.error, 'job payload: '));
    const j = parsed.data;
    const id = jobId(j);
    if (job.id !== id) throw new UnrecoverableError(`job payload: its id should be ${id}, the queue has ${job.id}`);
    if (j.build !== buildId()) {
      throw new UnrecoverableError(
        `job ${id}: made by wmrl build ${j.build}, this worker runs ${buildId()} (run the trainer's commit, ` +
          'npm ci, on the same CPU architecture)',
      );
    }
    if (await redis.exists(keys.result(id))) return 'reused'; // delivered again after another worker finished it
    log(`job ${id}: started (${j.group.keys.length} rollouts)`);
    const makeEngine = async (): Promise<Engine> => {
      const snapshot =
        j.worldModel &&
        checkContent(await fetch(j.run, 'world-model', j.worldModel), j.worldModel, 'world-model snapshot');
      return { task: await o.resolveTask(j.task, snapshot), idle: new Map() };
    };
    const makePolicy = async () => {
      const { config, params } = decodePolicy(await fetch(j.run, 'policy', j.policy), j.policy);
      return PolicySampler.create(config, params, { threads: o.threads ?? 1 });
    };
    const n = j.group.keys.length;
    let ms = 0; // the group's own time, for the log line only
    const rollouts = await engines.use(
      `${canonicalJson(j.task)}#${j.worldModel ?? 'real'}`,
      makeEngine,
      async ({ task, idle }) => {
        // a job that names a world model runs in it, any other in physics (anchors, real-branch's groups)
        const model = j.worldModel !== undefined;
        if (model && !task.makeModel)
          throw new UnrecoverableError(`job ${id}: task ${task.id} has no world model here`);
        const env = idle.get(n)?.pop() ?? (await (model ? task.makeModel!(n) : task.makeReal(n)));
        try {
          const record = recordsStates(!model, j.recordStates, task) ? recordRow(env) : undefined;
          const options = { seed: j.seed, samplesPerRollout: j.samplesPerRollout, temperature: j.temperature, record };
          return await policies.use(j.policy, makePolicy, async (sampler) => {
            const t0 = performance.now();
            const [group] = await runGroups(env, sampler, [groupOfJob(j.group)], options);
            ms = performance.now() - t0;
            return group;
          });
        } finally {
          if (!idle.has(n)) idle.set(n, []);
          idle.get(n)!.push(env);
        }
      },
    );
    // a worker starved past its lock has lost the job to the queue: whoever holds it now writes the result
    // (written here too, it could land after the trainer read and deleted the first one, and stay)
    if (token && (await job.extendLock(token, lockDuration)) !== 1) {
      log(`job ${id}: its lock lapsed, left to the worker that holds it now`);
      return 'lapsed';
    }
    await redis.set(keys.result(id), encodeResult(id, rollouts), 'EX', KEY_TTL_S, 'NX'); // first writer wins
    done++;
    log(`job ${id}: done (${ms.toFixed(1)} ms in the group's rollouts)`);
    return 'done';
  };

  const worker = new Worker(QUEUE, processor, {
    connection: redisOptions(o.url),
    concurrency: o.concurrency ?? 1,
    lockDuration,
    stalledInterval: Math.max(100, Math.floor(lockDuration / 2)),
    maxStalledCount: 100,
  });
  worker.on('failed', (job, err) => log(`job ${job?.id}: failed: ${err.message}`));
  worker.on('error', (err) => log(`worker: ${err.message}`));
  await worker.waitUntilReady();
  return {
    get done() {
      return done;
    },
    async close() {
      await worker.close();
      await engines.clear();
      await policies.clear();
      redis.disconnect();
    },
  };
}
