// run:info, the header of a run: a training run's i/N, clock and state from config.json, metrics.jsonl and
// the folder lock; a rollout folder's episodes and command; the live run's kind in the greeting.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sceneContract } from '../../src/demos/index.ts';
import { HelloSchema, RunInfoSchema, type TrainingInfo, okReply } from '../../src/protocol/index.ts';
import { type ViewerServer, startServer } from '../../src/server/index.ts';
import { folderLockPath } from '../../src/store/index.ts';
import { SCENE, makeRunRoot, metricsLine, viewerSocket, writeTrainingRun } from './fixture.ts';

let root: string;
const servers: ViewerServer[] = [];
const sockets: Socket[] = [];

async function serve(extra: { liveRun?: string; liveKind?: 'training' | 'rollout' } = {}) {
  const server = await startServer({
    runRoot: root,
    scene: SCENE,
    port: 0,
    replay: { scene: SCENE, contract: sceneContract(SCENE) },
    mounts: [],
    ...extra,
  });
  servers.push(server);
  const s = viewerSocket(server.url);
  sockets.push(s);
  const hello = await new Promise<unknown>((ok) => s.once('server:hello', ok));
  return { s, hello: HelloSchema.parse(hello) };
}

const info = async (s: Socket, run: unknown) =>
  okReply(RunInfoSchema).parse(await s.timeout(10_000).emitWithAck('run:info', { run }));
async function training(s: Socket, run: string): Promise<TrainingInfo> {
  const r = await info(s, run);
  if (!r.ok) throw new Error(r.error);
  if (r.data.kind !== 'training') throw new Error(`${run}: a ${r.data.kind}`);
  return r.data;
}

const lock = (dir: string, owner: { pid: number; host: string }) =>
  writeFileSync(
    folderLockPath(dir),
    JSON.stringify({ ...owner, command: 'wmrl train', started: '2026-12-03T12:00:00Z' }),
  );

beforeAll(async () => {
  ({ root } = await makeRunRoot());
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  for (const server of servers) await server.close();
});

describe('run:info', () => {
  it('a finished run: i/N reached, the training clock summed, the last held-out evaluation and the one before', async () => {
    const rows = writeTrainingRun(join(root, 'done'), { iterations: 3, rows: 3, evalEvery: 2, seconds: 4 });
    const { s } = await serve();
    const h = await training(s, 'done');
    expect(h).toMatchObject({ state: 'finished', mode: 'wmrl', iteration: 3, iterations: 3, leftS: null });
    expect(h.tasks).toEqual(['tabletop/push', 'tabletop/stack']);
    expect(h.clockS).toBeCloseTo(12, 9); // physics + world model + updates + refresh, 4 s a line
    expect(h.offClockS).toBeCloseTo(10, 9); // one evaluation (iteration 2), off the clock
    expect(h.heldOut).toEqual({
      iteration: 2,
      success: rows[1]['eval/success'],
      ciLow: rows[1]['eval/ci_low'],
      ciHigh: rows[1]['eval/ci_high'],
      episodes: 32,
    });
    expect(h.initial?.iteration).toBe(0);
    expect(h.policy).toBe(false);
  });

  it('running while a live process holds the lock, with the time left; interrupted once the lock is stale', async () => {
    const dir = join(root, 'going');
    writeTrainingRun(dir, { iterations: 10, rows: 4, seconds: 3 });
    lock(dir, { pid: process.pid, host: hostname() });
    const { s } = await serve();
    const a = await training(s, 'going');
    expect(a).toMatchObject({ state: 'running', iteration: 4, iterations: 10 });
    expect(a.note).toContain(`pid ${process.pid}`);
    expect(a.leftS).toBeCloseTo(3 * 6, 9); // 3 s per iteration so far, 6 to go
    // the lines appended since are read, none twice, even with requests from two clients at once
    appendFileSync(
      join(dir, 'metrics.jsonl'),
      `${JSON.stringify(metricsLine(5, { iterations: 10, rows: 5, seconds: 3 }))}\n`,
    );
    const { s: other } = await serve();
    const [b, c, d] = await Promise.all([training(s, 'going'), training(s, 'going'), training(other, 'going')]);
    for (const x of [b, c, d]) expect([x.iteration, x.clockS, x.leftS]).toEqual([5, 15, 15]);
    // an ended process's lock is stale: the run stopped before its last iteration
    const ended = spawnSync(process.execPath, ['-e', '']).pid;
    lock(dir, { pid: ended, host: hostname() });
    const e = await training(s, 'going');
    expect([e.state, e.leftS]).toEqual(['interrupted', null]);
    expect(e.note).toMatch(/stale/);
    // a lock from another machine cannot be checked from here: it counts as held
    lock(dir, { pid: ended, host: `${hostname()}-elsewhere` });
    expect((await training(s, 'going')).state).toBe('running');
  });

  it('a run trained for a time budget (wmrl start) shows its iterations without a bound and the budget left', async () => {
    const dir = join(root, 'budgeted');
    writeTrainingRun(dir, { iterations: 1_000_000, rows: 4, seconds: 3 });
    writeFileSync(
      join(dir, 'setup.json'),
      JSON.stringify({ policy: 'p', worldModel: 'w', task: 't', trainBudgetS: 100 }),
    );
    lock(dir, { pid: process.pid, host: hostname() });
    const { s } = await serve();
    const h = await training(s, 'budgeted');
    expect(h).toMatchObject({ state: 'running', iteration: 4, iterations: null, budgetS: 100 });
    expect(h.leftS).toBeCloseTo(100 - h.clockS - h.offClockS, 9);
    rmSync(folderLockPath(dir));
    expect(await training(s, 'budgeted')).toMatchObject({ state: 'interrupted', leftS: null });
    mkdirSync(join(dir, 'eval'));
    writeFileSync(join(dir, 'eval/report.json'), '{}');
    expect((await training(s, 'budgeted')).state).toBe('finished');
  });

  it('a rewritten metrics file (a resume) is counted from its start again', async () => {
    const dir = join(root, 'resumed');
    writeTrainingRun(dir, { iterations: 6, rows: 4, seconds: 2 });
    const { s } = await serve();
    expect((await training(s, 'resumed')).iteration).toBe(4);
    const path = join(dir, 'metrics.jsonl');
    const two = [1, 2].map((i) => `${JSON.stringify(metricsLine(i, { iterations: 6, rows: 2, seconds: 2 }))}\n`);
    writeFileSync(`${path}.new`, two.join(''));
    renameSync(`${path}.new`, path);
    const h = await training(s, 'resumed');
    expect([h.iteration, h.clockS, h.state]).toEqual([2, 4, 'interrupted']);
  });

  it('a metrics file without config.json: state unknown (its length is not known)', async () => {
    const { s } = await serve();
    const h = await training(s, 'train-a');
    expect(h).toMatchObject({ state: 'unknown', mode: null, iteration: 2, iterations: null });
  });

  it('a rollout folder says so: its episodes, tasks and the command that made it', async () => {
    const { s } = await serve();
    const r = await info(s, 'rollouts/push');
    if (!r.ok) throw new Error(r.error);
    expect(r.data).toMatchObject({
      kind: 'rollout',
      state: 'finished',
      command: 'test',
      tasks: ['tabletop/push'],
      episodes: 2,
    });
  });

  it('names the field of a bad request or a bad config.json, and refuses paths outside the run folder', async () => {
    const { s } = await serve();
    const bad = await info(s, 5);
    expect(bad.ok || bad.error).toMatch(/^run:info: run: /);
    const missing = await s.timeout(5000).emitWithAck('run:info', {});
    expect(okReply(RunInfoSchema).parse(missing)).toMatchObject({ ok: false });
    const dir = join(root, 'broken');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ config: { mode: 'wmrl', iterations: 'many' }, tasks: [] }),
    );
    const broken = await info(s, 'broken');
    expect(broken.ok || broken.error).toMatch(/config\.json: config\.iterations/);
    for (const run of ['..', '../secret', 'link-out']) expect((await info(s, run)).ok, run).toBe(false);
    expect((await info(s, 'missing-run')).ok).toBe(false);
  });

  it("the greeting names the live run's kind; an empty live folder gets the header of that kind", async () => {
    mkdirSync(join(root, 'live-rollout'));
    mkdirSync(join(root, 'live-train'));
    const rollout = await serve({ liveRun: 'live-rollout', liveKind: 'rollout' });
    expect(rollout.hello.liveKind).toBe('rollout');
    expect(await info(rollout.s, 'live-rollout')).toMatchObject({ ok: true, data: { kind: 'rollout', episodes: 0 } });
    const train = await serve({ liveRun: 'live-train' });
    expect(train.hello.liveKind).toBe('training');
    expect(await info(train.s, 'live-train')).toMatchObject({ ok: true, data: { kind: 'training', iteration: 0 } });
    expect((await serve()).hello.liveKind).toBeUndefined();
    expect((await info(train.s, 'live-rollout')).ok).toBe(false); // not the live run: an empty folder is neither
  });
});
