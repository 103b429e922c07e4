// Finite-difference gradient checking in float64 through onnxruntime-node (test helper).
import { Graph, type DType, type Tensor, type TypedArray } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import { backward } from '../../src/nn/grad.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { Session, type Feeds, floatData, tensor } from '../../src/nn/runtime.ts';
import { Rng } from '../../src/core/rng.ts';

export interface CheckInput {
  name: string;
  shape: number[];
  values: TypedArray;
  /** Differentiate with respect to this input (float inputs only). */
  diff?: boolean;
  dtype?: DType;
}

export interface GradReport {
  /** Max over checked elements of |analytic - numeric| / max(|analytic|, |numeric|, floor). */
  maxRelErr: number;
  checked: number;
  worst: string;
}

export const REL_FLOOR = 1e-3;

export function relErr(a: number, n: number, floor = REL_FLOOR): number {
  return Math.abs(a - n) / Math.max(Math.abs(a), Math.abs(n), floor);
}

/** Values in [-1, 1] kept at least `gap` away from zero (away from ReLU/Abs kinks). */
export function randValues(rng: Rng, n: number, gap = 0.1, scale = 1): Float64Array {
  return Float64Array.from({ length: n }, () => {
    const u = rng.range(gap, 1);
    return scale * (rng.uniform() < 0.5 ? -u : u);
  });
}

/** Builds loss = sum(y * R) over the op's output y with fixed random R; checks every element of every
 *  differentiable input (or `sample` elements each) against central differences with step h. */
export async function gradCheck(
  inputs: CheckInput[],
  build: (g: Graph, t: Record<string, Tensor>) => Tensor,
  opts: { seed?: number; h?: number; sample?: number } = {},
): Promise<GradReport> {
  const rng = new Rng(opts.seed ?? 7, 98);
  const lossOf = (g: Graph): Tensor => {
    const t: Record<string, Tensor> = {};
    for (const i of inputs) t[i.name] = g.input(i.name, i.shape, i.dtype ?? 'float64');
    const y = build(g, t);
    const r = g.constant(randValues(rng, y.size, 0.5), y.shape);
    return y.rank === 0 ? o.mul(y, r) : o.sumAll(o.mul(y, r));
  };
  const values = Object.fromEntries(inputs.map((i) => [i.name, i.values]));
  const diff = inputs.filter((i) => i.diff !== false && (i.dtype ?? 'float64') === 'float64').map((i) => i.name);
  return checkLoss(lossOf, values, { ...opts, diff });
}

/** Checks d loss / d (named float64 inputs and every parameter, given random values) by central
 *  differences. `values` holds the data of every graph input. */
export async function checkLoss(
  build: (g: Graph) => Tensor,
  values: Record<string, TypedArray>,
  opts: { diff?: string[]; seed?: number; h?: number; sample?: number } = {},
): Promise<GradReport> {
  const rng = new Rng(opts.seed ?? 7, 99);
  const g = new Graph('float64');
  const loss = build(g);
  g.output('loss', loss);
  const all: Record<string, { t: Tensor; values: TypedArray }> = {};
  for (const t of g.inputs) {
    if (!values[t.name]) throw new Error(`checkLoss: no values for input ${t.name}`);
    all[t.name] = { t, values: values[t.name] };
  }
  for (const p of g.params) all[p.name] = { t: p.tensor, values: randValues(rng, p.tensor.size) };
  const diff = [...(opts.diff ?? []), ...g.params.map((p) => p.name)];
  backward(
    loss,
    diff.map((n) => all[n].t),
  ).forEach((gr, k) => g.output(`grad_${k}`, gr));
  const session = await Session.create(writeOnnx(g), {}, 'float64');
  try {
    const feeds: Feeds = {};
    for (const [name, a] of Object.entries(all)) feeds[name] = tensor(a.t.dtype, a.values, a.t.shape);
    const base = await session.run(feeds);
    const lossAt = async (name: string, v: Float64Array): Promise<number> => {
      const out = await session.run({ ...feeds, [name]: tensor('float64', v, feeds[name].dims) }, ['loss']);
      return floatData(out.loss)[0];
    };
    return await compare(
      diff.map((n) => ({ name: n, values: all[n].values as Float64Array })),
      base,
      lossAt,
      rng,
      opts,
    );
  } finally {
    await session.close();
  }
}

async function compare(
  diff: { name: string; values: Float64Array }[],
  base: Feeds,
  lossAt: (name: string, v: Float64Array) => Promise<number>,
  rng: Rng,
  opts: { h?: number; sample?: number },
): Promise<GradReport> {
  const h = opts.h ?? 1e-5;
  const report: GradReport = { maxRelErr: 0, checked: 0, worst: '' };
  for (const [k, inp] of diff.entries()) {
    const analytic = floatData(base[`grad_${k}`]);
    const values = inp.values;
    const n = values.length;
    const idx =
      opts.sample && opts.sample < n ? Array.from({ length: opts.sample }, () => rng.int(n)) : [...Array(n).keys()];
    for (const j of idx) {
      const v = values.slice();
      v[j] = values[j] + h;
      const up = await lossAt(inp.name, v);
      v[j] = values[j] - h;
      const down = await lossAt(inp.name, v);
      const numeric = (up - down) / (2 * h);
      // A NaN comparison is never "greater": count it as an infinite error, or it would pass silently.
      const e = Number.isFinite(analytic[j]) && Number.isFinite(numeric) ? relErr(analytic[j], numeric) : Infinity;
      report.checked++;
      if (e > report.maxRelErr || report.worst === '') {
        report.maxRelErr = e;
        report.worst = `${inp.name}[${j}] analytic ${analytic[j]} numeric ${numeric}`;
      }
    }
  }
  return report;
}
