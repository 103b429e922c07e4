// The worker's side: takes anchor jobs of any run from the queue, validates each payload, fetches the
// policy version it names (checked against its sha256, a few kept warm), builds the task's real engine
// through `resolveTask` (a pool of envs per task and size), runs the group and writes the result once.
// A bad payload fails that job only; a killed worker's jobs go back to the queue when their lock lapses.
import { UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { canonicalJson, formatZodError } from '../core/spec.ts';
import type { Env } from '../env/types.ts';
import { PolicySampler } from '../policy/sampler.ts';
import type { TrainTask } from '../trainer/loop.ts';
import { runGroups } from '../trainer/rollouts.ts';
import { buildId } from './build.ts';
import { JobSchema, decodePolicy, encodeResult, jobId } from './codec.ts';
import { KEY_TTL_S, QUEUE, connectRedis, keys, redisOptions } from './redis.ts';

export interface WorkerOptions {
  url: string;
  /** Jobs run at once in this process (default 1; one process per core is the usual layout). */
  concurrency?: number;
  /** How long a job's lock lasts without renewal: a killed worker's jobs are retaken after about this long. */
  lockDurationMs?: number;
  /** Builds the real engine of a job's `task` description (throws an InputError for a bad one). */
  resolveTask(remote: Record<string, unknown>): Promise<TrainTask>;
  log?: (line: string) => void;
  /** ORT threads per policy session (decide no result). */
  threads?: number;
}

export interface WorkerHandle {
  /** Jobs finished (results written or found written). */
  readonly done: number;
  close(): Promise<void>;
}

/** Policy versions kept loaded (the current one and the one before, with room for a second run). */
const POLICIES_KEPT = 4;

export async function startWorker(o: WorkerOptions): Promise<WorkerHandle> {
  const log = o.log ?? (() => {});
  const redis = await connectRedis(o.url);
  const policies = new Map<string, { sampler: Promise<PolicySampler>; users: number }>();
  const tasks = new Map<string, Promise<TrainTask>>();
  const idle = new Map<string, Env[]>();
  let done = 0;

  const withPolicy = async <T>(run: string, hash: string, f: (s: PolicySampler) => Promise<T>): Promise<T> => {
    let entry = policies.get(hash);
    if (!entry) {
      const sampler = (async () => {
        const text = await redis.get(keys.policy(run, hash));
        if (text === null) throw new Error(`policy version ${hash.slice(0, 12)} of run ${run} is not in Redis (its trainer has moved on or stopped)`);
        const { config, params } = decodePolicy(text, hash);
        return PolicySampler.create(config, params, { threads: o.threads ?? 1 });
      })();
      entry = { sampler, users: 0 };
      policies.set(hash, entry);
      sampler.catch(() => policies.delete(hash));
    }
    entry.users++;
    try {
      return await f(await entry.sampler);
    } finally {
      entry.users--;
      for (const [h, e] of policies) {
        if (policies.size <= POLICIES_KEPT) break;
        if (e.users === 0) { policies.delete(h); void e.sampler.then((s) => s.close(), () => {}); }
      }
    }
  };

  const processor = async (job: { id?: string; data: unknown }): Promise<string> => {
    const parsed = JobSchema.safeParse(job.data);
    if (!parsed.success) throw new UnrecoverableError(formatZodError(parsed.error, 'job payload: '));
    const j = parsed.data;
    const id = jobId(j);
    if (job.id !== id) throw new UnrecoverableError(`job payload: its id should be ${id}, the queue has ${job.id}`);
    if (j.build !== buildId()) throw new UnrecoverableError(`job ${id}: made by wmrl build ${j.build}, this worker runs ${buildId()} (run the trainer's commit, npm ci, on the same CPU architecture)`);
    if (await redis.exists(keys.result(id))) return 'reused'; // delivered again after another worker finished it
    log(`job ${id}: started (${j.group.keys.length} rollouts)`);
    const ref = canonicalJson(j.task);
    if (!tasks.has(ref)) {
      const made = o.resolveTask(j.task);
      tasks.set(ref, made);
      made.catch(() => tasks.delete(ref));
    }
    const task = await tasks.get(ref)!;
    const n = j.group.keys.length;
    const pool = `${ref}#${n}`;
    const env = idle.get(pool)?.pop() ?? (await task.makeReal(n));
    try {
      const { branching } = task;
      const record = branching && ((slot: number) => branching.record(env, slot));
      const t0 = performance.now(); // for the log line only
      const [rollouts] = await withPolicy(j.run, j.policy, (sampler) => runGroups(env, sampler, [j.group], { seed: j.seed, samplesPerRollout: j.samplesPerRollout, record }));
      const ms = performance.now() - t0;
      await redis.set(keys.result(id), encodeResult(id, rollouts), 'EX', KEY_TTL_S, 'NX'); // first writer wins
      done++;
      log(`job ${id}: done (${ms.toFixed(1)} ms in the group's rollouts)`);
      return 'done';
    } finally {
      if (!idle.has(pool)) idle.set(pool, []);
      idle.get(pool)!.push(env);
    }
  };

  const lockDuration = o.lockDurationMs ?? 10_000;
  const worker = new Worker(QUEUE, processor, {
    connection: redisOptions(o.url), concurrency: o.concurrency ?? 1,
    lockDuration, stalledInterval: Math.max(100, Math.floor(lockDuration / 2)), maxStalledCount: 100,
  });
  worker.on('failed', (job, err) => log(`job ${job?.id}: failed: ${err.message}`));
  worker.on('error', (err) => log(`worker: ${err.message}`));
  await worker.waitUntilReady();
  return {
    get done() { return done; },
    async close() {
      await worker.close();
      for (const envs of idle.values()) for (const e of envs) e.close();
      for (const e of policies.values()) await e.sampler.then((s) => s.close(), () => {});
      redis.disconnect();
    },
  };
}
