// The viewer server: HTTP for the built viewer and its assets, socket.io for runs, replays and live
// frames. Loopback by default; any other bind needs a token. Every request is validated; a bad one gets
// an error reply and the server goes on. Node-only.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Socket } from 'socket.io';
import type { z } from 'zod';
import {
  type ClientToServerEvents,
  EpisodeRequestSchema,
  HandshakeSchema,
  type LiveKind,
  PROTOCOL_VERSION,
  type Reply,
  MetricsRequestSchema,
  RunRequestSchema,
  type ServerToClientEvents,
  SubscribeSchema,
} from '../protocol/index.ts';
import type { Scene } from '../scene/index.ts';
import { LiveHub } from './live.ts';
import { listRuns, PathRefused, readMetricsAfter, resolveRun } from './run-folder.ts';
import { episodeSummaries, replayEpisode, type ReplaySources } from './replay.ts';
import { RunInfoReader } from './run-info.ts';
import { type Mount, serveStatic } from './static.ts';

export interface ServerOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** Required for a non-loopback host; generated when `host` is not loopback and none is given. */
  token?: string;
  /** Folder of run folders (or one run) that may be listed and read. */
  runRoot: string;
  scene: Scene;
  replay: ReplaySources;
  mounts: Mount[];
  /** Frames of running training or rollouts; a new hub when omitted. */
  hub?: LiveHub;
  /** Id (below runRoot) of the run being written live. */
  liveRun?: string;
  /** What writes the live run (default training when liveRun is given). */
  liveKind?: LiveKind;
}

export interface ViewerServer {
  url: string;
  host: string;
  port: number;
  token?: string;
  hub: LiveHub;
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Refuses a bind beyond loopback without a token (the CLI generates one; see startServer). */
export function checkBind(host: string, token: string | undefined): void {
  if (!isLoopback(host) && !token)
    throw new Error(`refusing to serve on ${host} without a token: a non-loopback bind needs one`);
}

export function newToken(): string {
  return randomBytes(18).toString('base64url');
}

const sameToken = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

type IoSocket = Socket<ClientToServerEvents, ServerToClientEvents>;

export async function startServer(o: ServerOptions): Promise<ViewerServer> {
  const host = o.host ?? '127.0.0.1';
  checkBind(host, o.token);
  const hub = o.hub ?? new LiveHub();
  const http = createServer((req, res) => serveStatic(o.mounts, req, res));
  const io = new Server<ClientToServerEvents, ServerToClientEvents>(http, {
    serveClient: false,
    maxHttpBufferSize: 64 * 1024,
    cors: { origin: false },
  });
  io.use((socket, next) => {
    const hello = HandshakeSchema.safeParse(socket.handshake.auth);
    if (!hello.success) return next(new Error('handshake: auth must be { protocol, token? }'));
    if (hello.data.protocol !== PROTOCOL_VERSION)
      return next(
        new Error(`handshake: protocol ${hello.data.protocol} is not supported (server speaks ${PROTOCOL_VERSION})`),
      );
    if (o.token && !(hello.data.token && sameToken(hello.data.token, o.token)))
      return next(new Error('handshake: a valid token is required'));
    next();
  });
  const infos = new RunInfoReader();
  io.on('connection', (socket) => onConnection(socket, o, hub, infos));
  await new Promise<void>((ok, fail) => {
    http.once('error', fail);
    http.listen(o.port ?? 0, host, () => ok());
  });
  const port = (http.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}/${o.token ? `?token=${o.token}` : ''}`;
  return {
    url,
    host,
    port,
    token: o.token,
    hub,
    close: async () => {
      await io.close();
      http.closeAllConnections();
    },
  };
}

function onConnection(socket: IoSocket, o: ServerOptions, hub: LiveHub, infos: RunInfoReader): void {
  const liveKind = o.liveRun !== undefined ? (o.liveKind ?? 'training') : undefined;
  socket.emit('server:hello', {
    protocol: PROTOCOL_VERSION,
    scene: o.scene,
    live: hub.streams.length > 0 || o.liveRun !== undefined,
    liveRun: o.liveRun,
    liveKind,
    worldModel: o.replay.openModel !== undefined,
  });
  const client = {
    send: (batch: Parameters<ServerToClientEvents['frame:batch']>[0], done: () => void) => {
      socket.timeout(10_000).emit('frame:batch', batch, () => done());
    },
  };
  const stopWatching = hub.watchStreams((streams) => socket.emit('stream:list', streams));
  socket.on('disconnect', () => {
    hub.unsubscribe(client);
    stopWatching();
  });
  socket.on('live:unsubscribe', () => hub.unsubscribe(client));
  const run = (id: string) => resolveRun(o.runRoot, id);
  handle(socket, 'run:list', null, () => listRuns(o.runRoot, o.liveRun));
  handle(socket, 'episode:list', RunRequestSchema, (r) => episodeSummaries(run(r.run), o.replay.contract));
  handle(socket, 'episode:replay', EpisodeRequestSchema, (r) => replayEpisode(o.replay, r.run, run(r.run), r.index));
  handle(socket, 'run:info', RunRequestSchema, (r) =>
    infos.read(r.run, run(r.run), r.run === o.liveRun ? liveKind : undefined),
  );
  let metricsInFlight = false; // a client that asks faster than it is answered gets refusals, not a queue
  handle(socket, 'metrics:get', MetricsRequestSchema, async (r) => {
    if (metricsInFlight) throw new Error('the previous request is still being answered');
    metricsInFlight = true;
    try {
      return await readMetricsAfter(run(r.run), r.after);
    } finally {
      metricsInFlight = false;
    }
  });
  handle(socket, 'live:subscribe', SubscribeSchema, (r) => {
    hub.subscribe(client, r.stream);
    return hub.streams;
  });
}

/** A request: validates the payload (when it has one), answers through the ack with a Reply. Calls with
 *  no ack function are ignored; errors become { ok: false, error } and never reach socket.io. */
function handle<S extends z.ZodType, T>(
  socket: IoSocket,
  event: string,
  schema: S | null,
  fn: (req: z.infer<S>) => T | Promise<T>,
): void {
  (socket as unknown as { on(e: string, f: (...args: unknown[]) => void): void }).on(event, (...args: unknown[]) => {
    const ack = args.at(-1);
    if (typeof ack !== 'function') return;
    const reply = (r: Reply<T>) => (ack as (r: Reply<T>) => void)(r);
    let req: z.infer<S> = undefined as z.infer<S>;
    if (schema) {
      const parsed = schema.safeParse(args[0]);
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'payload'}: ${i.message}`);
        return reply({ ok: false, error: `${event}: ${issues.join('; ')}` });
      }
      req = parsed.data;
    }
    Promise.resolve()
      .then(() => fn(req))
      .then(
        (data) => reply({ ok: true, data }),
        (err: unknown) =>
          reply({ ok: false, error: err instanceof PathRefused ? message(err) : `${event}: ${message(err)}` }),
      );
  });
}
