// The trusted runner: interprets a Program on a task. Preprocessing is fitted on the training rows
// only, in this order: feature subset by column type (all | numeric), imputation, encoding, top-k
// selection of encoded columns by association with the target, scaling. Then the family is fitted
// and validation and test are scored with the task's metric.
import { checkProgram, type Program, ProgramSchema } from './dsl.ts';
import { fitPredict, resolveParams } from './learners.ts';
import { type Column, type Metric, type TaskData, association, isMissing } from './tasks.ts';

export interface RunResult {
  validation: number;
  test: number;
  /** Wall time of fitting and predicting (reported, never used to decide anything). */
  trainMs: number;
}

/** Encoded matrices of the three splits (row-major) and the name of each encoded column. */
export interface Prepared {
  names: string[];
  train: { x: number[][]; y: number[] };
  validation: { x: number[][]; y: number[] };
  test: { x: number[][]; y: number[] };
}

/** Runs `program` on `task`; throws on a program that does not parse or does not fit the task. */
export async function runProgram(task: TaskData, program: Program, seed: number): Promise<RunResult> {
  const parsed = ProgramSchema.safeParse(program);
  if (!parsed.success)
    throw new RangeError(
      `invalid program: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const why = checkProgram(parsed.data, task);
  if (why) throw new RangeError(`invalid program for ${task.spec.id}: ${why}`);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
  const p = parsed.data;
  const t0 = performance.now();
  const d = preprocess(task, p);
  const [val, test] = await fitPredict(p.model, resolveParams(p), {
    kind: task.kind,
    classes: task.classes.length,
    seed,
    x: d.train.x,
    y: d.train.y,
    evals: [d.validation.x, d.test.x],
  });
  const trainMs = performance.now() - t0;
  const m = task.spec.metric;
  return {
    validation: metricScore(m, d.validation.y, val, task.classes.length),
    test: metricScore(m, d.test.y, test, task.classes.length),
    trainMs,
  };
}

/** Applies the program's preprocessing (fitted on training rows) to all three splits. */
export function preprocess(task: TaskData, p: Program): Prepared {
  const cols = p.features === 'numeric' ? task.features.filter((c) => c.kind === 'numeric') : task.features;
  if (cols.length === 0) throw new RangeError(`${task.spec.id} has no ${p.features} feature columns`);
  const train =
    p.impute === 'drop'
      ? Array.from(task.split.train).filter((i) => cols.every((c) => !isMissing(c, i)))
      : Array.from(task.split.train);
  if (train.length === 0)
    throw new RangeError(`${task.spec.id}: dropping rows with missing values leaves no training rows`);
  const encoders = cols.map((c) => encoder(c, train, p));
  const names = encoders.flatMap((e) => e.names);
  const rowsOf = (rows: ArrayLike<number>): number[][] => Array.from(rows, (i) => encoders.flatMap((e) => e.encode(i)));
  let sets = [rowsOf(train), rowsOf(task.split.validation), rowsOf(task.split.test)];
  let kept = names.map((_, j) => j);
  const k = { all: 0, numeric: 0, top3: 3, top6: 6 }[p.features];
  if (k > 0 && k < names.length) {
    kept = topK(
      sets[0],
      train.map((i) => task.y[i]),
      task.classes.length,
      k,
    );
    sets = sets.map((s) => s.map((r) => kept.map((j) => r[j])));
  }
  scaleInPlace(sets, p.scale);
  const ys = [train, Array.from(task.split.validation), Array.from(task.split.test)].map((rows) =>
    rows.map((i) => task.y[i]),
  );
  return {
    names: kept.map((j) => names[j]),
    train: { x: sets[0], y: ys[0] },
    validation: { x: sets[1], y: ys[1] },
    test: { x: sets[2], y: ys[2] },
  };
}

interface Encoder {
  names: string[];
  encode(row: number): number[];
}

/** Imputation and encoding of one column, fitted on `train`. Categorical gaps take the most common
 *  training category whatever the impute option; with impute "drop", gaps in validation and test
 *  rows (which are always scored) take the training mean. */
function encoder(c: Column, train: readonly number[], p: Program): Encoder {
  if (c.kind === 'numeric') {
    const seen = train.map((i) => c.values[i]).filter((v) => !Number.isNaN(v));
    const fill = p.impute === 'median' ? median(seen) : seen.reduce((a, b) => a + b, 0) / seen.length;
    return { names: [c.name], encode: (i) => [Number.isNaN(c.values[i]) ? fill : c.values[i]] };
  }
  const counts = new Map<string, number>();
  for (const i of train) if (c.values[i] !== null) counts.set(c.values[i]!, (counts.get(c.values[i]!) ?? 0) + 1);
  const cats = [...counts.keys()].sort();
  const mode = cats.reduce((a, b) => (counts.get(b)! > counts.get(a)! ? b : a), cats[0]);
  const index = (i: number): number => {
    const k = cats.indexOf(c.values[i] ?? mode);
    return k < 0 ? cats.indexOf(mode) : k;
  };
  if (p.encode === 'ordinal') return { names: [c.name], encode: (i) => [index(i)] };
  return { names: cats.map((v) => `${c.name}=${v}`), encode: (i) => cats.map((_, k) => (k === index(i) ? 1 : 0)) };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** Indices (ascending) of the k columns most associated with the target; ties go to the earlier column. */
function topK(x: number[][], y: number[], classes: number, k: number): number[] {
  const rows = y.map((_, i) => i);
  const scores = x[0].map((_, j) =>
    association(
      x.map((r) => r[j]),
      y,
      rows,
      classes,
    ),
  );
  return scores
    .map((s, j) => ({ s, j }))
    .sort((a, b) => b.s - a.s || a.j - b.j)
    .slice(0, k)
    .map((e) => e.j)
    .sort((a, b) => a - b);
}

/** Standard (z-score) or min-max scaling with training statistics; a constant column is only shifted. */
function scaleInPlace(sets: number[][][], scale: Program['scale']): void {
  if (scale === 'none') return;
  const train = sets[0];
  const cols = train[0].length;
  for (let j = 0; j < cols; j++) {
    const v = train.map((r) => r[j]);
    let shift: number;
    let div: number;
    if (scale === 'standard') {
      shift = v.reduce((a, b) => a + b, 0) / v.length;
      div = Math.sqrt(v.reduce((s, x) => s + (x - shift) ** 2, 0) / v.length);
    } else {
      shift = Math.min(...v);
      div = Math.max(...v) - shift;
    }
    if (!(div > 0)) div = 1;
    for (const s of sets) for (const r of s) r[j] = (r[j] - shift) / div;
  }
}

/** The task metric of predictions `pred` against `y`. */
export function metricScore(metric: Metric, y: readonly number[], pred: readonly number[], classes: number): number {
  if (pred.length !== y.length) throw new Error(`${pred.length} predictions for ${y.length} rows`);
  if (metric === 'rmse') {
    const se = y.reduce((s, v, i) => s + (v - pred[i]) ** 2, 0);
    const r = Math.sqrt(se / y.length);
    if (!Number.isFinite(r)) throw new Error(`the model predicted non-finite values (RMSE ${r})`);
    return r;
  }
  if (metric === 'accuracy') return y.filter((v, i) => v === pred[i]).length / y.length;
  return macroF1(y, pred, classes);
}

/** Mean over the classes present in y or in the predictions of F1 = 2 tp / (2 tp + fp + fn). */
export function macroF1(y: readonly number[], pred: readonly number[], classes: number): number {
  let total = 0;
  let counted = 0;
  for (let c = 0; c < classes; c++) {
    let tp = 0,
      fp = 0,
      fn = 0;
    y.forEach((v, i) => {
      if (pred[i] === c && v === c) tp++;
      else if (pred[i] === c) fp++;
      else if (v === c) fn++;
    });
    if (tp + fp + fn === 0) continue;
    total += (2 * tp) / (2 * tp + fp + fn);
    counted++;
  }
  return counted ? total / counted : 0;
}
