// socket.io event maps (noun:verb). Requests carry an ack callback that receives a Reply.
import type { z } from 'zod';
import type { EpisodeSummary, FrameBatch, Hello, MetricsChunk, Replay, Reply, RunInfo, RunSummary } from './schemas.ts';
import type { EpisodeRequestSchema, MetricsRequestSchema, RunRequestSchema, SubscribeSchema } from './schemas.ts';

type Ack<T> = (reply: Reply<T>) => void;

export interface ServerToClientEvents {
  'server:hello': (hello: Hello) => void;
  /** Live frames; the client acknowledges each batch, and the next one waits for that. */
  'frame:batch': (batch: FrameBatch, ack: () => void) => void;
  'stream:list': (streams: string[]) => void;
}

export interface ClientToServerEvents {
  'run:list': (ack: Ack<RunSummary[]>) => void;
  'episode:list': (req: z.input<typeof RunRequestSchema>, ack: Ack<EpisodeSummary[]>) => void;
  'episode:replay': (req: z.input<typeof EpisodeRequestSchema>, ack: Ack<Replay>) => void;
  /** One request in flight per client: another one before its answer is refused. */
  'metrics:get': (req: z.input<typeof MetricsRequestSchema>, ack: Ack<MetricsChunk>) => void;
  /** A run's header: a training run's progress, clock and state, or what a rollout folder holds. */
  'run:info': (req: z.input<typeof RunRequestSchema>, ack: Ack<RunInfo>) => void;
  'live:subscribe': (req: z.input<typeof SubscribeSchema>, ack: Ack<string[]>) => void;
  'live:unsubscribe': () => void;
}
