// AutoResearch tasks: the task table over the shipped tabular datasets, fixed train/validation/test
// splits, task meta-features and the feature-target association used by feature selection.
// Browser-safe: datasets arrive as data (data-file.ts reads them in Node).
import { dlog } from '../core/dmath.ts';
import { Rng } from '../core/rng.ts';

export type DatasetName = 'penguins' | 'iris' | 'cars' | 'seattle-weather' | 'boston';
export type TaskKind = 'classification' | 'regression';
export type Metric = 'accuracy' | 'macro-f1' | 'rmse';

/** One column of a dataset. Numeric missing values are NaN, categorical ones null. */
export type Column =
  | { name: string; kind: 'numeric'; values: Float64Array }
  | { name: string; kind: 'categorical'; values: (string | null)[] };

export interface Dataset {
  name: DatasetName;
  columns: Column[];
}

export interface TaskSpec {
  id: string;
  title: string;
  dataset: DatasetName;
  kind: TaskKind;
  /** The column to predict (rows where it is missing are dropped). */
  target: string;
  /** Columns that are not features (identifiers, dates, leaky columns). */
  drop: readonly string[];
  metric: Metric;
  higherIsBetter: boolean;
  /** Plain words for the agent's observation: the data, the target, the metric. */
  description: string;
  /** Held out from the agent's training tasks (evaluation only). */
  heldout: boolean;
  /** Seed of the fixed split. */
  splitSeed: number;
}

export const TASKS: readonly TaskSpec[] = [
  {
    id: 'penguins-species',
    title: 'Palmer penguins: species',
    dataset: 'penguins',
    kind: 'classification',
    target: 'species',
    drop: [],
    metric: 'accuracy',
    higherIsBetter: true,
    heldout: false,
    splitSeed: 1201,
    description:
      'Measurements of 344 penguins from three islands in Antarctica: beak length and depth, flipper length, ' +
      'body mass (numeric), island and sex (categorical; some values are missing). ' +
      'Predict the species (Adelie, Chinstrap or Gentoo; three fairly balanced classes). ' +
      'Scored by accuracy on held-back rows; higher is better.',
  },
  {
    id: 'iris-species',
    title: 'Iris flowers: species',
    dataset: 'iris',
    kind: 'classification',
    target: 'species',
    drop: [],
    metric: 'accuracy',
    higherIsBetter: true,
    heldout: false,
    splitSeed: 1202,
    description:
      'The classic iris data: 150 flowers with four numeric measurements (sepal and petal length and width) ' +
      'and no missing values. Predict the species (setosa, versicolor or virginica; three balanced classes). ' +
      'Scored by accuracy; higher is better.',
  },
  {
    id: 'seattle-weather',
    title: 'Seattle daily weather type',
    dataset: 'seattle-weather',
    kind: 'classification',
    target: 'weather',
    drop: ['date'],
    metric: 'macro-f1',
    higherIsBetter: true,
    heldout: false,
    splitSeed: 1203,
    description:
      'Four years of daily weather in Seattle: precipitation, maximum and minimum temperature, ' +
      "wind and the month (all numeric). Predict the day's weather type among five imbalanced classes (rain and " +
      'sun are common; fog, drizzle and snow are rare). Scored by macro-averaged F1, ' +
      'which weighs every class equally; higher is better.',
  },
  {
    id: 'cars-mpg',
    title: 'Cars: fuel economy',
    dataset: 'cars',
    kind: 'regression',
    target: 'mpg',
    drop: ['name'],
    metric: 'rmse',
    higherIsBetter: false,
    heldout: false,
    splitSeed: 1204,
    description:
      'About 400 cars from 1970-1982: cylinders, displacement, horsepower (a few missing), weight, acceleration, ' +
      'model year (numeric) and region of origin (categorical). Predict fuel economy in miles per gallon. ' +
      'Scored by root mean squared error; lower is better.',
  },
  {
    id: 'penguins-mass',
    title: 'Palmer penguins: body mass',
    dataset: 'penguins',
    kind: 'regression',
    target: 'body_mass',
    drop: [],
    metric: 'rmse',
    higherIsBetter: false,
    heldout: false,
    splitSeed: 1205,
    description:
      'Palmer penguins again, now predicting body mass in grams from species, island and sex (categorical, ' +
      'sex sometimes missing) and beak length, beak depth and flipper length (numeric). ' +
      'Scored by root mean squared error in grams; lower is better.',
  },
  {
    id: 'cars-origin',
    title: 'Cars: region of origin',
    dataset: 'cars',
    kind: 'classification',
    target: 'origin',
    drop: ['name'],
    metric: 'macro-f1',
    higherIsBetter: true,
    heldout: true,
    splitSeed: 1206,
    description:
      'About 400 cars from 1970-1982 with fuel economy, cylinders, displacement, horsepower, weight, ' +
      'acceleration and model year (all numeric, a few missing). Predict where the car was made: USA, ' +
      'Europe or Japan (imbalanced: most cars are American). Scored by macro-averaged F1; higher is better.',
  },
  {
    id: 'boston-medv',
    title: 'Boston housing: median value',
    dataset: 'boston',
    kind: 'regression',
    target: 'medv',
    drop: ['b'],
    metric: 'rmse',
    higherIsBetter: false,
    heldout: true,
    splitSeed: 1207,
    description:
      '506 neighbourhoods around Boston in the 1970s with 12 numeric descriptors: crime rate, zoning, industry, ' +
      'river access, air pollution, rooms per home, building age, distance to jobs, highway access, tax rate, ' +
      'pupil-teacher ratio and share of lower-status population. Predict the median home value in thousands of ' +
      'dollars. Scored by root mean squared error; lower is better.',
  },
];

export function taskSpec(id: string): TaskSpec {
  const t = TASKS.find((x) => x.id === id);
  if (!t) throw new RangeError(`unknown AutoResearch task "${id}" (known: ${TASKS.map((x) => x.id).join(', ')})`);
  return t;
}

export interface Split {
  train: Int32Array;
  validation: Int32Array;
  test: Int32Array;
}

/** A task bound to its data: feature columns, target and split (row indices, ascending). */
export interface TaskData {
  spec: TaskSpec;
  kind: TaskKind;
  features: Column[];
  /** Class index (classification) or value (regression), one per row. */
  y: Float64Array;
  /** Class names in index order (sorted); empty for regression. */
  classes: string[];
  split: Split;
  trainRows: number;
}

/** Binds a task to its dataset: drops the target's missing rows and the dropped columns, fixes the split. */
export function prepareTask(spec: TaskSpec, data: Dataset): TaskData {
  if (data.name !== spec.dataset)
    throw new RangeError(`task ${spec.id} needs dataset ${spec.dataset}, got ${data.name}`);
  const target = data.columns.find((c) => c.name === spec.target);
  if (!target) throw new RangeError(`dataset ${data.name} has no column "${spec.target}"`);
  const keep = rowsWhere(target.values.length, (i) => !isMissing(target, i));
  const features = data.columns
    .filter((c) => c !== target && !spec.drop.includes(c.name))
    .map((c) => pickRows(c, keep));
  let y: Float64Array;
  let classes: string[] = [];
  if (spec.kind === 'classification') {
    if (target.kind !== 'categorical')
      throw new RangeError(`task ${spec.id}: a classification target must be categorical`);
    classes = [...new Set(keep.map((i) => target.values[i]!))].sort();
    y = Float64Array.from(keep, (i) => classes.indexOf(target.values[i]!));
  } else {
    if (target.kind !== 'numeric') throw new RangeError(`task ${spec.id}: a regression target must be numeric`);
    y = Float64Array.from(keep, (i) => target.values[i]);
  }
  const split = splitRows(y, spec.kind === 'classification' ? classes.length : 0, spec.splitSeed);
  return { spec, kind: spec.kind, features, y, classes, split, trainRows: split.train.length };
}

export function isMissing(c: Column, i: number): boolean {
  return c.kind === 'numeric' ? Number.isNaN(c.values[i]) : c.values[i] === null;
}

function rowsWhere(n: number, ok: (i: number) => boolean): number[] {
  return Array.from({ length: n }, (_, i) => i).filter(ok);
}

function pickRows(c: Column, rows: readonly number[]): Column {
  return c.kind === 'numeric'
    ? { name: c.name, kind: 'numeric', values: Float64Array.from(rows, (i) => c.values[i]) }
    : { name: c.name, kind: 'categorical', values: rows.map((i) => c.values[i]) };
}

/** 60/20/20 split from Rng(seed): each class on its own when `classes` > 0 (stratified). */
export function splitRows(y: Float64Array, classes: number, seed: number): Split {
  const order = new Rng(seed, 0x5b17).shuffle(Array.from({ length: y.length }, (_, i) => i));
  const groups = classes > 0 ? Array.from({ length: classes }, (_, c) => order.filter((i) => y[i] === c)) : [order];
  const parts: number[][] = [[], [], []];
  for (const g of groups) {
    const nTrain = Math.round(g.length * 0.6);
    const nVal = Math.round(g.length * 0.2);
    parts[0].push(...g.slice(0, nTrain));
    parts[1].push(...g.slice(nTrain, nTrain + nVal));
    parts[2].push(...g.slice(nTrain + nVal));
  }
  const sorted = (xs: number[]): Int32Array => Int32Array.from(xs).sort();
  return { train: sorted(parts[0]), validation: sorted(parts[1]), test: sorted(parts[2]) };
}

/** Strength of the link between feature x and the target over `rows` (NaN skipped), in [0, 1]:
 *  |Pearson r| for regression, the correlation ratio eta (sqrt of between-class / total variance)
 *  for classification. 0 for a constant feature. */
export function association(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  rows: ArrayLike<number>,
  classes: number,
): number {
  const idx = Array.from(rows).filter((i) => !Number.isNaN(x[i]));
  if (idx.length < 2) return 0;
  const mx = idx.reduce((s, i) => s + x[i], 0) / idx.length;
  const sxx = idx.reduce((s, i) => s + (x[i] - mx) ** 2, 0);
  if (!(sxx > 0)) return 0;
  if (classes > 0) {
    const sum = new Float64Array(classes);
    const count = new Float64Array(classes);
    for (const i of idx) {
      sum[y[i]] += x[i];
      count[y[i]]++;
    }
    let between = 0;
    for (let c = 0; c < classes; c++) if (count[c] > 0) between += count[c] * (sum[c] / count[c] - mx) ** 2;
    return Math.min(1, Math.sqrt(between / sxx));
  }
  const my = idx.reduce((s, i) => s + y[i], 0) / idx.length;
  const syy = idx.reduce((s, i) => s + (y[i] - my) ** 2, 0);
  if (!(syy > 0)) return 0;
  const sxy = idx.reduce((s, i) => s + (x[i] - mx) * (y[i] - my), 0);
  return Math.min(1, Math.abs(sxy) / Math.sqrt(sxx * syy));
}

/** Names of the metaFeatures entries, in order. */
export const META_NAMES = [
  'log_rows', // ln(rows) / ln(10000)
  'log_features', // ln(1 + feature columns) / ln(100)
  'numeric_share', // share of feature columns that are numeric
  'categorical_share', // share of feature columns that are categorical
  'missing_share', // share of missing feature cells
  'rows_with_missing', // share of rows with at least one missing feature
  'is_classification', // 1 classification, 0 regression
  'classes', // number of classes / 10 (0 for regression)
  'class_imbalance', // 1 - rarest / most common class count in train (0 balanced; 0 for regression)
  'class_entropy', // entropy of the train class shares / ln(classes) (1 balanced; 0 for regression)
  'target_skew', // skewness of the train target, tanh-squashed (0 for classification)
  'max_association', // strongest association of a numeric feature with the train target, in [0, 1]
  'mean_association', // mean of that association over the numeric features
] as const;

/** A fixed-length description of the task (META_NAMES says what each entry is);
 *  train rows only for target statistics. */
export function metaFeatures(task: TaskData): Float32Array {
  const f = task.features;
  const rows = task.y.length;
  const numeric = f.filter((c) => c.kind === 'numeric');
  let missing = 0;
  let rowsMissing = 0;
  for (let i = 0; i < rows; i++) {
    const m = f.filter((c) => isMissing(c, i)).length;
    missing += m;
    if (m > 0) rowsMissing++;
  }
  const cls = task.classes.length;
  const assoc = numeric.map((c) => association(c.values as Float64Array, task.y, task.split.train, cls));
  const out = [
    dlog(rows) / dlog(10000),
    dlog(1 + f.length) / dlog(100),
    numeric.length / f.length,
    (f.length - numeric.length) / f.length,
    missing / (rows * f.length),
    rowsMissing / rows,
    task.kind === 'classification' ? 1 : 0,
    cls / 10,
    ...classStats(task),
    task.kind === 'regression' ? Math.tanh(skewness(Array.from(task.split.train, (i) => task.y[i]))) : 0,
    assoc.length ? Math.max(...assoc) : 0,
    assoc.length ? assoc.reduce((a, b) => a + b, 0) / assoc.length : 0,
  ];
  return Float32Array.from(out);
}

function classStats(task: TaskData): [number, number] {
  const c = task.classes.length;
  if (c === 0) return [0, 0];
  const count = new Float64Array(c);
  for (const i of task.split.train) count[task.y[i]]++;
  const n = task.split.train.length;
  const entropy = Array.from(count).reduce((s, k) => (k > 0 ? s - (k / n) * dlog(k / n) : s), 0);
  return [1 - Math.min(...count) / Math.max(...count), c > 1 ? entropy / dlog(c) : 0];
}

function skewness(xs: readonly number[]): number {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  const v = xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length;
  if (!(v > 0)) return 0;
  return xs.reduce((s, x) => s + (x - m) ** 3, 0) / xs.length / v ** 1.5;
}
