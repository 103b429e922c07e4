// The payloads the server and the viewer exchange, as zod schemas. Both sides parse what they receive.
import { z } from 'zod';

/** Bumped on any incompatible change; the client sends it in the handshake. */
export const PROTOCOL_VERSION = 2;

const finite = z.number().finite();
const vec3 = z.tuple([finite, finite, finite]);
const quat = z.tuple([finite, finite, finite, finite]);
/** Run ids are paths relative to the server's run root ("." is the root itself): no empty, "." or ".."
 *  segments, no backslashes. */
export function isRunId(s: string): boolean {
  return s === '.' || (!s.includes('\\') && s.split('/').every((p) => p !== '' && p !== '.' && p !== '..'));
}
const runId = z.string().min(1).max(400).refine(isRunId, 'run id must be a relative path inside the run folder');

export const HandshakeSchema = z.object({ protocol: z.number().int(), token: z.string().max(200).optional() });

/** Scene camera names, as many as a policy reads. */
const cameraList = z.array(z.string().min(1).max(100)).min(1).max(2);

export const BodyPoseSchema = z.object({ name: z.string().min(1).max(100), pos: vec3, quat });

export const SourceSchema = z.enum(['physics', 'world-model']);

/** One step of one stream: poses of the moving bodies (never pixels) and what the env reported. */
export const FrameSchema = z.object({
  stream: z.string().min(1).max(200),
  task: z.string(),
  source: SourceSchema,
  step: z.number().int().min(0),
  instruction: z.string(),
  bodies: z.array(BodyPoseSchema),
  reward: finite,
  progress: finite,
  success: z.boolean(),
  done: z.boolean(),
  terms: z.record(z.string(), finite),
  /** An object left the table: the episode ended as a failure. */
  offTable: z.boolean().optional(),
  /** The scene cameras the stream's policy reads (absent: the scene's first fixed camera). */
  cameras: cameraList.optional(),
});
export type Frame = z.infer<typeof FrameSchema>;

/** A batch of live frames; `dropped` counts frames skipped for this client since the last batch. */
export const FrameBatchSchema = z.object({ frames: z.array(FrameSchema), dropped: z.number().int().min(0) });
export type FrameBatch = z.infer<typeof FrameBatchSchema>;

export const RunSummarySchema = z.object({
  id: runId,
  /** episodes: a rollout folder (index.json); train: a training run (metrics.jsonl). A folder can be both. */
  episodes: z.number().int().min(0),
  metrics: z.boolean(),
  live: z.boolean(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

export const EpisodeSummarySchema = z.object({
  index: z.number().int().min(0),
  task: z.string(),
  seed: z.number().int(),
  policy: z.string(),
  instruction: z.string(),
  length: z.number().int().min(0),
  success: z.boolean(),
  return: finite,
  /** A training run's recorded episode: the updates done when its policy acted. */
  iteration: z.number().int().min(0).optional(),
  /** A world-model episode branched from step `start` of physics episode `twin` of the same run. */
  source: SourceSchema.optional(),
  twin: z.number().int().min(0).optional(),
  start: z.number().int().min(0).optional(),
});
export type EpisodeSummary = z.infer<typeof EpisodeSummarySchema>;

/** A recorded episode replayed: physics frames, and the world model stepped on the same actions from the
 *  same start (open loop), with the per-step divergence between the two (metres). A recorded world-model
 *  episode replays beside its physics twin from the same branch point instead (each acting on its own). */
export const ReplaySchema = z.object({
  run: runId,
  episode: EpisodeSummarySchema,
  physics: z.array(FrameSchema),
  worldModel: z.array(FrameSchema).optional(),
  divergence: z.object({ tcp_m: z.array(finite), objects_m: z.array(finite) }).optional(),
  /** The scene cameras the run's policy reads, where the run folder says (its policy.json); absent: the
   *  scene's first fixed camera. */
  cameras: cameraList.optional(),
});
export type Replay = z.infer<typeof ReplaySchema>;

export const MetricsRowSchema = z.record(z.string(), z.union([finite, z.string(), z.boolean(), z.null()]));
export type MetricsRow = z.infer<typeof MetricsRowSchema>;

export const RunRequestSchema = z.object({ run: runId });

/** Where a client's copy of a run's metrics.jsonl ends: the file (its identity) and the byte offset. */
export const MetricsCursorSchema = z.object({ file: z.string().max(100), offset: z.number().int().min(0) });
export type MetricsCursor = z.infer<typeof MetricsCursorSchema>;

/** A run's metrics lines after `after` (from the start without it). */
export const MetricsRequestSchema = RunRequestSchema.extend({ after: MetricsCursorSchema.optional() });

/** The complete lines after the request's cursor (at most a few MiB: `more` says to ask again at
 *  `next`); `restart`: the rows start at the file's first line (no cursor, or the file was rewritten, as a
 *  resume does), so the client drops what it had. */
export const MetricsChunkSchema = z.object({
  rows: z.array(MetricsRowSchema),
  next: MetricsCursorSchema,
  restart: z.boolean(),
  more: z.boolean(),
});
export type MetricsChunk = z.infer<typeof MetricsChunkSchema>;
export const EpisodeRequestSchema = z.object({ run: runId, index: z.number().int().min(0) });
export const SubscribeSchema = z.object({ stream: z.string().max(200).optional() });

/** What writes the live run: `wmrl train` / `wmrl start` (training) or `wmrl rollout` (rollout). */
export const LiveKindSchema = z.enum(['training', 'rollout']);
export type LiveKind = z.infer<typeof LiveKindSchema>;

/** The server's greeting: what it serves. */
export const HelloSchema = z.object({
  protocol: z.literal(PROTOCOL_VERSION),
  scene: z.unknown(),
  live: z.boolean(),
  /** The run being written live (its metrics.jsonl may not exist yet). */
  liveRun: runId.optional(),
  liveKind: LiveKindSchema.optional(),
  worldModel: z.boolean(),
});
export type Hello = z.infer<typeof HelloSchema>;

/** running: a lock whose owner is alive (or on another host, where it cannot be checked); finished: the
 *  last metrics line reached config.iterations (or a rollout folder without a live lock); interrupted:
 *  neither; unknown: a training folder without config.json (its length is not known). */
export const RunStateSchema = z.enum(['running', 'finished', 'interrupted', 'unknown']);
export type RunState = z.infer<typeof RunStateSchema>;

const seconds = finite.min(0);
const count = z.number().int().min(0);

/** A held-out evaluation: success rate with its Wilson 95% interval, after `iteration` (0: before training). */
export const HeldOutSchema = z.object({
  iteration: count,
  success: finite,
  ciLow: finite,
  ciHigh: finite,
  episodes: count,
});
export type HeldOut = z.infer<typeof HeldOutSchema>;

/** The header of a training run (config.json, metrics.jsonl, the lock). Times are sums over the metrics
 *  lines: `clockS` the training clock (physics, world model, updates, refresh), `offClockS` held-out
 *  evaluation and fidelity measurement; `leftS` (while running) extrapolates both per iteration. */
export const TrainingInfoSchema = z.object({
  kind: z.literal('training'),
  run: runId,
  state: RunStateSchema,
  /** Why the state is what it is (the lock's owner, a missing config.json), for people. */
  note: z.string(),
  mode: z.string().nullable(),
  tasks: z.array(z.string()),
  iteration: count,
  iterations: z.number().int().positive().nullable(),
  /** A run trained for a time budget (`wmrl start`: setup.json's trainBudgetS) rather than to `iterations`. */
  budgetS: seconds.nullable(),
  clockS: seconds,
  offClockS: seconds,
  leftS: seconds.nullable(),
  heldOut: HeldOutSchema.nullable(),
  initial: HeldOutSchema.nullable(),
  /** policy.onnx is written (at the end of a run, also of a stopped one). */
  policy: z.boolean(),
});

/** The header of a rollout folder (index.json, run.json, the lock). */
export const RolloutInfoSchema = z.object({
  kind: z.literal('rollout'),
  run: runId,
  state: RunStateSchema,
  note: z.string(),
  /** The command that made it (run.json), when recorded. */
  command: z.string().nullable(),
  tasks: z.array(z.string()),
  episodes: count,
  successes: count,
});

export const RunInfoSchema = z.discriminatedUnion('kind', [TrainingInfoSchema, RolloutInfoSchema]);
export type RunInfo = z.infer<typeof RunInfoSchema>;
export type TrainingInfo = z.infer<typeof TrainingInfoSchema>;
export type RolloutInfo = z.infer<typeof RolloutInfoSchema>;

export const ErrorReplySchema = z.object({ ok: z.literal(false), error: z.string() });
export function okReply<T extends z.ZodType>(data: T) {
  return z.union([z.object({ ok: z.literal(true), data }), ErrorReplySchema]);
}
export type Reply<T> = { ok: true; data: T } | { ok: false; error: string };
