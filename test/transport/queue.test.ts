import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PolicySampler } from '../../src/policy/sampler.ts';
import { InProcessTransport, type GroupRequest, type GroupJob, type TrainTask } from '../../src/trainer/index.ts';
import {
  JOB_FORMAT,
  QUEUE,
  buildId,
  QueueTransport,
  type RolloutJob,
  type WorkerHandle,
  encodePolicy,
  encodeValue,
  jobGroup,
  jobId,
  keys,
  redisOptions,
  startWorker,
} from '../../src/transport/index.ts';
import { setup } from '../trainer/code-lock.ts';
import { type RedisServer, describeWithRedis, startRedis } from './redis-server.ts';

const toy = setup();
const task: TrainTask = { ...toy.tasks[0], remote: { family: 'toy' } };
const RUN = '00112233445566aa';
const groups = (first: number, count: number, size = 4): GroupJob[] =>
  Array.from({ length: count }, (_, g) => ({
    kind: 'anchor',
    task: 0,
    start: 100 + g,
    startIndex: g,
    keys: Array.from({ length: size }, (_, k) => first + g * size + k),
  }));
const request = (jobs: GroupJob[], params = toy.policy.params): GroupRequest => ({
  run: RUN,
  engine: 'real',
  tasks: [task],
  jobs,
  policy: { config: toy.policy.config, params },
  seed: 5,
  samplesPerRollout: 2,
});

async function inProcess(r: GroupRequest) {
  const env = await task.makeReal(3); // another batch size than the workers': results must not care
  const sampler = await PolicySampler.create(r.policy.config, r.policy.params);
  try {
    return await new InProcessTransport([{ real: env, model: null }], sampler).run(r);
  } finally {
    env.close();
    await sampler.close();
  }
}

describeWithRedis('anchor jobs through a real Redis (BullMQ worker in this process)', () => {
  let server: RedisServer;
  let worker: WorkerHandle;
  let transport: QueueTransport;
  let redis: Redis;
  let queue: Queue;
  const failures: string[] = [];
  beforeAll(async () => {
    server = await startRedis();
    // two jobs at once: they share the policy session and take separate envs from the pool
    worker = await startWorker({
      url: server.url,
      concurrency: 2,
      lockDurationMs: 1000,
      resolveTask: async (remote) => {
        if (remote.family !== 'toy') throw new Error('job task: not the toy');
        return task;
      },
      log: (l) => {
        if (l.includes('failed')) failures.push(l);
      },
    });
    transport = await QueueTransport.open(server.url, { maxInFlight: 2 });
    redis = new Redis(redisOptions(server.url));
    queue = new Queue(QUEUE, { connection: redisOptions(server.url) });
  }, 20_000);
  afterAll(async () => {
    await transport?.close();
    await worker?.close();
    await queue?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('round trip: rollouts from the worker equal the in-process ones bit for bit (states, samples, log-probs)', async () => {
    const r = request(groups(0, 5));
    const remote = await transport.run(r);
    expect(remote.map((g) => g.map((x) => x.key))).toEqual(r.jobs.map((j) => j.keys));
    expect(remote[0][0].states!.length).toBeGreaterThan(0);
    expect(remote.flat().some((x) => x.samples.length === 2)).toBe(true);
    expect(encodeValue(remote).equals(encodeValue(await inProcess(r)))).toBe(true);
    // results are read once and deleted; only the run's current policy version is kept
    expect(await redis.keys('wmrl:result:*')).toEqual([]);
    expect(await redis.keys(`wmrl:policy:${RUN}:*`)).toEqual([
      keys.version(RUN, 'policy', encodePolicy(r.policy.config, r.policy.params).hash),
    ]);
  });

  it('idempotent: a job submitted twice runs once, and a result already written wins over a second run', async () => {
    const r = request(groups(1000, 1));
    const { hash, bytes } = encodePolicy(r.policy.config, r.policy.params);
    await redis.set(keys.version(RUN, 'policy', hash), bytes);
    const job: RolloutJob = {
      format: JOB_FORMAT,
      run: RUN,
      build: buildId(),
      task: task.remote!,
      policy: hash,
      seed: 5,
      samplesPerRollout: 2,
      group: jobGroup({ ...r.jobs[0], kind: 'anchor' }),
    };
    const before = worker.done;
    await Promise.all([
      queue.add('anchor', job, { jobId: jobId(job) }),
      queue.add('anchor', job, { jobId: jobId(job) }),
    ]);
    for (let i = 0; i < 100 && !(await redis.exists(keys.result(jobId(job)))); i++)
      await new Promise((s) => setTimeout(s, 50));
    const written = await redis.getBuffer(keys.result(jobId(job)));
    expect(written).not.toBeNull();
    const got = await transport.run(r); // finds the written result: no new run
    expect(worker.done).toBe(before + 1);
    expect(encodeValue(got).equals(encodeValue(await inProcess(r)))).toBe(true);
    // delivered again after it finished (at-least-once): the worker sees the result and skips the job
    await redis.set(keys.result(jobId(job)), written!);
    await queue.add('anchor', job, { jobId: jobId(job) });
    for (let i = 0; i < 100 && (await (await queue.getJob(jobId(job)))?.getState()) !== 'completed'; i++)
      await new Promise((s) => setTimeout(s, 50));
    expect(worker.done).toBe(before + 1);
    expect((await redis.getBuffer(keys.result(jobId(job))))!.equals(written!)).toBe(true);
  });

  it('bad payloads fail their own job, naming the field, and the worker goes on', async () => {
    const r = request(groups(2000, 1));
    const { hash } = encodePolicy(r.policy.config, r.policy.params);
    const good: RolloutJob = {
      format: JOB_FORMAT,
      run: RUN,
      build: buildId(),
      task: task.remote!,
      policy: hash,
      seed: 5,
      samplesPerRollout: 2,
      group: jobGroup({ ...r.jobs[0], kind: 'anchor' }),
    };
    const bad = [
      { id: 'bad-keys', data: { ...good, group: { ...good.group, keys: [-1] } }, says: /group\.keys\[0\]: Too small/ },
      { id: 'bad-field', data: { ...good, extra: 1 }, says: /extra/ },
      { id: 'bad-id', data: good, says: /its id should be/ },
      { id: 'not-json-object', data: 'garbage', says: /job payload/ },
      {
        id: jobId(good),
        data: { ...good, build: 'ffffffffffffffff' },
        says: /made by wmrl build ffffffffffffffff, this worker runs/,
      },
    ];
    for (const b of bad) await queue.add('anchor', b.data, { jobId: b.id });
    for (const b of bad) {
      let state = '';
      for (let i = 0; i < 100 && state !== 'failed'; i++) {
        state = await (await queue.getJob(b.id))!.getState();
        if (state !== 'failed') await new Promise((s) => setTimeout(s, 50));
      }
      expect(state, b.id).toBe('failed');
      expect((await queue.getJob(b.id))!.failedReason, b.id).toMatch(b.says);
    }
    expect(encodeValue(await transport.run(r)).equals(encodeValue(await inProcess(r)))).toBe(true);
  });

  it('a policy version whose bytes do not match its hash fails the job, and the trainer names the job', async () => {
    const r = request(groups(3000, 1));
    const { hash, bytes } = encodePolicy(r.policy.config, r.policy.params);
    const other = r.policy.params.clone();
    other.get(other.names[0])[0] += 1;
    const tampered = { hash: encodePolicy(r.policy.config, other).hash, bytes };
    await redis.set(keys.version(RUN, 'policy', tampered.hash), tampered.bytes);
    const job: RolloutJob = {
      format: JOB_FORMAT,
      run: RUN,
      build: buildId(),
      task: task.remote!,
      policy: tampered.hash,
      seed: 5,
      samplesPerRollout: 2,
      group: jobGroup({ ...r.jobs[0], kind: 'anchor' }),
    };
    await queue.add('anchor', job, { jobId: jobId(job) });
    let state = '';
    for (let i = 0; i < 100 && state !== 'failed'; i++) {
      state = await (await queue.getJob(jobId(job)))!.getState();
      await new Promise((s) => setTimeout(s, 50));
    }
    expect((await queue.getJob(jobId(job)))!.failedReason).toMatch(/hash to/);
    expect(hash).not.toBe(tampered.hash);
  });

  it("a task a worker cannot build fails the run with the worker's reason", async () => {
    const r = { ...request(groups(4000, 1)), tasks: [{ ...task, remote: { family: 'nowhere' } }] };
    await expect(transport.run(r)).rejects.toThrow(/failed on a worker: job task: not the toy/);
  });
});

describeWithRedis('a password-protected Redis on a TCP port (the other-machine setup, on loopback)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ password: 's3cret pass' });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('connects with the password in the URL and refuses a wrong one without printing it', async () => {
    const t = await QueueTransport.open(server.url);
    await t.close();
    const wrong = server.url.replace('s3cret%20pass', 'wrong-one');
    const err = await QueueTransport.open(wrong).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^--redis: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1/);
    expect(err?.message).not.toContain('wrong-one');
  });
});

describeWithRedis('no worker yet, and a Redis that lost everything (restarted without persistence)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the trainer says no worker is connected, stores its policy and submits the lost jobs again, and goes on with the same rollouts', {
    timeout: 30_000,
  }, async () => {
    const notes: string[] = [];
    const transport = await QueueTransport.open(server.url, { log: (l) => notes.push(l), noWorkerNoteS: 1 });
    const queue = new Queue(QUEUE, { connection: redisOptions(server.url) });
    const redis = new Redis(redisOptions(server.url));
    const r = request(groups(5000, 2));
    const pending = transport.run(r);
    let waiting: string[] = [];
    for (let i = 0; i < 100 && !waiting.length; i++) {
      waiting = (await queue.getWaiting()).map((j) => j.id!);
      await new Promise((s) => setTimeout(s, 20));
    }
    expect(waiting).toHaveLength(2);
    await redis.flushall(); // a restarted server: the jobs and the stored policy version are gone
    expect(await queue.getJob(waiting[0])).toBeUndefined();
    for (let i = 0; i < 100 && !notes.length; i++) await new Promise((s) => setTimeout(s, 50));
    expect(notes).toEqual([
      `no worker is taking jobs from ${server.url}: start one with wmrl worker --redis ${server.url}`,
    ]);
    const worker = await startWorker({ url: server.url, resolveTask: async () => task });
    try {
      expect(encodeValue(await pending).equals(encodeValue(await inProcess(r)))).toBe(true);
      expect(worker.done).toBe(2);
    } finally {
      await worker.close();
      await transport.close();
      await queue.close();
      redis.disconnect();
    }
  });
});

describeWithRedis('a worker starved past its lock', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis();
  }, 20_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('writes no result for the job it lost; the job is redone and read once, nothing stays in Redis', async () => {
    const logs: string[] = [];
    let blocked = false;
    // the first env it builds blocks its event loop for longer than its lock lasts
    const starving: TrainTask = {
      ...task,
      makeReal: async (n) => {
        const env = await task.makeReal(n);
        if (!blocked) {
          blocked = true;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1200); // a synchronous 1.2 s
        }
        return env;
      },
    };
    const worker = await startWorker({
      url: server.url,
      lockDurationMs: 300,
      resolveTask: async () => starving,
      log: (l) => logs.push(l),
    });
    const transport = await QueueTransport.open(server.url, { maxInFlight: 1 });
    const redis = new Redis(redisOptions(server.url));
    try {
      const r = request(groups(5000, 1));
      const got = await transport.run(r);
      expect(encodeValue(got).equals(encodeValue(await inProcess(r)))).toBe(true);
      expect(logs.some((l) => /its lock lapsed, left to the worker that holds it now/.test(l))).toBe(true);
      expect(await redis.keys('wmrl:result:*')).toEqual([]);
    } finally {
      await transport.close();
      await worker.close();
      redis.disconnect();
    }
  }, 60_000);
});
