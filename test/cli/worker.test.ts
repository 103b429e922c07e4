import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { QUEUE, redisOptions } from '../../src/transport/index.ts';
import { OPENSSL, REDIS, describeWith } from '../helpers/programs.ts';
import { type RedisServer, describeWithRedis, startRedis } from '../transport/redis-server.ts';
import { spawnWmrl, wmrlProcess } from './helpers.ts';

const ROOT = join(import.meta.dirname, '../..');
const tmp = mkdtempSync(join(tmpdir(), 'wmrl-worker-cli-'));
const metrics = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) =>
      Object.fromEntries(
        Object.entries(JSON.parse(l) as Record<string, number>).filter(([k]) => !k.startsWith('time/')),
      ),
    );
const RUN_FILES = ['checkpoint.json', 'checkpoint.bin', 'policy.onnx', 'policy.json'];
const files = (dir: string) =>
  Object.fromEntries(RUN_FILES.map((f) => [f, readFileSync(join(dir, f)).toString('base64')]));

/** A `wmrl worker` process; `log` collects its stderr, `started` resolves on its first job. */
async function worker(
  url: string,
  env: NodeJS.ProcessEnv = {},
): Promise<{ proc: ChildProcess; log: () => string; started: Promise<string> }> {
  const { child: proc } = await spawnWmrl(
    { cwd: ROOT, env },
    'worker',
    '--redis',
    url,
    '--verbose',
    '--lock-duration',
    '1000',
  );
  let log = '';
  const started = new Promise<string>((resolve) =>
    proc.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      const m = log.match(/job (\S+): started/);
      if (m) resolve(m[1]);
    }),
  );
  return { proc, log: () => log, started };
}

async function stop(w: { proc: ChildProcess }): Promise<void> {
  if (w.proc.exitCode !== null || w.proc.signalCode !== null) return;
  const exited = new Promise((r) => w.proc.once('exit', r));
  w.proc.kill('SIGKILL');
  await exited;
}

describeWithRedis('wmrl worker and wmrl train --redis (real processes, real Redis on a unix socket)', () => {
  let server: RedisServer;
  const cfg = join(tmp, 'cfg.json');
  // wmrl mode (world-model groups on the workers with --remote all), refreshes from the anchors' states
  writeFileSync(cfg, JSON.stringify({ refreshEvery: 150, refreshSteps: 5, checkpointEvery: 1 }));
  const train = (iterations = 3) => [
    'train',
    '--mode',
    'wmrl',
    '--preset',
    'smoke',
    '--task',
    'pick-place',
    '--iterations',
    String(iterations),
    '--config',
    cfg,
  ];
  const local = join(tmp, 'local');
  beforeAll(async () => {
    server = await startRedis();
    const r = await wmrlProcess(ROOT, ...train(), '--out', local);
    expect(r.code, r.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('in-process, 1 worker (anchors) and 2 workers (all groups): identical metrics (time fields aside), checkpoints and policy files', {
    timeout: 180_000,
  }, async () => {
    expect(metrics(local).at(-1)!['refresh/count']).toBeGreaterThan(0);
    const workers = [await worker(server.url)];
    try {
      for (const [count, remote] of [
        [1, 'anchors'],
        [2, 'all'],
      ] as const) {
        while (workers.length < count) workers.push(await worker(server.url));
        const out = join(tmp, `workers-${count}`);
        const r = await wmrlProcess(ROOT, ...train(), '--out', out, '--redis', server.url, '--remote', remote);
        expect(r.code, r.stderr).toBe(0);
        expect(metrics(out)).toEqual(metrics(local));
        expect(files(out)).toEqual(files(local));
      }
      expect(workers.every((w) => /started/.test(w.log()))).toBe(true); // both took jobs
      // bounded: no result, completed job or stored version outlives the runs
      const redis = new Redis(redisOptions(server.url));
      try {
        expect(await redis.keys('wmrl:*')).toEqual([]);
        expect(await redis.zcard(`bull:${QUEUE}:completed`)).toBe(0);
      } finally {
        redis.disconnect();
      }
      // ids are run-policy-snapshot-key: both anchors ("real") and world-model groups ran on workers
      const ids = workers.flatMap((w) => [...w.log().matchAll(/job (\S+): done/g)].map((m) => m[1].split('-')[2]));
      expect(ids).toContain('real');
      expect(ids.some((s) => /^[0-9a-f]{16}$/.test(s))).toBe(true);
    } finally {
      await Promise.all(workers.map(stop));
    }
  });

  it('a worker killed with a job in flight changes nothing but the time', { timeout: 180_000 }, async () => {
    const workers = [await worker(server.url), await worker(server.url)];
    try {
      const out = join(tmp, 'killed');
      const run = wmrlProcess(ROOT, ...train(), '--out', out, '--redis', server.url, '--remote', 'all');
      const [job, k] = await Promise.race(workers.map((w, i) => w.started.then((id) => [id, i] as const)));
      await stop(workers[k]);
      const r = await run;
      expect(r.code, r.stderr).toBe(0);
      expect(workers[k].log()).not.toMatch(new RegExp(`job ${job}: done`));
      expect(workers[1 - k].log()).toMatch(new RegExp(`job ${job}: done`)); // retaken after its lock lapsed
      expect(metrics(out)).toEqual(metrics(local));
      expect(files(out)).toEqual(files(local));
    } finally {
      await Promise.all(workers.map(stop));
    }
  });

  it('a run stopped and resumed through workers equals the straight in-process run', { timeout: 180_000 }, async () => {
    const w = await worker(server.url);
    try {
      const out = join(tmp, 'resumed');
      const first = await wmrlProcess(ROOT, ...train(2), '--out', out, '--redis', server.url, '--remote', 'all');
      expect(first.code, first.stderr).toBe(0);
      const rest = await wmrlProcess(
        ROOT,
        'train',
        '--resume',
        out,
        '--iterations',
        '3',
        '--redis',
        server.url,
        '--remote',
        'all',
      );
      expect(rest.code, rest.stderr).toBe(0);
      expect(metrics(out)).toEqual(metrics(local));
      expect(files(out)).toEqual(files(local));
    } finally {
      await stop(w);
    }
  });

  it('the default preset (frontier starts) with the repeat penalty, real-branch, and environment evolution with dynamic sampling, clip-higher and a rollout temperature: through workers as in-process', {
    timeout: 300_000,
  }, async () => {
    const small = join(tmp, 'default.json');
    const sizes = { groupsPerIteration: 2, groupSize: 4, samplesPerRollout: 4, batch: 16, numEnvs: 8 };
    // a penalty that fires: any 3 repeated tokens (world-model groups then record their states too)
    const repeat = { coef: 0.5, window: 3, tolerance: 10 };
    writeFileSync(small, JSON.stringify({ ...sizes, evalEvery: 0, checkpointEvery: 1, repeat }));
    const evolution = join(tmp, 'evolution.json');
    const explore = { clipHigh: 0.28, temperature: 1.6, klCoef: 0 };
    const starts = { evolution: { enabled: true }, frontier: { enabled: false }, branchShare: 1 };
    const dynamicSampling = { enabled: true, maxExtraGroups: 2 };
    writeFileSync(
      evolution,
      JSON.stringify({ ...sizes, evalEvery: 0, checkpointEvery: 1, ...starts, dynamicSampling, ...explore }),
    );
    const workers = [await worker(server.url), await worker(server.url)];
    try {
      for (const [name, mode, config] of [
        ['wmrl', 'wmrl', small],
        ['real-branch', 'real-branch', small],
        ['evolution', 'wmrl', evolution],
      ]) {
        const args = ['train', '--mode', mode, '--preset', 'default', '--task', 'pick-place', '--iterations', '2'];
        const [here, there] = [join(tmp, `${name}-local`), join(tmp, `${name}-workers`)];
        const a = await wmrlProcess(ROOT, ...args, '--config', config, '--out', here);
        expect(a.code, a.stderr).toBe(0);
        const b = await wmrlProcess(
          ROOT,
          ...args,
          '--config',
          config,
          '--out',
          there,
          '--redis',
          server.url,
          '--remote',
          'all',
        );
        expect(b.code, b.stderr).toBe(0);
        const first = metrics(here)[0];
        // groups started on the expert's states
        if (name === 'evolution') expect(first['evolution/level']).toBeLessThan(1);
        else expect(first['frontier/level']).toBeLessThan(1);
        if (name !== 'evolution') expect(first['repeat/penalty']).toBeGreaterThan(0);
        expect(metrics(there)).toEqual(metrics(here));
        expect(files(there)).toEqual(files(here));
      }
    } finally {
      await Promise.all(workers.map(stop));
    }
  });

  it('a bad or unreachable --redis exits 2 naming the flag', async () => {
    const bad = await wmrlProcess(ROOT, 'worker', '--redis', 'http://127.0.0.1:6379');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--redis: protocol http:/);
    const remote = await wmrlProcess(ROOT, 'worker', '--redis', 'redis://10.1.2.3:6379');
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/password/);
    const gone = await wmrlProcess(
      ROOT,
      ...train(),
      '--out',
      join(tmp, 'never'),
      '--redis',
      `unix://${join(tmp, 'none.sock')}`,
    );
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/--redis: cannot reach Redis/);
    const alone = await wmrlProcess(ROOT, ...train(), '--out', join(tmp, 'never'), '--remote', 'all');
    expect(alone.code).toBe(2);
    expect(alone.stderr).toMatch(/--remote: needs --redis/);
  });
});

describeWith(REDIS, OPENSSL)('over TLS (rediss://, a private CA through NODE_EXTRA_CA_CERTS)', () => {
  let server: RedisServer & { ca?: string };
  beforeAll(async () => {
    server = await startRedis({ tls: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('a run through a TLS-only Redis equals the in-process run; without the CA it is refused', {
    timeout: 120_000,
  }, async () => {
    const REAL = ['train', '--mode', 'real', '--preset', 'smoke', '--task', 'pick-place', '--iterations', '1'];
    const env = { NODE_EXTRA_CA_CERTS: server.ca };
    const here = join(tmp, 'tls-local');
    expect((await wmrlProcess(ROOT, ...REAL, '--out', here)).code).toBe(0);
    const untrusted = await wmrlProcess(ROOT, ...REAL, '--out', join(tmp, 'never'), '--redis', server.url);
    expect(untrusted.code).toBe(2);
    expect(untrusted.stderr).toMatch(
      /--redis: cannot reach Redis at rediss:\/\/localhost:\d+ \(.*(certificate|self.signed)/i,
    );
    const w = await worker(server.url, env);
    try {
      const out = join(tmp, 'tls');
      const r = await wmrlProcess({ cwd: ROOT, env }, ...REAL, '--out', out, '--redis', server.url);
      expect(r.code, r.stderr).toBe(0);
      expect(w.log()).toMatch(/: done/);
      expect(metrics(out)).toEqual(metrics(here));
      expect(files(out)).toEqual(files(here));
    } finally {
      await stop(w);
    }
  });
});
