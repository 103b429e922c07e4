// A run folder's header for the viewer: a training run's mode, tasks, iteration i/N, clock, state and last
// held-out evaluation (config.json, metrics.jsonl, the folder lock), or what a rollout folder holds
// (index.json, run.json). metrics.jsonl is read incrementally, so a poll of a long run reads only the lines
// it has not seen. Node-only.
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { TRAIN_CLOCK_KEYS, type TrainMetricKey } from '../core/metrics.ts';
import type {
  HeldOut,
  LiveKind,
  MetricsCursor,
  MetricsRow,
  RolloutInfo,
  RunInfo,
  RunState,
  TrainingInfo,
} from '../protocol/index.ts';
import { RUN_INFO_FILE } from '../rollout/index.ts';
import { LockOwnerSchema, folderLockPath, pidAlive } from '../store/index.ts';
import { EPISODE_INDEX, METRICS_FILE, readMetricsAfter } from './run-folder.ts';

export const TRAIN_CONFIG_FILE = 'config.json';
/** The main job (`wmrl start`) writes its final evaluation here once training is over. */
const MAIN_JOB_REPORT = 'eval/report.json';
const OFF_CLOCK_KEYS = ['time/eval_s', 'time/fidelity_s'] as const satisfies readonly TrainMetricKey[];

/** What the header needs of config.json (the trainer's TrainConfig holds much more). */
const TrainFileSchema = z.object({
  config: z.object({ mode: z.string(), iterations: z.number().int().positive() }),
  tasks: z.array(z.string()),
});
/** The main job's setup.json: its training budget (absent in other runs' setup.json). */
const SETUP_FILE = 'setup.json';
const SetupSchema = z.object({ trainBudgetS: z.number().min(0).optional() });
const RolloutIndexSchema = z.object({ episodes: z.array(z.object({ task: z.string(), success: z.boolean() })) });
const RolloutRunSchema = z.object({ command: z.string() });

/** The sums over a metrics file's lines read so far, and where they end. */
interface Tally {
  next?: MetricsCursor;
  iteration: number;
  clockS: number;
  offClockS: number;
  heldOut: HeldOut | null;
  initial: HeldOut | null;
}
const emptyTally = (): Tally => ({ iteration: 0, clockS: 0, offClockS: 0, heldOut: null, initial: null });

const num = (row: MetricsRow, key: string): number | undefined =>
  typeof row[key] === 'number' ? (row[key] as number) : undefined;

function evalOf(row: MetricsRow, prefix: 'eval' | 'eval_initial', iteration: number): HeldOut | null {
  const success = num(row, `${prefix}/success`);
  if (success === undefined) return null;
  return {
    iteration,
    success,
    ciLow: num(row, `${prefix}/ci_low`) ?? success,
    ciHigh: num(row, `${prefix}/ci_high`) ?? success,
    episodes: Math.max(0, Math.round(num(row, `${prefix}/episodes`) ?? 0)),
  };
}

function add(t: Tally, row: MetricsRow): void {
  const it = num(row, 'iteration');
  t.iteration = it !== undefined && Number.isInteger(it) && it >= 0 ? it : t.iteration + 1;
  for (const k of TRAIN_CLOCK_KEYS) t.clockS += Math.max(0, num(row, k) ?? 0);
  for (const k of OFF_CLOCK_KEYS) t.offClockS += Math.max(0, num(row, k) ?? 0);
  t.heldOut = evalOf(row, 'eval', t.iteration) ?? t.heldOut;
  t.initial ??= evalOf(row, 'eval_initial', 0);
}

/** Whether a command holds the folder's lock now, and who. A lock whose owner is gone (same host) is stale. */
export function lockHolder(dir: string): { held: boolean; note: string } {
  const path = folderLockPath(dir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { held: false, note: '' };
  }
  let owner: z.infer<typeof LockOwnerSchema>;
  try {
    owner = LockOwnerSchema.parse(JSON.parse(text));
  } catch {
    return { held: true, note: 'a lock file whose owner cannot be read' };
  }
  if (owner.host !== hostname())
    return { held: true, note: `locked by pid ${owner.pid} on ${owner.host} (not checked from here)` };
  if (!pidAlive(owner.pid)) return { held: false, note: `stale lock: pid ${owner.pid} has ended` };
  return { held: true, note: `written by pid ${owner.pid} since ${owner.started}` };
}

function readJson<T extends z.ZodType>(path: string, schema: T, what: string): z.infer<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`${what}: ${issue.path.join('.') || 'file'}: ${issue.message}`);
  }
  return parsed.data;
}

/** Reads run headers; keeps each metrics file's tally so that the next read starts where this one ended. */
export class RunInfoReader {
  private readonly tallies = new Map<string, Promise<Tally>>();

  /** The header of run `run` (folder `dir`); `kind` says what the folder will be when it holds nothing yet
   *  (the live run of a command that has just started). */
  async read(run: string, dir: string, kind?: LiveKind): Promise<RunInfo> {
    const training = existsSync(join(dir, TRAIN_CONFIG_FILE)) || existsSync(join(dir, METRICS_FILE));
    if (training || (!existsSync(join(dir, EPISODE_INDEX)) && kind === 'training')) return this.training(run, dir);
    if (existsSync(join(dir, EPISODE_INDEX)) || kind === 'rollout') return rolloutInfo(run, dir);
    throw new Error(`run "${run}": neither a training run (config.json, metrics.jsonl) nor a rollout (index.json)`);
  }

  private async training(run: string, dir: string): Promise<TrainingInfo> {
    const configPath = join(dir, TRAIN_CONFIG_FILE);
    const file = existsSync(configPath) ? readJson(configPath, TrainFileSchema, `run "${run}": config.json`) : null;
    const t = await this.tally(dir);
    const lock = lockHolder(dir);
    const setup = existsSync(join(dir, SETUP_FILE)) ? SetupSchema.safeParse(safeJson(join(dir, SETUP_FILE))) : null;
    const budgetS = setup?.success ? (setup.data.trainBudgetS ?? null) : null;
    const N = budgetS === null ? (file?.config.iterations ?? null) : null;
    let state: RunState;
    let note = lock.note;
    if (lock.held) state = 'running';
    else if (N !== null && t.iteration >= N) state = 'finished';
    else if (existsSync(join(dir, MAIN_JOB_REPORT))) {
      state = 'finished';
      note = "the main job's final evaluation is written (its budget, not the iteration bound, ended training)";
    } else if (N === null && budgetS === null) {
      state = 'unknown';
      note = 'no config.json: the run length is not known';
    } else state = 'interrupted';
    const perIteration = t.iteration > 0 ? (t.clockS + t.offClockS) / t.iteration : null;
    return {
      kind: 'training',
      run,
      state,
      note,
      mode: file?.config.mode ?? null,
      tasks: file?.tasks ?? [],
      iteration: t.iteration,
      iterations: N,
      clockS: t.clockS,
      offClockS: t.offClockS,
      budgetS,
      leftS:
        state !== 'running'
          ? null
          : budgetS !== null
            ? Math.max(0, budgetS - t.clockS - t.offClockS)
            : N !== null && perIteration !== null
              ? perIteration * Math.max(0, N - t.iteration)
              : null,
      heldOut: t.heldOut,
      initial: t.initial,
      policy: existsSync(join(dir, 'policy.onnx')),
    };
  }

  /** The tally of dir's metrics.jsonl after the lines appended since the last read (one read at a time
   *  per folder, so that no line is counted twice). */
  private tally(dir: string): Promise<Tally> {
    const next = (this.tallies.get(dir) ?? Promise.resolve(emptyTally())).then(async (seen) => {
      let t = { ...seen };
      for (let more = true; more; ) {
        const chunk = await readMetricsAfter(dir, t.next);
        if (chunk.restart) t = emptyTally();
        for (const row of chunk.rows) add(t, row);
        t.next = chunk.next;
        more = chunk.more;
      }
      return t;
    });
    this.tallies.set(
      dir,
      next.catch(() => emptyTally()),
    );
    return next;
  }
}

function rolloutInfo(run: string, dir: string): RolloutInfo {
  const indexPath = join(dir, EPISODE_INDEX);
  const index = existsSync(indexPath)
    ? readJson(indexPath, RolloutIndexSchema, `run "${run}": index.json`)
    : { episodes: [] };
  const runPath = join(dir, RUN_INFO_FILE);
  const made = existsSync(runPath) ? RolloutRunSchema.safeParse(safeJson(runPath)) : null;
  const lock = lockHolder(dir);
  return {
    kind: 'rollout',
    run,
    state: lock.held ? 'running' : existsSync(indexPath) ? 'finished' : 'interrupted',
    note: lock.note,
    command: made?.success ? made.data.command : null,
    tasks: [...new Set(index.episodes.map((e) => e.task))].sort(),
    episodes: index.episodes.length,
    successes: index.episodes.filter((e) => e.success).length,
  };
}

function safeJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}
