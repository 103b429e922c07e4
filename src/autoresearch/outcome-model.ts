// The outcome world model: predicts a proposal's status and leaderboard position from its program and
// the task's meta-features, without running it. Parsing and checking are exact (the DSL is known); what
// is learned is whether a runnable program errs, runs out of its limits or scores, and its position.
// Three random-forest regressions (ml-random-forest) on executed runs; their trees, index by index, are
// the ensemble members, whose spread gives rewardVar. Refitting is from scratch and seeded, so a model
// is a function of the runs it has seen (exact resume replays them).
import { RandomForestRegression } from 'ml-random-forest';
import {
  FAMILIES,
  OPTIONS,
  PARAM_VALUES,
  checkProgram,
  parseTokens,
  programText,
  type OptionKey,
  type ParamKey,
  type Program,
} from './dsl.ts';
import type { OutcomeSource, ResearchState } from './env.ts';
import { type Outcome, type Status, ladder, wasExecuted } from './proposal.ts';
import { type TaskData, metaFeatures } from './tasks.ts';

/** One executed run: what the model learns from. */
export interface ExecutedRun {
  task: TaskData;
  program: Program;
  status: Status;
  position?: number;
}

export const TREES = 16;

/** One training row: the features of a run, its status and (valid runs) its position. */
export interface FitRow {
  x: number[];
  status: Status;
  position: number;
}

/** Program and task as a fixed-length feature row. */
export function runFeatures(task: TaskData, p: Program): number[] {
  const row: number[] = FAMILIES.map((f) => (p.model === f ? 1 : 0));
  for (const key of Object.keys(OPTIONS) as OptionKey[]) for (const v of OPTIONS[key]) row.push(p[key] === v ? 1 : 0);
  for (const key of Object.keys(PARAM_VALUES) as ParamKey[])
    row.push(p.params[key] === undefined ? -1 : Math.log10(p.params[key]!));
  return [...row, ...metaFeatures(task)].map(Math.fround); // float32, as a checkpoint keeps them
}

const fitForest = (x: number[][], y: number[], seed: number) => {
  const rf = new RandomForestRegression({
    nEstimators: TREES,
    seed,
    maxFeatures: 0.8,
    replacement: true,
    useSampleBagging: true,
    noOOB: true,
    treeOptions: { maxDepth: 8, minNumSamples: 2 },
  });
  rf.train(x, y);
  return rf;
};

/** One learned target: its forest, or (too few rows, or a constant target) just its mean. */
interface Head {
  forest: RandomForestRegression | null;
  mean: number;
}

function fitHead(x: number[][], y: number[], seed: number, empty: number): Head {
  const mean = y.length ? y.reduce((a, b) => a + b, 0) / y.length : empty;
  return { forest: y.length > 1 && y.some((v) => v !== y[0]) ? fitForest(x, y, seed) : null, mean };
}

/** Per-tree predictions [rows][TREES]. */
function perTree(h: Head, x: number[][]): number[][] {
  if (!h.forest || x.length === 0) return x.map(() => new Array(TREES).fill(h.mean));
  const m = (
    h.forest as unknown as { predictionValues(x: number[][]): { getRow(i: number): number[] } }
  ).predictionValues(x); // untyped in the package
  return x.map((_, i) => m.getRow(i));
}

export class OutcomeModel {
  /** Every run kept, as the rows it is fit on. */
  private rows: FitRow[] = [];
  /** P(valid), P(no result) and the validation position of valid runs. */
  private heads: { valid: Head; noResult: Head; position: Head } = {
    valid: { forest: null, mean: 1 },
    noResult: { forest: null, mean: 0 },
    position: { forest: null, mean: 0.5 },
  };
  /** The rows of the current fit (a checkpoint keeps them; fitRows(fitted) rebuilds this exact model). */
  fitted: FitRow[] = [];

  constructor(private readonly seed = 0) {}

  get size(): number {
    return this.rows.length;
  }

  /** Adds runs (malformed and invalid ones teach nothing: they are known exactly). */
  add(runs: readonly ExecutedRun[]): void {
    for (const r of runs)
      if (wasExecuted(r.status))
        this.rows.push({ x: runFeatures(r.task, r.program), status: r.status, position: Math.fround(r.position ?? 0) });
  }

  /** Rows from index `start` on (a replay's export), or put back after the first `start` (its import). */
  rowsFrom(start: number): FitRow[] {
    return this.rows.slice(start);
  }
  replaceFrom(start: number, rows: readonly FitRow[]): void {
    this.rows.splice(start, this.rows.length - start, ...rows);
  }

  /** Refits on every run kept. */
  fit(): void {
    this.fitRows(this.rows);
  }

  fitRows(rows: readonly FitRow[]): void {
    const x = rows.map((r) => r.x);
    const seeded = (k: number) => (this.seed * 7919 + rows.length * 31 + k) >>> 0;
    const scored = rows.filter((r) => r.status === 'valid');
    this.heads = {
      valid: fitHead(
        x,
        rows.map((r) => (r.status === 'valid' ? 1 : 0)),
        seeded(1),
        1,
      ),
      noResult: fitHead(
        x,
        rows.map((r) => (r.status === 'no_result' ? 1 : 0)),
        seeded(2),
        0,
      ),
      position: fitHead(
        scored.map((r) => r.x),
        scored.map((r) => r.position),
        seeded(3),
        0.5,
      ),
    };
    this.fitted = rows.slice();
  }

  /** Predicted outcome of each proposal, its expected ladder reward and the members' variance of it. */
  predict(task: TaskData, tokens: readonly Int32Array[]): { outcome: Outcome; reward: number; rewardVar: number }[] {
    const parsed = tokens.map((t) => parseTokens(t));
    const runnable: { k: number; program: Program }[] = [];
    const out: ({ outcome: Outcome; reward: number; rewardVar: number } | null)[] = parsed.map((p, k) => {
      const text = programText(tokens[k]);
      if (!p.ok) return exact('malformed', `${text} -> malformed: ${p.error}`);
      const why = checkProgram(p.program, { kind: task.kind, trainRows: task.trainRows });
      if (why) return exact('invalid', `${text} -> invalid: ${why}`);
      runnable.push({ k, program: p.program });
      return null;
    });
    const x = runnable.map((r) => runFeatures(task, r.program));
    const [pv, pn, pos] = [
      perTree(this.heads.valid, x),
      perTree(this.heads.noResult, x),
      perTree(this.heads.position, x),
    ];
    runnable.forEach(({ k }, j) => {
      const members = pv[j].map((_, m) => {
        const v = clamp01(pv[j][m]),
          nr = Math.min(clamp01(pn[j][m]), 1 - v),
          p = clamp01(pos[j][m]);
        return {
          v,
          nr,
          pos: p,
          r: (1 - v - nr) * ladder('runtime_error') + nr * ladder('no_result') + v * ladder('valid', p),
        };
      });
      const mean = (f: (m: (typeof members)[number]) => number) =>
        members.reduce((s, m) => s + f(m), 0) / members.length;
      const reward = mean((m) => m.r);
      const rewardVar = mean((m) => (m.r - reward) ** 2);
      const v = mean((m) => m.v),
        nr = mean((m) => m.nr),
        position = mean((m) => m.pos);
      const status: Status = v >= nr && v >= 1 - v - nr ? 'valid' : nr >= 1 - v - nr ? 'no_result' : 'runtime_error';
      const text = programText(tokens[k]);
      const feedback =
        status === 'valid'
          ? `${text} -> valid (predicted), beats ${Math.round(100 * position)}% of the leaderboard`
          : `${text} -> ${status.replace('_', ' ')} (predicted)`;
      out[k] = {
        outcome: { status, position: status === 'valid' ? position : undefined, feedback, wallMs: 0 },
        reward,
        rewardVar,
      };
    });
    return out as { outcome: Outcome; reward: number; rewardVar: number }[];
  }
}

const clamp01 = (x: number) => Math.max(0, Math.min(1, x));
const exact = (status: Status, feedback: string) => ({
  outcome: { status, feedback, wallMs: 0 },
  reward: ladder(status),
  rewardVar: 0,
});

/** The model as the env's outcome source (a "world-model" engine on the same contract). */
export function modelSource(model: OutcomeModel): OutcomeSource {
  return {
    source: 'world-model',
    async outcomes(task: TaskData, proposals: { tokens: Int32Array; seed: number; state: ResearchState }[]) {
      return model.predict(
        task,
        proposals.map((p) => p.tokens),
      );
    },
  };
}
