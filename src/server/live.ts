// Live frames from running training or rollouts to viewers. publish() never waits: each client has at
// most one batch in flight (acknowledged by the viewer) and a short queue that drops its oldest frames,
// so a slow client sees fewer frames and training never slows down.
import type { FrameSink } from '../env/live.ts';
import type { Frame, FrameBatch } from '../protocol/index.ts';

export interface LiveClient {
  /** Sends one batch; calls done once the client acknowledged it or gave up on it. */
  send(batch: FrameBatch, done: () => void): void;
}

/** Frames queued per client while a batch is in flight; older ones are dropped. */
export const QUEUE_LIMIT = 32;
/** Frames per second and stream that are built and sent (more than a screen shows); an episode's first
 *  and last frames always are. */
export const MAX_FPS = 30;

interface Subscription {
  client: LiveClient;
  /** undefined: every stream. */
  stream?: string;
  queue: Frame[];
  dropped: number;
  inFlight: boolean;
}

export class LiveHub implements FrameSink {
  private readonly subs = new Map<LiveClient, Subscription>();
  private readonly known = new Set<string>();
  private readonly onStreams = new Set<(streams: string[]) => void>();
  /** When each stream last published (ms); decimation only, no result depends on it. */
  private readonly lastSent = new Map<string, number>();

  get streams(): string[] {
    return [...this.known];
  }

  /** Calls fn with the stream list whenever a new stream appears. */
  watchStreams(fn: (streams: string[]) => void): () => void {
    this.onStreams.add(fn);
    return () => this.onStreams.delete(fn);
  }

  subscribe(client: LiveClient, stream?: string): void {
    this.subs.set(client, { client, stream, queue: [], dropped: 0, inFlight: false });
  }

  unsubscribe(client: LiveClient): void {
    this.subs.delete(client);
  }

  wanted(stream: string, boundary = false): boolean {
    if (!this.known.has(stream)) return true; // announce new streams once
    if (![...this.subs.values()].some((s) => s.stream === undefined || s.stream === stream)) return false;
    return boundary || performance.now() - (this.lastSent.get(stream) ?? -Infinity) >= 1000 / MAX_FPS;
  }

  publish(frame: Frame): void {
    this.lastSent.set(frame.stream, performance.now());
    if (!this.known.has(frame.stream)) {
      this.known.add(frame.stream);
      for (const fn of this.onStreams) fn(this.streams);
    }
    for (const s of this.subs.values()) {
      if (s.stream !== undefined && s.stream !== frame.stream) continue;
      s.queue.push(frame);
      if (s.queue.length > QUEUE_LIMIT) {
        s.queue.shift();
        s.dropped++;
      }
      if (!s.inFlight) this.flush(s);
    }
  }

  private flush(s: Subscription): void {
    if (s.queue.length === 0 || this.subs.get(s.client) !== s) return;
    const batch: FrameBatch = { frames: s.queue, dropped: s.dropped };
    s.queue = [];
    s.dropped = 0;
    s.inFlight = true;
    s.client.send(batch, () => {
      s.inFlight = false;
      this.flush(s);
    });
  }
}
