import { afterAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { GRADIENTS, backward } from '../../src/nn/grad.ts';
import { Graph, type Tensor } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import * as L from '../../src/nn/layers.ts';
import { type CheckInput, gradCheck, randValues } from './gradcheck.ts';

const rng = new Rng(2024);
const inp = (name: string, shape: number[], opts: { gap?: number; pos?: boolean } = {}): CheckInput => {
  const n = shape.reduce((a, b) => a * b, 1);
  const v = randValues(rng, n, opts.gap ?? 0.1);
  if (opts.pos) for (let i = 0; i < n; i++) v[i] = 0.5 + Math.abs(v[i]);
  return { name, shape, values: v };
};
const ints = (name: string, shape: number[], values: number[]): CheckInput => ({ name, shape, values: Int32Array.from(values), dtype: 'int32', diff: false });

type Case = { rule: string; name: string; inputs: CheckInput[]; build: (g: Graph, t: Record<string, Tensor>) => Tensor };
const cases: Case[] = [
  { rule: 'Add', name: 'broadcast [3,4]+[4]', inputs: [inp('a', [3, 4]), inp('b', [4])], build: (_g, t) => o.add(t.a, t.b) },
  { rule: 'Sub', name: 'broadcast [2,3,4]-[3,1]', inputs: [inp('a', [2, 3, 4]), inp('b', [3, 1])], build: (_g, t) => o.sub(t.a, t.b) },
  { rule: 'Mul', name: 'broadcast [3,4]*[3,1]', inputs: [inp('a', [3, 4]), inp('b', [3, 1])], build: (_g, t) => o.mul(t.a, t.b) },
  { rule: 'Div', name: '[3,4]/[4]', inputs: [inp('a', [3, 4]), inp('b', [4], { gap: 0.5 })], build: (_g, t) => o.div(t.a, t.b) },
  { rule: 'Pow', name: 'positive base, tensor exponent', inputs: [inp('a', [3, 4], { pos: true }), inp('b', [4])], build: (_g, t) => o.pow(t.a, t.b) },
  { rule: 'Max', name: 'elementwise', inputs: [inp('a', [3, 4]), inp('b', [3, 4])], build: (_g, t) => o.maximum(t.a, t.b) },
  { rule: 'Min', name: 'broadcast', inputs: [inp('a', [3, 4]), inp('b', [4])], build: (_g, t) => o.minimum(t.a, t.b) },
  { rule: 'Neg', name: 'unary', inputs: [inp('a', [5])], build: (_g, t) => o.neg(t.a) },
  { rule: 'Exp', name: 'unary', inputs: [inp('a', [5])], build: (_g, t) => o.exp(t.a) },
  { rule: 'Log', name: 'positive', inputs: [inp('a', [5], { pos: true })], build: (_g, t) => o.log(t.a) },
  { rule: 'Sqrt', name: 'positive', inputs: [inp('a', [5], { pos: true })], build: (_g, t) => o.sqrt(t.a) },
  { rule: 'Abs', name: 'away from 0', inputs: [inp('a', [6])], build: (_g, t) => o.abs(t.a) },
  { rule: 'Tanh', name: 'unary', inputs: [inp('a', [6])], build: (_g, t) => o.tanh(t.a) },
  { rule: 'Sigmoid', name: 'unary', inputs: [inp('a', [6])], build: (_g, t) => o.sigmoid(t.a) },
  { rule: 'Relu', name: 'away from the kink', inputs: [inp('a', [8])], build: (_g, t) => o.relu(t.a) },
  { rule: 'Softplus', name: 'unary', inputs: [inp('a', [6])], build: (_g, t) => o.softplus(t.a) },
  { rule: 'Identity', name: 'identity (+ stopGradient has none)', inputs: [inp('a', [4]), inp('b', [4])], build: (_g, t) => o.add(o.identity(t.a), o.mul(o.stopGradient(t.b), 0)) },
  { rule: 'MatMul', name: '2-D', inputs: [inp('a', [3, 4]), inp('b', [4, 2])], build: (_g, t) => o.matmul(t.a, t.b) },
  { rule: 'MatMul', name: 'batched with broadcast [3,4]x[2,4,5]', inputs: [inp('a', [3, 4]), inp('b', [2, 4, 5])], build: (_g, t) => o.matmul(t.a, t.b) },
  { rule: 'MatMul', name: 'batched [2,3,4]x[4,2]', inputs: [inp('a', [2, 3, 4]), inp('b', [4, 2])], build: (_g, t) => o.matmul(t.a, t.b) },
  { rule: 'Reshape', name: '[2,6]->[3,4]', inputs: [inp('a', [2, 6])], build: (_g, t) => o.mul(o.reshape(t.a, [3, 4]), o.reshape(t.a, [3, 4])) },
  { rule: 'Transpose', name: 'perm [2,0,1]', inputs: [inp('a', [2, 3, 4])], build: (_g, t) => o.transpose(t.a, [2, 0, 1]) },
  { rule: 'Concat', name: 'axis 1', inputs: [inp('a', [2, 3]), inp('b', [2, 2])], build: (_g, t) => o.concat([t.a, t.b, t.a], 1) },
  { rule: 'Slice', name: 'axis 1 [1,3)', inputs: [inp('a', [2, 5])], build: (_g, t) => o.slice(t.a, 1, 1, 3) },
  { rule: 'Gather', name: 'embedding rows with repeats', inputs: [inp('a', [5, 3]), ints('i', [2, 3], [0, 4, 4, 2, 0, 4])], build: (_g, t) => o.gather(t.a, t.i) },
  { rule: 'ReduceSum', name: 'axis 1 keepdims', inputs: [inp('a', [2, 3, 4])], build: (_g, t) => o.reduceSum(t.a, [1], true) },
  { rule: 'ReduceSum', name: 'axes [0,2]', inputs: [inp('a', [2, 3, 4])], build: (_g, t) => o.reduceSum(t.a, [0, 2]) },
  { rule: 'ReduceMean', name: 'axis -1', inputs: [inp('a', [3, 4])], build: (_g, t) => o.reduceMean(t.a, [-1]) },
  { rule: 'Where', name: 'broadcast branches', inputs: [inp('a', [3, 4]), inp('b', [4]), inp('c', [3, 4])], build: (_g, t) => o.where(o.greater(t.c, 0), t.a, t.b) },
  { rule: 'Expand', name: '[3,1]->[2,3,4]', inputs: [inp('a', [3, 1])], build: (_g, t) => o.expand(t.a, [2, 3, 4]) },
  { rule: 'Pad', name: 'zero pad 2-D', inputs: [inp('a', [2, 3])], build: (_g, t) => o.pad(t.a, [1, 0, 0, 2]) },
  // Composites (no rules of their own).
  { rule: 'composite', name: 'logSoftmax', inputs: [inp('a', [3, 5])], build: (_g, t) => L.logSoftmax(t.a) },
  { rule: 'composite', name: 'layerNorm', inputs: [inp('a', [3, 5])], build: (_g, t) => L.layerNorm(t.a, 'ln') },
  { rule: 'composite', name: 'categorical log-prob + entropy', inputs: [inp('a', [4, 3]), ints('k', [4], [0, 2, 1, 2])], build: (_g, t) => { const lp = L.logSoftmax(t.a); return o.add(L.categoricalLogProb(lp, t.k), L.categoricalEntropy(lp)); } },
  { rule: 'composite', name: 'gaussian NLL', inputs: [inp('m', [3, 2]), inp('v', [3, 2]), inp('y', [3, 2])], build: (_g, t) => L.gaussianNll(t.m, t.v, t.y) },
  { rule: 'composite', name: 'softClamp', inputs: [inp('a', [6], { gap: 0 })], build: (_g, t) => L.softClamp(o.mul(t.a, 8), -3, 2) },
  { rule: 'composite', name: 'conv via im2col (float64 lowering)', inputs: [inp('x', [2, 2, 5, 5])], build: (_g, t) => L.conv2d(t.x, 'c', 3, 3, { stride: 2, pad: 1 }) },
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

  it('has a finite-difference case for every differentiable rule (Conv: see conv.test.ts)', () => {
    const covered = new Set(cases.map((c) => c.rule));
    const rules = Object.entries(GRADIENTS).filter(([, r]) => r !== 'nondiff').map(([k]) => k);
    expect(rules.filter((r) => !covered.has(r) && r !== 'Conv')).toEqual([]);
  });

  it('refuses to differentiate through ReduceMax without stopGradient', () => {
    const g = new Graph('float64');
    const x = g.input('x', [2, 3]);
    expect(() => backward(o.sumAll(o.reduceMax(x, [1])), [x])).toThrow(/ReduceMax.*stopGradient/);
  });

  it('gives zero gradients for inputs the loss does not depend on', () => {
    const g = new Graph('float64');
    const x = g.input('x', [2]);
    const y = g.input('y', [3]);
    const [gy] = backward(o.sumAll(o.exp(x)), [y]);
    expect(gy.shape).toEqual([3]);
  });
});
