import { appendFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import type { Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sceneContract } from '../../src/demos/index.ts';
import { createTabletopEnv, fixedCameras, tabletopSpec } from '../../src/physics/index.ts';
import {
  EpisodeSummarySchema,
  FrameSchema,
  MetricsChunkSchema,
  PROTOCOL_VERSION,
  ReplaySchema,
  RunSummarySchema,
  okReply,
} from '../../src/protocol/index.ts';
import { collectEpisodes, randomPolicy } from '../../src/rollout/index.ts';
import { type ViewerServer, startServer } from '../../src/server/index.ts';
import { tapFrames } from '../../src/env/index.ts';
import { openWorldModelEnv } from '../../src/worldmodel/index.ts';
import { SCENE, makeRunRoot, viewerSocket } from './fixture.ts';

let server: ViewerServer;
let root: string;
const sockets: Socket[] = [];

function client(auth: Record<string, unknown> = { protocol: PROTOCOL_VERSION }, url = server.url): Promise<Socket> {
  const s = viewerSocket(url, auth);
  sockets.push(s);
  return new Promise((ok, fail) => {
    s.once('connect', () => ok(s));
    s.once('connect_error', (err) => fail(err));
  });
}

async function ask<T extends z.ZodType>(
  s: Socket,
  event: string,
  data: T,
  payload?: unknown,
): Promise<z.infer<ReturnType<typeof okReply<T>>>> {
  const raw =
    payload === undefined
      ? await s.timeout(20_000).emitWithAck(event)
      : await s.timeout(20_000).emitWithAck(event, payload);
  return okReply(data).parse(raw);
}

beforeAll(async () => {
  ({ root } = await makeRunRoot());
  const model = openWorldModelEnv('models/wm-base.onnx', {
    scene: SCENE,
    spec: tabletopSpec(SCENE, 'tabletop/push', fixedCameras(SCENE)),
    numEnvs: 1,
    render: false,
  });
  server = await startServer({
    runRoot: root,
    scene: SCENE,
    port: 0,
    replay: { scene: SCENE, contract: sceneContract(SCENE), openModel: () => model },
    mounts: [
      { prefix: '/', dir: join(dirname(root), 'static') },
      { prefix: '/models/', dir: 'models', extensions: ['.onnx', '.json'] },
    ],
  });
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  await server?.close();
});

describe('viewer server', () => {
  it('binds loopback by default and greets with the protocol version and the scene', async () => {
    expect(server.host).toBe('127.0.0.1');
    const s = viewerSocket(server.url);
    sockets.push(s);
    const hello = await new Promise<{ protocol: number; scene: { name: string } }>((ok) => s.once('server:hello', ok));
    expect(hello.protocol).toBe(PROTOCOL_VERSION);
    expect(hello.scene.name).toBe('tabletop');
  });

  it('lists runs, episodes and metrics, and replays an episode in physics and the world model', async () => {
    const s = await client();
    const runs = await ask(s, 'run:list', z.array(RunSummarySchema));
    expect(runs.ok && runs.data.map((r) => r.id)).toEqual(['rollouts/push', 'train-a']); // the symlink out is not listed
    const eps = await ask(s, 'episode:list', z.array(EpisodeSummarySchema), { run: 'rollouts/push' });
    if (!eps.ok) throw new Error(eps.error);
    expect(eps.data).toHaveLength(2);
    const replay = await ask(s, 'episode:replay', ReplaySchema, { run: 'rollouts/push', index: 0 });
    if (!replay.ok) throw new Error(replay.error);
    const { physics, worldModel, divergence } = replay.data;
    expect(physics).toHaveLength(eps.data[0].length + 1);
    expect(physics.at(-1)!.success).toBe(eps.data[0].success);
    expect(physics[0].bodies.map((b) => b.name)).toContain('finger_left');
    expect(worldModel!.length).toBeGreaterThan(1);
    expect(divergence!.tcp_m[0]).toBeLessThan(1e-3); // both start from the recorded state
    const metrics = await ask(s, 'metrics:get', MetricsChunkSchema, { run: 'train-a' });
    expect(metrics.ok && metrics.data.rows.map((r) => r.iteration)).toEqual([1, 2]); // the line being written waits
  });

  it('metrics reach a client incrementally: the lines after its cursor, all again when the file is rewritten', async () => {
    const s = await client();
    const dir = join(root, 'growing');
    mkdirSync(dir);
    const path = join(dir, 'metrics.jsonl');
    writeFileSync(path, '{"iteration":1}\n{"iteration":2}\n{"iterat');
    const get = async (after?: unknown) => {
      const r = await ask(s, 'metrics:get', MetricsChunkSchema, { run: 'growing', after });
      if (!r.ok) throw new Error(r.error);
      return r.data;
    };
    const first = await get();
    expect([first.rows.map((r) => r.iteration), first.restart, first.more]).toEqual([[1, 2], true, false]);
    appendFileSync(path, 'ion":3}\n{"iteration":4}\n');
    const second = await get(first.next);
    expect([second.rows.map((r) => r.iteration), second.restart]).toEqual([[3, 4], false]);
    expect(await get(second.next)).toMatchObject({ rows: [], restart: false, next: second.next });
    // a resume rewrites the file (a new inode): the client is told to start again
    writeFileSync(`${path}.new`, '{"iteration":1}\n');
    renameSync(`${path}.new`, path);
    const third = await get(second.next);
    expect([third.rows.map((r) => r.iteration), third.restart]).toEqual([[1], true]);
    expect(
      (await ask(s, 'metrics:get', MetricsChunkSchema, { run: 'growing', after: { file: 'x', offset: -1 } })).ok,
    ).toBe(false);
  });

  it('a client cannot pile up metrics requests: one is answered at a time, the others are refused at once', async () => {
    const s = await client();
    const dir = join(root, 'long');
    mkdirSync(dir);
    const line = `${JSON.stringify({ iteration: 1, note: 'x'.repeat(1000) })}\n`;
    writeFileSync(join(dir, 'metrics.jsonl'), line.repeat(20_000)); // 20 MB: several answers of 4 MiB
    const replies = await Promise.all(
      Array.from({ length: 5 }, () => ask(s, 'metrics:get', MetricsChunkSchema, { run: 'long' })),
    );
    expect(replies.filter((r) => r.ok)).toHaveLength(1);
    for (const r of replies.filter((r) => !r.ok)) expect(r.ok || r.error).toMatch(/still being answered/);
    const ok = replies.find((r) => r.ok);
    expect(ok?.ok && [ok.data.more, ok.data.rows.length < 20_000]).toEqual([true, true]);
  });

  it('refuses paths outside the run folder and the static folders', async () => {
    const s = await client();
    for (const run of ['..', '../secret', '/etc', 'link-out', 'rollouts/../../secret', 'missing']) {
      const r = await ask(s, 'metrics:get', MetricsChunkSchema, { run });
      expect(r.ok, run).toBe(false);
    }
    const base = server.url.replace(/\/$/, '');
    for (const path of [
      '/../secret/secret.json',
      '/%2e%2e/secret/secret.json',
      '/leak.json',
      '/models/../package.json',
      '/models/%2e%2e%2fpackage.json',
      '/models/vla-base.py',
    ]) {
      const res = await fetch(base + path);
      expect(res.status, path).toBe(404);
      expect(await res.text()).not.toContain('secret');
    }
    expect((await fetch(`${base}/`)).status).toBe(200);
    expect((await fetch(`${base}/models/vla-base.json`)).status).toBe(200);
  });

  it('survives fuzzed junk: bad events, payloads and acks get error replies or nothing, and it keeps serving', async () => {
    const s = await client();
    const requests = ['episode:list', 'episode:replay', 'metrics:get', 'run:info', 'live:subscribe'];
    const others = ['run:list', 'live:unsubscribe', 'nope', '__proto__', 'constructor', 'toString'];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...requests, ...others),
        fc.anything({ withBigInt: false, withTypedArray: false }),
        fc.boolean(),
        async (event, payload, withAck) => {
          if (!withAck || !requests.includes(event)) return void s.emit(event, payload, () => undefined);
          // a request with a junk payload always gets a reply: data when the payload happens to be valid, else an error naming the field
          const reply = await s.timeout(5000).emitWithAck(event, payload);
          expect(typeof reply === 'object' && reply !== null && 'ok' in reply).toBe(true);
        },
      ),
      { numRuns: 200, seed: 7 },
    );
    const res = await fetch(`${server.url}socket.io/?EIO=4&transport=polling`, {
      method: 'POST',
      body: '\u0000\u00ff garbage',
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    const runs = await ask(await client(), 'run:list', z.array(RunSummarySchema));
    expect(runs.ok).toBe(true);
  });

  it('rejects a wrong protocol version or handshake', async () => {
    await expect(client({ protocol: PROTOCOL_VERSION + 1 })).rejects.toThrow(/protocol/);
    await expect(client({ token: 5 })).rejects.toThrow(/handshake/);
  });

  it('streams live frames from a tapped physics env, and the tap changes no result', async () => {
    const s = await client();
    const frames: unknown[] = [];
    s.on('frame:batch', (batch: { frames: unknown[] }, ack: () => void) => {
      frames.push(...batch.frames);
      ack();
    });
    await ask(s, 'live:subscribe', z.array(z.string()), {});
    const run = async (tap: boolean) => {
      const env = await createTabletopEnv({ scene: SCENE, taskId: 'tabletop/push', numEnvs: 2 });
      const policy = randomPolicy(env.spec, 3);
      const eps = await collectEpisodes(tap ? tapFrames(env, server.hub, 'push test') : env, policy, {
        seeds: [1, 2, 3],
      });
      env.close();
      return eps;
    };
    const plain = await run(false);
    const tapped = await run(true);
    expect(tapped).toEqual(plain);
    // frames are throttled to MAX_FPS per stream (first and last of each episode always), so how many
    // arrive depends on the machine's speed: a few is what the tap promises
    await expect.poll(() => frames.length, { timeout: 10_000 }).toBeGreaterThan(4);
    for (const f of frames) expect(FrameSchema.safeParse(f).success).toBe(true);
    expect(FrameSchema.parse(frames[0]).stream).toBe('push test');
  });
});

describe('binding beyond loopback', () => {
  it('refuses a non-loopback bind without a token, and requires the token once bound', async () => {
    const base = {
      runRoot: root,
      scene: SCENE,
      port: 0,
      replay: { scene: SCENE, contract: sceneContract(SCENE) },
      mounts: [],
    };
    await expect(startServer({ ...base, host: '0.0.0.0' })).rejects.toThrow(/token/);
    const open = await startServer({ ...base, host: '0.0.0.0', token: 'sesame-123' });
    try {
      const url = `http://127.0.0.1:${open.port}`;
      await expect(client({ protocol: PROTOCOL_VERSION }, url)).rejects.toThrow(/token/);
      await expect(client({ protocol: PROTOCOL_VERSION, token: 'wrong-1234' }, url)).rejects.toThrow(/token/);
      const ok = await client({ protocol: PROTOCOL_VERSION, token: 'sesame-123' }, url);
      expect(ok.connected).toBe(true);
    } finally {
      await open.close();
    }
  });
});
