// Reverse-mode autodiff: THE gradient table (one rule per primitive) and backward().
// Composites built from primitives need no rule. Rules emit ordinary primitive nodes.
import { DYN, type Node, type Tensor, isFloat } from './ir.ts';
import * as o from './ops.ts';

/** Given a node and the gradient of its (single) output, returns one gradient (or null) per input. */
export type GradRule = (node: Node, g: Tensor) => (Tensor | null)[];

/** Reduce a broadcast gradient back to `shape` (sum over broadcast axes). */
export function sumTo(g: Tensor, shape: readonly number[]): Tensor {
  if (g.shape.length === shape.length && g.shape.every((d, i) => d === shape[i])) return g;
  const lead = g.rank - shape.length;
  const axes: number[] = [];
  g.shape.forEach((d, i) => {
    if (i < lead || (shape[i - lead] === 1 && d !== 1)) axes.push(i);
  });
  let r = axes.length ? o.reduceSum(g, axes, true) : g;
  if (lead > 0 || r.rank !== shape.length) r = o.reshape(r, shape);
  return r;
}

const zero = (like: Tensor): Tensor => like.graph.scalar(0, like.dtype);
const lastTwo = (t: Tensor): number[] => [...t.shape.slice(0, -2).map((_, i) => i), t.rank - 1, t.rank - 2];

function reduceGrad(n: Node, g: Tensor): Tensor {
  const x = n.inputs[0];
  const axes = n.meta.axes as number[];
  const kept = n.meta.keepdims
    ? g
    : o.reshape(
        g,
        x.shape.map((d, i) => (axes.includes(i) ? 1 : d)),
      );
  return o.expand(kept, x.shape, x);
}

function convGrad(n: Node, g: Tensor): (Tensor | null)[] {
  const [x, w, b] = n.inputs;
  const s = (n.attrs.strides as { ints: number[] }).ints as [number, number];
  const p = (n.attrs.pads as { ints: number[] }).ints as [number, number, number, number];
  const d = (n.attrs.dilations as { ints: number[] }).ints;
  if (d[0] !== 1 || d[1] !== 1) throw new Error('Conv gradient: dilated convolutions are not supported');
  const [kh, kw] = [w.shape[2], w.shape[3]];
  // Input gradient: the transposed convolution, padded at the end to recover rows the stride skipped.
  const outPad: [number, number] = [
    x.shape[2] - ((g.shape[2] - 1) * s[0] - p[0] - p[2] + kh),
    x.shape[3] - ((g.shape[3] - 1) * s[1] - p[1] - p[3] + kw),
  ];
  const gx = o.convTranspose(g, w, s, p, outPad);
  // Weight gradient: batch becomes channels; the output gradient is the kernel, dilated by the stride.
  // Trailing input rows/columns the forward stride never reached would widen the result past the kernel:
  // cut them from the end padding (or, if that is too small, from the input itself).
  let xt = o.transpose(x, [1, 0, 2, 3]);
  const pads = [...p];
  for (const [axis, k, s0] of [
    [2, kh, s[0]],
    [3, kw, s[1]],
  ] as const) {
    const extra = x.shape[axis] + p[axis - 2] + p[axis] - s0 * (g.shape[axis] - 1) - k;
    const fromPad = Math.min(extra, p[axis]);
    pads[axis] -= fromPad;
    if (extra > fromPad) xt = o.slice(xt, axis, 0, x.shape[axis] - (extra - fromPad));
  }
  const gw = o.transpose(
    o.conv(xt, o.transpose(g, [1, 0, 2, 3]), null, { pads: pads as [number, number, number, number], dilations: s }),
    [1, 0, 2, 3],
  );
  return b ? [gx, gw, o.reduceSum(g, [0, 2, 3])] : [gx, gw];
}

function convTransposeGrad(n: Node, g: Tensor): Tensor[] {
  const [x, w] = n.inputs;
  const ints = (name: string, dflt: number[]): number[] =>
    (n.attrs[name] as { ints: number[] } | undefined)?.ints ?? dflt;
  const s = ints('strides', [1, 1]) as [number, number];
  const p = ints('pads', [0, 0, 0, 0]);
  const outPad = ints('output_padding', [0, 0]);
  if (ints('dilations', [1, 1]).some((v) => v !== 1))
    throw new Error('ConvTranspose gradient: dilated transposed convolutions are not supported');
  if (n.attrs.group && (n.attrs.group as { i: number }).i !== 1)
    throw new Error('ConvTranspose gradient: grouped transposed convolutions are not supported');
  if (n.inputs.length > 2) throw new Error('ConvTranspose gradient: a bias input is not supported');
  // Output rows that output_padding adds beyond the end padding see no input: cut them from g;
  // output_padding within the end padding only shortens the padding the adjoint Conv sees.
  let gy = g;
  const pads = [...p];
  for (const axis of [2, 3]) {
    const cut = outPad[axis - 2] - p[axis];
    if (cut > 0) gy = o.slice(gy, axis, 0, g.shape[axis] - cut);
    pads[axis] = Math.max(0, -cut);
  }
  const cp = pads as [number, number, number, number];
  // Input gradient: the Conv with the same weights ([in, out, kh, kw] read as Conv's [out, in, kh, kw]).
  const gx = o.conv(gy, w, null, { strides: s, pads: cp });
  // Weight gradient: batch becomes channels; the input is the kernel, dilated by the stride.
  const gw = o.conv(o.transpose(gy, [1, 0, 2, 3]), o.transpose(x, [1, 0, 2, 3]), null, { pads: cp, dilations: s });
  return [gx, o.transpose(gw, [1, 0, 2, 3])];
}

function gatherGrad(n: Node, g: Tensor): (Tensor | null)[] {
  // Embedding gradient as a one-hot matrix product: deterministic, no scatter.
  const [data, idx] = n.inputs;
  const rows = data.shape[0];
  const width = data.size / rows;
  const flatIdx = o.reshape(idx, [DYN, 1]);
  const range = data.graph.constant(
    Array.from({ length: rows }, (_, i) => i),
    [1, rows],
    idx.dtype,
  );
  const onehot = o.cast(o.equal(flatIdx, range), data.dtype);
  const g2 = o.reshape(g, [DYN, width]);
  return [o.reshape(o.matmul(o.transpose(onehot, [1, 0]), g2), data.shape), null];
}

function padGrad(n: Node, g: Tensor): (Tensor | null)[] {
  const x = n.inputs[0];
  const pads = readInts(n.inputs[1]);
  let r = g;
  for (let a = 0; a < x.rank; a++) if (pads[a] || pads[a + x.rank]) r = o.slice(r, a, pads[a], pads[a] + x.shape[a]);
  return [r, null];
}

function readInts(t: Tensor): number[] {
  if (t.source.kind !== 'const') throw new Error('gradient rule: expected a constant int tensor');
  return Array.from(t.source.value.data as BigInt64Array, Number);
}

function concatGrad(n: Node, g: Tensor): Tensor[] {
  const axis = (n.attrs.axis as { i: number }).i;
  let start = 0;
  return n.inputs.map((x) => {
    const piece = o.slice(g, axis, start, start + x.shape[axis]);
    start += x.shape[axis];
    return piece;
  });
}

function sliceGrad(n: Node, g: Tensor): (Tensor | null)[] {
  const x = n.inputs[0];
  const { axis, start, end } = n.meta as { axis: number; start: number; end: number };
  const pads = new Array<number>(2 * x.rank).fill(0);
  pads[axis] = start;
  pads[axis + x.rank] = x.shape[axis] - end;
  return [o.pad(g, pads), null, null, null];
}

export const GRADIENTS: Record<string, GradRule | 'nondiff'> = {
  Add: (n, g) => [sumTo(g, n.inputs[0].shape), sumTo(g, n.inputs[1].shape)],
  Sub: (n, g) => [sumTo(g, n.inputs[0].shape), sumTo(o.neg(g), n.inputs[1].shape)],
  Mul: (n, g) => [sumTo(o.mul(g, n.inputs[1]), n.inputs[0].shape), sumTo(o.mul(g, n.inputs[0]), n.inputs[1].shape)],
  Div: (n, g) => {
    const [a, b] = n.inputs;
    const ga = o.div(g, b);
    return [sumTo(ga, a.shape), sumTo(o.neg(o.mul(ga, n.outputs[0])), b.shape)];
  },
  Pow: (n, g) => {
    const [a, b] = n.inputs;
    const y = n.outputs[0];
    const ga = o.mul(g, o.mul(b, o.pow(a, o.sub(b, 1))));
    return [sumTo(ga, a.shape), sumTo(o.mul(g, o.mul(y, o.log(a))), b.shape)];
  },
  Max: (n, g) => {
    const [a, b] = n.inputs;
    const pickA = o.greater(a, b); // ties send the gradient to b
    return [sumTo(o.where(pickA, g, zero(g)), a.shape), sumTo(o.where(pickA, zero(g), g), b.shape)];
  },
  Min: (n, g) => {
    const [a, b] = n.inputs;
    const pickA = o.less(a, b);
    return [sumTo(o.where(pickA, g, zero(g)), a.shape), sumTo(o.where(pickA, zero(g), g), b.shape)];
  },
  Neg: (_n, g) => [o.neg(g)],
  Exp: (n, g) => [o.mul(g, n.outputs[0])],
  Log: (n, g) => [o.div(g, n.inputs[0])],
  LogSoftmax: (n, g) => {
    const y = n.outputs[0];
    return [o.sub(g, o.mul(o.exp(y), o.reduceSum(g, [y.rank - 1], true)))];
  },
  Sqrt: (n, g) => [o.div(o.mul(g, 0.5), n.outputs[0])],
  Abs: (n, g) => [o.where(o.less(n.inputs[0], 0), o.neg(g), g)],
  Tanh: (n, g) => [o.mul(g, o.sub(1, o.mul(n.outputs[0], n.outputs[0])))],
  Sigmoid: (n, g) => [o.mul(g, o.mul(n.outputs[0], o.sub(1, n.outputs[0])))],
  // Masked by the output (y > 0 iff x > 0): the pre-activation is then dead after the forward pass,
  // so ORT can fuse Conv/MatMul + Relu. A 0/1 product rather than Where, whose scalar broadcast
  // ORT runs element by element (1.4x slower on conv maps, scripts/profile-train-step.ts).
  Relu: (n, g) => [o.mul(g, o.cast(o.greater(n.outputs[0], 0), g.dtype))],
  Softplus: (n, g) => [o.mul(g, o.sigmoid(n.inputs[0]))],
  // stopGradient is an Identity that pathNodes() never crosses (were it visited, backward() would throw).
  Identity: (n, g) => [n.meta.stop ? null : g],
  MatMul: (n, g) => {
    const [a, b] = n.inputs;
    return [
      sumTo(o.matmul(g, o.transpose(b, lastTwo(b))), a.shape),
      sumTo(o.matmul(o.transpose(a, lastTwo(a)), g), b.shape),
    ];
  },
  Conv: convGrad,
  Reshape: (n, g) => [o.reshape(g, n.inputs[0].shape), null],
  Transpose: (n, g) => {
    const perm = (n.attrs.perm as { ints: number[] }).ints;
    const inv = perm.map((_, i) => perm.indexOf(i));
    return [o.transpose(g, inv)];
  },
  Concat: concatGrad,
  Slice: sliceGrad,
  Gather: gatherGrad,
  ReduceSum: (n, g) => [reduceGrad(n, g), null],
  ReduceMean: (n, g) => {
    const x = n.inputs[0];
    const axes = n.meta.axes as number[];
    if (axes.some((a) => x.shape[a] === DYN)) throw new Error('ReduceMean gradient: reduced axis is dynamic');
    const count = axes.reduce((c, a) => c * x.shape[a], 1);
    return [o.div(reduceGrad(n, g), count), null];
  },
  Where: (n, g) => {
    const [c, a, b] = n.inputs;
    return [null, sumTo(o.where(c, g, zero(g)), a.shape), sumTo(o.where(c, zero(g), g), b.shape)];
  },
  Expand: (n, g) => [sumTo(g, n.inputs[0].shape), null],
  // No rule. backward() throws when a gradient reaches one of these from a float input on the path
  // to the loss; a gradient reaching them only through integer/bool inputs (masks, indices) stops there.
  // Integer/bool results never receive a gradient at all.
  ReduceMax: 'nondiff',
  Cast: 'nondiff',
  DequantizeLinear: 'nondiff',
  Equal: 'nondiff',
  Greater: 'nondiff',
  Less: 'nondiff',
  Not: 'nondiff',
  And: 'nondiff',
  Or: 'nondiff',
  IsNaN: 'nondiff',
  IsInf: 'nondiff',
  Shape: 'nondiff',
  Pad: padGrad,
  ConvTranspose: convTransposeGrad,
};

const isStop = (n: Node): boolean => n.op === 'Identity' && n.meta.stop === true;

/** Nodes between `wrt` and `loss` (only these need gradients) and the ids of the tensors `wrt` reaches.
 *  Nothing is reached through a stopGradient. */
function pathNodes(loss: Tensor, wrt: Tensor[]): { nodes: Node[]; reaches: Set<number> } {
  const nodes = loss.graph.nodes;
  const reaches = new Set<number>(wrt.map((t) => t.id));
  const onPath: Node[] = [];
  for (const n of nodes) {
    if (!isStop(n) && n.inputs.some((t) => reaches.has(t.id))) {
      for (const t of n.outputs) reaches.add(t.id);
      onPath.push(n);
    }
  }
  if (!reaches.has(loss.id)) return { nodes: [], reaches };
  const needed = new Set<number>([loss.id]);
  const out: Node[] = [];
  for (let i = onPath.length - 1; i >= 0; i--) {
    const n = onPath[i];
    if (!n.outputs.some((t) => needed.has(t.id))) continue;
    out.push(n);
    for (const t of n.inputs) if (reaches.has(t.id)) needed.add(t.id);
  }
  return { nodes: out, reaches }; // reverse topological order
}

/** Appends the backward pass to loss.graph; returns d loss / d t for each t in wrt (zeros if unconnected).
 *  Throws rather than give a silent zero: for an op without a rule on a float path, and for a rule that
 *  gives no gradient for a float input on the path. */
export function backward(loss: Tensor, wrt: Tensor[]): Tensor[] {
  if (!isFloat(loss.dtype) || loss.isStatic === false || loss.size !== 1) {
    throw new Error(`backward: loss must be a float scalar, got ${loss.dtype} [${loss.shape}]`);
  }
  for (const t of wrt)
    if (!isFloat(t.dtype))
      throw new Error(`backward: cannot differentiate with respect to ${t.dtype} tensor ${t.name}`);
  const graph = loss.graph;
  const seed = graph.constant(
    loss.dtype === 'float32' ? new Float32Array(1).fill(1) : new Float64Array(1).fill(1),
    loss.shape,
    loss.dtype,
  );
  const grads = new Map<number, Tensor>([[loss.id, seed]]);
  const { nodes, reaches } = pathNodes(loss, wrt);
  const floatOnPath = (t: Tensor): boolean => isFloat(t.dtype) && reaches.has(t.id);
  for (const node of nodes) {
    if (node.outputs.length !== 1)
      throw new Error(`backward: ${node.op} has ${node.outputs.length} outputs; rules handle one`);
    const g = grads.get(node.outputs[0].id);
    if (!g) continue;
    const rule = GRADIENTS[node.op];
    if (rule === undefined) throw new Error(`backward: no gradient rule for ${node.op}`);
    if (rule === 'nondiff') {
      const x = node.inputs.find(floatOnPath);
      if (x)
        throw new Error(
          `backward: ${node.op} is not differentiable ` +
            `(its float input ${x.name} depends on a differentiated tensor); ` +
            'wrap that input or its result in stopGradient',
        );
      continue; // reached only through integer/bool inputs: nothing to propagate
    }
    const gin = rule(node, g);
    node.inputs.forEach((t, i) => {
      const gi = gin[i];
      if (!gi) {
        if (floatOnPath(t))
          throw new Error(`backward: the ${node.op} rule gave no gradient for its float input ${i} (${t.name})`);
        return;
      }
      if (!isFloat(t.dtype)) return;
      if (gi.shape.length !== t.shape.length || gi.shape.some((d, j) => d !== t.shape[j])) {
        throw new Error(`backward: ${node.op} rule gave [${gi.shape}] for input [${t.shape}]`);
      }
      const prev = grads.get(t.id);
      grads.set(t.id, prev ? o.add(prev, gi) : gi);
    });
  }
  return wrt.map((t) => grads.get(t.id) ?? o.expand(graph.scalar(0, t.dtype), t.shape, t));
}
