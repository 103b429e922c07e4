// The socket.io connection: the handshake (protocol version, token from the page URL), requests that
// resolve to their reply's data (or throw its error), and live frames validated before use.
import { io, type Socket } from 'socket.io-client';
import type { z } from 'zod';
import {
  type ClientToServerEvents,
  type Frame,
  FrameBatchSchema,
  HelloSchema,
  type Hello,
  PROTOCOL_VERSION,
  type Reply,
  type ServerToClientEvents,
  okReply,
} from '../../src/protocol/index.ts';

export type ViewerSocket = Socket<ServerToClientEvents, ClientToServerEvents>;

export function connect(
  onHello: (h: Hello) => void,
  onFrames: (frames: Frame[], dropped: number) => void,
  onStreams: (s: string[]) => void,
  onStatus: (text: string) => void,
): ViewerSocket {
  const token = new URLSearchParams(location.search).get('token') ?? undefined;
  const socket: ViewerSocket = io({ auth: { protocol: PROTOCOL_VERSION, token }, transports: ['websocket'] });
  socket.on('connect', () => onStatus('connected'));
  socket.on('disconnect', () => onStatus('disconnected'));
  socket.on('connect_error', (err) => onStatus(`cannot connect: ${err.message}`));
  socket.on('server:hello', (raw) => {
    const hello = HelloSchema.safeParse(raw);
    if (hello.success) onHello(hello.data);
    else onStatus('server sent an invalid hello');
  });
  socket.on('frame:batch', (raw, ack) => {
    const batch = FrameBatchSchema.safeParse(raw);
    if (batch.success) onFrames(batch.data.frames, batch.data.dropped);
    ack();
  });
  socket.on('stream:list', (s) => onStreams(Array.isArray(s) ? s.filter((x) => typeof x === 'string') : []));
  return socket;
}

/** One request; the reply is validated against `data`. */
export function request<T extends z.ZodType>(
  socket: ViewerSocket,
  event: keyof ClientToServerEvents,
  data: T,
  payload?: unknown,
): Promise<z.infer<T>> {
  const schema = okReply(data);
  return new Promise((resolve, reject) => {
    const ack = (raw: unknown) => {
      const reply = schema.safeParse(raw);
      if (!reply.success) return reject(new Error(`${event}: invalid reply`));
      const r = reply.data as Reply<z.infer<T>>;
      if (r.ok) resolve(r.data);
      else reject(new Error(r.error));
    };
    const s = socket.timeout(30_000) as unknown as { emit(e: string, ...a: unknown[]): void };
    const done = (err: Error | null, raw?: unknown) => (err ? reject(new Error(`${event}: no reply`)) : ack(raw));
    if (payload === undefined) s.emit(event, done);
    else s.emit(event, payload, done);
  });
}
