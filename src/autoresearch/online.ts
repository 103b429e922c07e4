// AutoResearch as the trainer sees a task with a learned engine: episode states as flat rows (for the
// anchors' records, branching and the refresh), and the outcome model refreshed from anchor executions.
// The reference runs of the tasks it is given are the model's first data (training gives it only
// training tasks: researchTrainSetup refuses held-out ones).
import { PROGRAM_SLOTS, parseTokens } from './dsl.ts';
import { ROW_SIZE } from './row.ts';
import { referenceRuns } from './leaderboard.ts';
import { type ExecutedRun, type FitRow, OutcomeModel } from './outcome-model.ts';
import { STATUSES } from './proposal.ts';
import type { TaskData } from './tasks.ts';

/** The trainer's Branching for a research task: Φ of a row = its best ladder value. */
export function researchBranching() {
  return { progress: (_seed: number, row: ArrayLike<number>) => row[1] };
}

/** The executed runs of an anchor episode: turn t's program and the outcome its next row records. */
export function episodeRuns(
  task: TaskData,
  e: { length: number; states: ArrayLike<number>; actions: ArrayLike<number> },
): ExecutedRun[] {
  const runs: ExecutedRun[] = [];
  for (let t = 0; t < e.length; t++) {
    const tokens = Int32Array.from({ length: PROGRAM_SLOTS }, (_, k) => e.actions[t * PROGRAM_SLOTS + k]);
    const row = Array.from({ length: ROW_SIZE }, (_, k) => e.states[(t + 1) * ROW_SIZE + k]);
    const parsed = parseTokens(tokens);
    if (!parsed.ok || row[3] < 0) continue;
    const status = STATUSES[row[3]];
    runs.push({ task, program: parsed.program, status, position: status === 'valid' ? row[4] : undefined });
  }
  return runs;
}

/** The outcome model refreshed online: anchor episodes in, a seeded refit on refresh. Its state is the
 *  rows of the current fit (the forests are a function of their rows and seed: no weights to keep). */
export class OnlineOutcomeModel {
  readonly model: OutcomeModel;
  private readonly base: number;
  private capacity = Number.POSITIVE_INFINITY;

  constructor(
    private readonly tasks: readonly TaskData[],
    seed = 0,
  ) {
    this.model = new OutcomeModel(seed);
    this.model.add(
      tasks.flatMap((task) =>
        referenceRuns(task.spec.id).map((r) => ({
          task,
          program: r.program,
          status: 'valid' as const,
          position: r.position,
        })),
      ),
    );
    this.base = this.model.size;
    this.model.fit();
  }

  /** Keeps at most `capacity` executed runs beyond the reference ones (oldest out first). */
  bound(capacity: number): void {
    this.capacity = capacity;
    this.trim();
  }

  addEpisodes(
    episodes: readonly { taskId: string; length: number; states: ArrayLike<number>; actions: ArrayLike<number> }[],
  ): number {
    const before = this.model.size;
    for (const e of episodes) {
      const task = this.tasks.find((t) => `autoresearch/${t.spec.id}` === e.taskId);
      if (!task) throw new RangeError(`outcome model: no research task ${e.taskId}`);
      this.model.add(episodeRuns(task, e));
    }
    const added = this.model.size - before;
    this.trim();
    return added;
  }

  private trim(): void {
    const excess = this.model.size - this.base - this.capacity;
    if (excess > 0) this.model.replaceFrom(this.base, this.model.rowsFrom(this.base + excess));
  }

  async refresh(): Promise<{ steps: number; bestValMse: number | null; transitions: number }> {
    this.model.fit();
    return { steps: 0, bestValMse: null, transitions: this.model.size - this.base };
  }

  /** The current fit as plain arrays (x: rows x width features; y: status index and position per row). */
  exportFit(): PackedRows {
    return packRows(this.model.fitted);
  }

  restoreFit(f: PackedRows): void {
    this.model.fitRows(unpackRows(f));
  }

  /** The executed runs kept (the replay), as exportFit packs rows. */
  exportReplay(): PackedRows {
    return packRows(this.model.rowsFrom(this.base));
  }

  importReplay(f: PackedRows): void {
    this.model.replaceFrom(this.base, unpackRows(f));
  }
}

export interface PackedRows {
  rows: number;
  width: number;
  x: Float32Array;
  y: Float32Array;
}

const packRows = (rows: readonly FitRow[]): PackedRows => ({
  rows: rows.length,
  width: rows[0]?.x.length ?? 0,
  x: Float32Array.from(rows.flatMap((r) => r.x)),
  y: Float32Array.from(rows.flatMap((r) => [STATUSES.indexOf(r.status), r.position])),
});

const unpackRows = (f: PackedRows): FitRow[] =>
  Array.from({ length: f.rows }, (_, k) => ({
    x: Array.from({ length: f.width }, (_, j) => f.x[k * f.width + j]),
    status: STATUSES[f.y[2 * k]],
    position: f.y[2 * k + 1],
  }));
