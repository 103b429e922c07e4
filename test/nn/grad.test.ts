import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { GRADIENTS, backward } from '../../src/nn/grad.ts';
import { DYN, Graph, type Tensor } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import * as L from '../../src/nn/layers.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { Session, type Feeds, floatData, tensor } from '../../src/nn/runtime.ts';
import { type CheckInput, gradCheck, randValues } from './gradcheck.ts';

const rng = new Rng(2024);
const inp = (name: string, shape: number[], opts: { gap?: number; pos?: boolean } = {}): CheckInput => {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = randValues(rng, n, opts.gap ?? 0.1);
  if (opts.pos) for (let i = 0; i < n; i++) v[i] = 0.5 + Math.abs(v[i]);
  return { name, shape, values: v };
};
/** Nodes no network builds (so nn/ops has no builder for them), for the gradient table's own checks. */
const identity = (x: Tensor): Tensor => x.graph.node('Identity', [x], [{ dtype: x.dtype, shape: x.shape }])[0];
const reduceMax = (x: Tensor, axis: number): Tensor =>
  x.graph.node(
    'ReduceMax',
    [x, x.graph.ints([axis])],
    [{ dtype: x.dtype, shape: x.shape.filter((_, i) => i !== axis) }],
    { keepdims: { i: 0 } },
    { axes: [axis], keepdims: false },
  )[0];
const ints = (name: string, shape: number[], values: number[]): CheckInput => ({
  name,
  shape,
  values: Int32Array.from(values),
  dtype: 'int32',
  diff: false,
});

type Case = {
  rule: string;
  name: string;
  inputs: CheckInput[];
  build: (g: Graph, t: Record<string, Tensor>) => Tensor;
};
const cases: Case[] = [
  {
    rule: 'Add',
    name: 'broadcast [3,4]+[4]',
    inputs: [inp('a', [3, 4]), inp('b', [4])],
    build: (_g, t) => o.add(t.a, t.b),
  },
  {
    rule: 'Sub',
    name: 'broadcast [2,3,4]-[3,1]',
    inputs: [inp('a', [2, 3, 4]), inp('b', [3, 1])],
    build: (_g, t) => o.sub(t.a, t.b),
  },
  {
    rule: 'Mul',
    name: 'broadcast [3,4]*[3,1]',
    inputs: [inp('a', [3, 4]), inp('b', [3, 1])],
    build: (_g, t) => o.mul(t.a, t.b),
  },
  {
    rule: 'Div',
    name: '[3,4]/[4]',
    inputs: [inp('a', [3, 4]), inp('b', [4], { gap: 0.5 })],
    build: (_g, t) => o.div(t.a, t.b),
  },
  {
    rule: 'Pow',
    name: 'positive base, tensor exponent',
    inputs: [inp('a', [3, 4], { pos: true }), inp('b', [4])],
    build: (_g, t) => o.pow(t.a, t.b),
  },
  {
    rule: 'Max',
    name: 'elementwise',
    inputs: [inp('a', [3, 4]), inp('b', [3, 4])],
    build: (_g, t) => o.maximum(t.a, t.b),
  },
  { rule: 'Min', name: 'broadcast', inputs: [inp('a', [3, 4]), inp('b', [4])], build: (_g, t) => o.minimum(t.a, t.b) },
  { rule: 'Neg', name: 'unary', inputs: [inp('a', [5])], build: (_g, t) => o.neg(t.a) },
  { rule: 'Exp', name: 'unary', inputs: [inp('a', [5])], build: (_g, t) => o.exp(t.a) },
  {
    rule: 'LogSoftmax',
    name: '[3,4] last axis',
    inputs: [inp('a', [3, 4])],
    build: (_g, t) => o.mul(o.logSoftmax(t.a), t.a),
  },
  { rule: 'Log', name: 'positive', inputs: [inp('a', [5], { pos: true })], build: (_g, t) => o.log(t.a) },
  { rule: 'Sqrt', name: 'positive', inputs: [inp('a', [5], { pos: true })], build: (_g, t) => o.sqrt(t.a) },
  { rule: 'Abs', name: 'away from 0', inputs: [inp('a', [6])], build: (_g, t) => o.abs(t.a) },
  { rule: 'Tanh', name: 'unary', inputs: [inp('a', [6])], build: (_g, t) => o.tanh(t.a) },
  { rule: 'Sigmoid', name: 'unary', inputs: [inp('a', [6])], build: (_g, t) => o.sigmoid(t.a) },
  { rule: 'Relu', name: 'away from the kink', inputs: [inp('a', [8])], build: (_g, t) => o.relu(t.a) },
  { rule: 'Softplus', name: 'unary', inputs: [inp('a', [6])], build: (_g, t) => o.softplus(t.a) },
  {
    rule: 'Identity',
    name: 'identity (stopGradient: see below)',
    inputs: [inp('a', [4])],
    build: (_g, t) => o.mul(identity(t.a), t.a),
  },
  { rule: 'MatMul', name: '2-D', inputs: [inp('a', [3, 4]), inp('b', [4, 2])], build: (_g, t) => o.matmul(t.a, t.b) },
  {
    rule: 'MatMul',
    name: 'batched with broadcast [3,4]x[2,4,5]',
    inputs: [inp('a', [3, 4]), inp('b', [2, 4, 5])],
    build: (_g, t) => o.matmul(t.a, t.b),
  },
  {
    rule: 'MatMul',
    name: 'batched [2,3,4]x[4,2]',
    inputs: [inp('a', [2, 3, 4]), inp('b', [4, 2])],
    build: (_g, t) => o.matmul(t.a, t.b),
  },
  {
    rule: 'Reshape',
    name: '[2,6]->[3,4]',
    inputs: [inp('a', [2, 6])],
    build: (_g, t) => o.mul(o.reshape(t.a, [3, 4]), o.reshape(t.a, [3, 4])),
  },
  {
    rule: 'Transpose',
    name: 'perm [2,0,1]',
    inputs: [inp('a', [2, 3, 4])],
    build: (_g, t) => o.transpose(t.a, [2, 0, 1]),
  },
  {
    rule: 'Concat',
    name: 'axis 1',
    inputs: [inp('a', [2, 3]), inp('b', [2, 2])],
    build: (_g, t) => o.concat([t.a, t.b, t.a], 1),
  },
  { rule: 'Slice', name: 'axis 1 [1,3)', inputs: [inp('a', [2, 5])], build: (_g, t) => o.slice(t.a, 1, 1, 3) },
  {
    rule: 'Gather',
    name: 'embedding rows with repeats',
    inputs: [inp('a', [5, 3]), ints('i', [2, 3], [0, 4, 4, 2, 0, 4])],
    build: (_g, t) => o.gather(t.a, t.i),
  },
  {
    rule: 'ReduceSum',
    name: 'axis 1 keepdims',
    inputs: [inp('a', [2, 3, 4])],
    build: (_g, t) => o.reduceSum(t.a, [1], true),
  },
  { rule: 'ReduceSum', name: 'axes [0,2]', inputs: [inp('a', [2, 3, 4])], build: (_g, t) => o.reduceSum(t.a, [0, 2]) },
  { rule: 'ReduceMean', name: 'axis -1', inputs: [inp('a', [3, 4])], build: (_g, t) => o.reduceMean(t.a, [-1]) },
  {
    rule: 'Where',
    name: 'broadcast branches',
    inputs: [inp('a', [3, 4]), inp('b', [4]), inp('c', [3, 4])],
    build: (_g, t) => o.where(o.greater(t.c, 0), t.a, t.b),
  },
  { rule: 'Expand', name: '[3,1]->[2,3,4]', inputs: [inp('a', [3, 1])], build: (_g, t) => o.expand(t.a, [2, 3, 4]) },
  { rule: 'Pad', name: 'zero pad 2-D', inputs: [inp('a', [2, 3])], build: (_g, t) => o.pad(t.a, [1, 0, 0, 2]) },
  // Composites (no rules of their own).
  { rule: 'composite', name: 'logSoftmax', inputs: [inp('a', [3, 5])], build: (_g, t) => L.logSoftmax(t.a) },
  { rule: 'composite', name: 'layerNorm', inputs: [inp('a', [3, 5])], build: (_g, t) => L.layerNorm(t.a, 'ln') },
  {
    rule: 'composite',
    name: 'categorical log-prob + entropy',
    inputs: [inp('a', [4, 3]), ints('k', [4], [0, 2, 1, 2])],
    build: (_g, t) => {
      const lp = L.logSoftmax(t.a);
      return o.add(L.categoricalLogProb(lp, t.k), L.categoricalEntropy(lp));
    },
  },
  {
    rule: 'composite',
    name: 'gaussian NLL',
    inputs: [inp('m', [3, 2]), inp('v', [3, 2]), inp('y', [3, 2])],
    build: (_g, t) => L.gaussianNll(t.m, t.v, t.y),
  },
  {
    rule: 'composite',
    name: 'softClamp',
    inputs: [inp('a', [6], { gap: 0 })],
    build: (_g, t) => L.softClamp(o.mul(t.a, 8), -3, 2),
  },
  {
    rule: 'composite',
    name: 'integer/bool paths: a Cast mask and Gather indices computed from the input',
    inputs: [inp('a', [2, 3]), inp('e', [2, 3])],
    build: (_g, t) =>
      o.add(
        o.mul(t.a, o.cast(o.greater(t.a, 0), 'float64')),
        o.gather(t.e, o.cast(o.greater(o.reduceSum(t.a, [1]), 0), 'int32')),
      ),
  },
  {
    rule: 'composite',
    name: 'conv via im2col (float64 lowering)',
    inputs: [inp('x', [2, 2, 5, 5])],
    build: (_g, t) => L.conv2d(t.x, 'c', 3, 3, { stride: 2, pad: 1 }),
  },
];

describe('gradient table: finite differences in float64', () => {
  let worst = { err: 0, name: '' };
  afterAll(() => console.log(`gradient table: max relative error ${worst.err.toExponential(2)} (${worst.name})`));
  for (const c of cases) {
    it(`${c.rule}: ${c.name}`, async () => {
      const r = await gradCheck(c.inputs, c.build);
      if (r.maxRelErr >= worst.err) worst = { err: r.maxRelErr, name: `${c.rule}: ${c.name}` };
      expect(r.checked).toBeGreaterThan(0);
      expect(r.maxRelErr, r.worst).toBeLessThanOrEqual(1e-5);
    });
  }

  it('has a finite-difference case for every differentiable rule (Conv, ConvTranspose: see conv.test.ts)', () => {
    const covered = new Set(cases.map((c) => c.rule));
    const rules = Object.entries(GRADIENTS)
      .filter(([, r]) => r !== 'nondiff')
      .map(([k]) => k);
    expect(rules.filter((r) => !covered.has(r) && r !== 'Conv' && r !== 'ConvTranspose')).toEqual([]);
  });
});

/** Runs a float64 graph (inputs fed by name) and returns its outputs as arrays. */
async function run(
  g: Graph,
  feeds: Record<string, { values: Float64Array; dims: number[] }>,
): Promise<Record<string, number[]>> {
  const s = await Session.create(writeOnnx(g), {}, 'float64');
  try {
    const f: Feeds = {};
    for (const [k, v] of Object.entries(feeds)) f[k] = tensor('float64', v.values, v.dims);
    const out = await s.run(f);
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, Array.from(floatData(v))]));
  } finally {
    await s.close();
  }
}

const close = (got: number[], want: number[]): void => {
  expect(got.length).toBe(want.length);
  got.forEach((v, i) =>
    expect(Math.abs(v - want[i]), `[${i}] got ${v} want ${want[i]}`).toBeLessThanOrEqual(
      1e-12 * (1 + Math.abs(want[i])),
    ),
  );
};

describe('backward: stopGradient, unconnected inputs, and no silent zeros', () => {
  it('stopGradient makes its value a constant: d/da sum(r * a * sg(tanh a)) = r * tanh a', async () => {
    // Finite differences cannot check this (they see the true derivative), so compare with the closed form.
    // Were stopGradient a plain identity, the gradient would gain r * a * (1 - tanh^2 a), nonzero here.
    const r = randValues(rng, 6, 0.5);
    const a = randValues(rng, 6, 0.2);
    const g = new Graph('float64');
    const ta = g.input('a', [2, 3]);
    const rc = g.constant(r, [2, 3]);
    const [ga] = backward(o.sumAll(o.mul(rc, o.mul(ta, o.stopGradient(o.tanh(ta))))), [ta]);
    g.output('ga', ga);
    const out = await run(g, { a: { values: a, dims: [2, 3] } });
    close(
      out.ga,
      Array.from(a, (v, i) => r[i] * Math.tanh(v)),
    );
  });

  it('a primitive without a rule behind stopGradient (on its input or its result) is never differentiated', async () => {
    const a = randValues(rng, 6);
    const g = new Graph('float64');
    const ta = g.input('a', [2, 3]);
    const stoppedMax = o.add(o.sumAll(reduceMax(o.stopGradient(ta), 1)), o.sumAll(o.stopGradient(reduceMax(ta, 0))));
    const [ga] = backward(o.add(o.sumAll(o.mul(ta, 3)), stoppedMax), [ta]);
    g.output('ga', ga);
    expect((await run(g, { a: { values: a, dims: [2, 3] } })).ga).toEqual([3, 3, 3, 3, 3, 3]);
  });

  it('gives zero gradients for inputs the loss does not depend on (static and dynamic shapes)', async () => {
    const g = new Graph('float64');
    const x = g.input('x', [2]);
    const y = g.input('y', [3]);
    const z = g.input('z', [DYN, 2]);
    const p = g.param('p', [2], { kind: 'zeros' });
    // p is reached only through a stopGradient: no gradient either.
    const [gx, gy, gz, gp] = backward(o.add(o.sumAll(o.exp(x)), o.sumAll(o.stopGradient(p))), [x, y, z, p]);
    expect([gx.shape, gy.shape, gz.shape, gp.shape]).toEqual([[2], [3], [DYN, 2], [2]]);
    [gx, gy, gz, gp].forEach((t, i) => g.output(`g${i}`, t));
    const xv = Float64Array.from([0.3, -1.2]);
    const out = await run(g, {
      x: { values: xv, dims: [2] },
      y: { values: Float64Array.from([1, 2, 3]), dims: [3] },
      z: { values: Float64Array.from([1, 2, 3, 4, 5, 6]), dims: [3, 2] },
      p: { values: Float64Array.from([7, 8]), dims: [2] },
    });
    close(out.g0, Array.from(xv, Math.exp));
    expect(out.g1).toEqual([0, 0, 0]);
    expect(out.g2).toEqual([0, 0, 0, 0, 0, 0]); // runtime batch 3
    expect(out.g3).toEqual([0, 0]);
  });

  it('refuses to differentiate through ReduceMax without stopGradient', () => {
    const g = new Graph('float64');
    const x = g.input('x', [2, 3]);
    expect(() => backward(o.sumAll(reduceMax(x, 1)), [x])).toThrow(/ReduceMax is not differentiable.*stopGradient/);
  });

  it("every 'nondiff' entry throws when a gradient reaches it from a float input", () => {
    const ops = Object.entries(GRADIENTS)
      .filter(([, r]) => r === 'nondiff')
      .map(([k]) => k);
    expect(ops.length).toBeGreaterThan(0);
    for (const op of ops) {
      // A raw node with a float input and a float output: what no rule exists for must not become a zero.
      const g = new Graph('float64');
      const x = g.input('x', [2]);
      const [y] = g.node(op, [o.mul(x, 2)], [{ dtype: 'float64', shape: [2] }]);
      expect(() => backward(o.sumAll(y), [x]), op).toThrow(new RegExp(`${op} is not differentiable`));
    }
    // A float-to-float Cast on the path (a real graph, not a raw node).
    const g = new Graph('float64');
    const x = g.input('x', [2]);
    expect(() => backward(o.sumAll(o.cast(o.cast(x, 'float32'), 'float64')), [x])).toThrow(
      /Cast is not differentiable/,
    );
  });

  it('throws when a rule gives no gradient for a float input on the path', () => {
    const saved = GRADIENTS.Exp;
    GRADIENTS.Exp = () => [null];
    try {
      const g = new Graph('float64');
      const x = g.input('x', [2]);
      expect(() => backward(o.sumAll(o.exp(x)), [x])).toThrow(/Exp rule gave no gradient for its float input 0/);
    } finally {
      GRADIENTS.Exp = saved;
    }
  });

  it('refuses integer and bool tensors as wrt', () => {
    const g = new Graph('float64');
    const x = g.input('x', [2]);
    const k = g.input('k', [2], 'int32');
    expect(() => backward(o.sumAll(o.mul(x, o.cast(k, 'float64'))), [k])).toThrow(/int32 tensor k/);
  });
});

describe('the finite-difference checker can fail', () => {
  it('flags a wrong rule', async () => {
    const saved = GRADIENTS.Exp;
    GRADIENTS.Exp = (n, g) => [o.mul(o.mul(g, n.outputs[0]), 1.001)];
    try {
      const r = await gradCheck([inp('a', [4])], (_g, t) => o.exp(t.a));
      expect(r.maxRelErr).toBeGreaterThan(5e-4);
    } finally {
      GRADIENTS.Exp = saved;
    }
  });

  it('flags a NaN gradient (where() over sqrt of a negative: the value is finite, the gradient is not)', async () => {
    const r = await gradCheck([inp('a', [4], { pos: true })], (_g, t) =>
      o.where(o.greater(t.a, 0), t.a, o.sqrt(o.neg(t.a))),
    );
    expect(r.checked).toBe(4);
    expect(r.maxRelErr, r.worst).toBe(Infinity);
  });
});
