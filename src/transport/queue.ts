// The trainer's side of the Redis transport: each group (anchor or world-model) becomes one BullMQ job
// with a deterministic id (run, policy version, world-model snapshot, first rollout key); versions and
// snapshots are stored once under their sha256; a worker writes the result once (first writer wins)
// and the trainer reads it by id, so a job delivered twice or resubmitted after a crash still yields
// the same rollouts.
import { Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { InputError } from '../core/errors.ts';
import type { GroupRequest, RolloutTransport } from '../trainer/types.ts';
import type { Rollout } from '../trainer/rollouts.ts';
import { buildId } from './build.ts';
import {
  JOB_FORMAT,
  type RolloutJob,
  contentAddressed,
  decodeResult,
  encodeJson,
  encodePolicy,
  jobGroup,
  jobId,
} from './codec.ts';
import { KEY_TTL_S, QUEUE, connectRedis, keys, redactUrl, redisOptions } from './redis.ts';

export interface QueueTransportOptions {
  /** Jobs submitted and not yet read back, at most (default 64). */
  maxInFlight?: number;
  /** Progress notes (no worker connected). */
  log?: (line: string) => void;
  /** Seconds a job waits before the trainer checks that any worker is connected (default 10). */
  noWorkerNoteS?: number;
}

export class QueueTransport implements RolloutTransport {
  private readonly wake = new Map<string, () => void>();
  /** The current version of each run and kind (`run:kind`), kept to store it again if Redis lost it. */
  private readonly stored = new Map<string, { key: string; bytes: Buffer }>();
  private warned = false;

  private constructor(
    private readonly url: string,
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly o: Required<QueueTransportOptions>,
  ) {
    events.on('completed', ({ jobId: id }) => this.wake.get(id)?.());
    events.on('failed', ({ jobId: id }) => this.wake.get(id)?.());
  }

  static async open(url: string, o: QueueTransportOptions = {}): Promise<QueueTransport> {
    const redis = await connectRedis(url);
    const connection = redisOptions(url);
    const queue = new Queue(QUEUE, { connection });
    const events = new QueueEvents(QUEUE, { connection });
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    return new QueueTransport(url, redis, queue, events, {
      maxInFlight: o.maxInFlight ?? 64,
      log: o.log ?? (() => {}),
      noWorkerNoteS: o.noWorkerNoteS ?? 10,
    });
  }

  async run(r: GroupRequest): Promise<Rollout[][]> {
    const policy = await this.store(r.run, 'policy', () => encodePolicy(r.policy.config, r.policy.params));
    let worldModel: string | undefined;
    if (r.engine === 'model') {
      const snapshot = r.worldModel?.snapshot;
      if (!snapshot) throw new InputError('--redis: this world model cannot run on workers (it has no snapshot)');
      worldModel = await this.store(r.run, 'world-model', () => contentAddressed(snapshot.call(r.worldModel)));
    }
    const jobs = r.jobs.map((g): RolloutJob => {
      const task = r.tasks[g.task];
      if (!task.remote)
        throw new InputError(`--redis: task ${task.id} cannot run on workers (it has no remote description)`);
      return {
        format: JOB_FORMAT,
        run: r.run,
        build: buildId(),
        task: task.remote,
        policy,
        worldModel,
        seed: r.seed,
        samplesPerRollout: r.samplesPerRollout,
        group: jobGroup(g),
        ...(r.recordStates && { recordStates: true }),
        ...(r.temperature !== undefined && r.temperature !== 1 && { temperature: r.temperature }),
      };
    });
    const out: Rollout[][] = new Array(jobs.length);
    let next = 0;
    const lane = async () => {
      while (next < jobs.length) {
        const k = next++;
        out[k] = await this.collect(jobs[k]);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.o.maxInFlight, jobs.length) }, lane));
    return out;
  }

  /** Stores a version once under its content hash (the run's previous one of that kind is deleted:
   *  this run's jobs are collected in order, so none of it is in flight); returns the hash. */
  private async store(
    run: string,
    kind: 'policy' | 'world-model',
    make: () => { bytes: Buffer; hash: string },
  ): Promise<string> {
    const { bytes, hash } = make();
    const key = keys.version(run, kind, hash);
    const prev = this.stored.get(`${run}:${kind}`);
    if (prev?.key !== key) {
      await this.redis.set(key, bytes, 'EX', KEY_TTL_S, 'NX');
      if (prev) await this.redis.del(prev.key);
      this.stored.set(`${run}:${kind}`, { key, bytes });
    }
    return hash;
  }

  /** Submits one job (unless its result is already there) and reads its result back, deleting it. */
  private async collect(job: RolloutJob): Promise<Rollout[]> {
    const id = jobId(job);
    const key = keys.result(id);
    // a completion event wakes the wait early (or the next one, if it comes between waits)
    let early = false;
    let woken = () => {
      early = true;
    };
    this.wake.set(id, () => woken());
    try {
      const submit = () =>
        this.queue.add(job.group.kind, JSON.parse(encodeJson(job)), {
          jobId: id,
          removeOnComplete: true,
          removeOnFail: { age: 3600 },
        });
      let result = await this.redis.getBuffer(key);
      if (result === null) {
        const stale = await this.queue.getJob(id);
        if (stale && (await stale.getState()) === 'failed') await stale.remove(); // a new attempt
        await submit();
      }
      for (let waited = 0; result === null; waited++) {
        if (!early) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 1000); // the poll covers a missed event
            woken = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        early = false;
        woken = () => {
          early = true;
        };
        result = await this.redis.getBuffer(key);
        if (result !== null) break;
        const queued = await this.queue.getJob(id);
        if (queued && (await queued.getState()) === 'failed')
          throw new InputError(`job ${id} failed on a worker: ${queued.failedReason}`);
        // neither queued nor answered (Redis restarted, the queue was cleared): store what it names
        // again and submit it again
        if (!queued && (await this.redis.exists(key)) === 0) {
          for (const [runKind, v] of this.stored)
            if (runKind.startsWith(`${job.run}:`)) await this.redis.set(v.key, v.bytes, 'EX', KEY_TTL_S, 'NX');
          await submit();
        }
        if (waited === this.o.noWorkerNoteS && !this.warned) {
          this.warned = true; // once per trainer, whichever job waits first
          const url = redactUrl(this.url);
          if ((await this.queue.getWorkersCount()) === 0)
            this.o.log(`no worker is taking jobs from ${url}: start one with wmrl worker --redis ${url}`);
        }
      }
      await this.redis.del(key);
      return decodeResult(result, id, job.group.keys);
    } finally {
      this.wake.delete(id);
    }
  }

  async close(): Promise<void> {
    for (const v of this.stored.values()) await this.redis.del(v.key);
    await Promise.all([this.queue.close(), this.events.close()]);
    this.redis.disconnect();
  }
}
