// Primitive operators: each builds one standard ONNX node and infers its output shape and dtype.
// Numbers given where a tensor is expected become scalar constants of the other operand's dtype.
import { DYN, type DType, type Tensor, isFloat } from './ir.ts';

export type TL = Tensor | number;

function lift(a: TL, like: Tensor): Tensor {
  return typeof a === 'number' ? like.graph.scalar(a, like.dtype) : a;
}

function pair(a: TL, b: TL, op: string): [Tensor, Tensor] {
  if (typeof a === 'number' && typeof b === 'number') throw new Error(`${op}: needs at least one tensor`);
  const ta = typeof a === 'number' ? lift(a, b as Tensor) : a;
  const tb = typeof b === 'number' ? lift(b, ta) : b;
  if (ta.dtype !== tb.dtype) throw new Error(`${op}: dtype mismatch ${ta.dtype} vs ${tb.dtype}`);
  return [ta, tb];
}

export function normAxis(axis: number, rank: number, op: string): number {
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new Error(`${op}: axis ${axis} out of range for rank ${rank}`);
  return a;
}

/** Numpy broadcasting; a dynamic dimension broadcasts only against itself or 1. */
export function broadcastShape(a: readonly number[], b: readonly number[], op: string): number[] {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = i < n - a.length ? 1 : a[i - (n - a.length)];
    const y = i < n - b.length ? 1 : b[i - (n - b.length)];
    if (x === y || y === 1) out.push(x);
    else if (x === 1) out.push(y);
    else throw new Error(`${op}: shapes [${a}] and [${b}] do not broadcast`);
  }
  return out;
}

function binary(op: string, a: TL, b: TL, outDtype?: DType): Tensor {
  const [ta, tb] = pair(a, b, op);
  const shape = broadcastShape(ta.shape, tb.shape, op);
  return ta.graph.node(op, [ta, tb], [{ dtype: outDtype ?? ta.dtype, shape }])[0];
}

function unary(op: string, x: Tensor, requireFloat = true): Tensor {
  if (requireFloat && !isFloat(x.dtype)) throw new Error(`${op}: needs a float tensor, got ${x.dtype}`);
  return x.graph.node(op, [x], [{ dtype: x.dtype, shape: x.shape }])[0];
}

export const add = (a: TL, b: TL): Tensor => binary('Add', a, b);
export const sub = (a: TL, b: TL): Tensor => binary('Sub', a, b);
export const mul = (a: TL, b: TL): Tensor => binary('Mul', a, b);
export const div = (a: TL, b: TL): Tensor => binary('Div', a, b);
export const pow = (a: TL, b: TL): Tensor => binary('Pow', a, b);
export const maximum = (a: TL, b: TL): Tensor => binary('Max', a, b);
export const minimum = (a: TL, b: TL): Tensor => binary('Min', a, b);
export const equal = (a: TL, b: TL): Tensor => binary('Equal', a, b, 'bool');
export const greater = (a: TL, b: TL): Tensor => binary('Greater', a, b, 'bool');
export const less = (a: TL, b: TL): Tensor => binary('Less', a, b, 'bool');
export const and = (a: Tensor, b: Tensor): Tensor => binary('And', a, b, 'bool');
export const or = (a: Tensor, b: Tensor): Tensor => binary('Or', a, b, 'bool');
export const not = (x: Tensor): Tensor => unary('Not', x, false);

export const neg = (x: Tensor): Tensor => unary('Neg', x);
export const exp = (x: Tensor): Tensor => unary('Exp', x);
export const log = (x: Tensor): Tensor => unary('Log', x);
export const sqrt = (x: Tensor): Tensor => unary('Sqrt', x);
export const abs = (x: Tensor): Tensor => unary('Abs', x);
export const tanh = (x: Tensor): Tensor => unary('Tanh', x);
export const sigmoid = (x: Tensor): Tensor => unary('Sigmoid', x);
export const relu = (x: Tensor): Tensor => unary('Relu', x);
export const softplus = (x: Tensor): Tensor => unary('Softplus', x);

/** log-softmax over the last axis (ONNX LogSoftmax). ORT computes it row by row, so a row's bits do
 *  not depend on the batch around it, unlike a Log over the whole tensor, whose SIMD tail does. */
export function logSoftmax(x: Tensor): Tensor {
  if (!isFloat(x.dtype)) throw new Error(`LogSoftmax: needs a float tensor, got ${x.dtype}`);
  return x.graph.node('LogSoftmax', [x], [{ dtype: x.dtype, shape: x.shape }], { axis: { i: x.rank - 1 } })[0];
}

/** Identity whose gradient is zero (the value is treated as a constant by backward()). */
export function stopGradient(x: Tensor): Tensor {
  return x.graph.node('Identity', [x], [{ dtype: x.dtype, shape: x.shape }], {}, { stop: true })[0];
}

export function isNan(x: Tensor): Tensor {
  return x.graph.node('IsNaN', [x], [{ dtype: 'bool', shape: x.shape }])[0];
}

export function isInf(x: Tensor): Tensor {
  return x.graph.node('IsInf', [x], [{ dtype: 'bool', shape: x.shape }])[0];
}

export function cast(x: Tensor, to: DType): Tensor {
  const code = { float32: 1, uint8: 2, int32: 6, int64: 7, bool: 9, float64: 11 }[to];
  return x.graph.node('Cast', [x], [{ dtype: to, shape: x.shape }], { to: { i: code } })[0];
}

/** (x - zeroPoint) * scale for uint8 x, as float32 in one pass (image preprocessing). */
export function dequantize(x: Tensor, scale: number, zeroPoint: number): Tensor {
  if (x.dtype !== 'uint8') throw new Error(`DequantizeLinear: needs uint8 input, got ${x.dtype}`);
  const g = x.graph;
  return g.node(
    'DequantizeLinear',
    [x, g.scalar(scale, 'float32'), g.scalar(zeroPoint, 'uint8')],
    [{ dtype: 'float32', shape: x.shape }],
  )[0];
}

export function where(cond: Tensor, a: TL, b: TL): Tensor {
  if (cond.dtype !== 'bool') throw new Error(`Where: condition must be bool, got ${cond.dtype}`);
  const [ta, tb] = pair(a, b, 'Where');
  const shape = broadcastShape(broadcastShape(cond.shape, ta.shape, 'Where'), tb.shape, 'Where');
  return cond.graph.node('Where', [cond, ta, tb], [{ dtype: ta.dtype, shape }])[0];
}

/** Batched matrix product over the last two axes (both operands rank >= 2, batch axes broadcast). */
export function matmul(a: Tensor, b: Tensor): Tensor {
  if (a.rank < 2 || b.rank < 2) throw new Error(`MatMul: operands need rank >= 2, got [${a.shape}] and [${b.shape}]`);
  if (a.dtype !== b.dtype) throw new Error(`MatMul: dtype mismatch ${a.dtype} vs ${b.dtype}`);
  const [m, k] = a.shape.slice(-2);
  const [k2, n] = b.shape.slice(-2);
  if (k !== k2 || k === DYN) throw new Error(`MatMul: inner dimensions differ, [${a.shape}] x [${b.shape}]`);
  const batch = broadcastShape(a.shape.slice(0, -2), b.shape.slice(0, -2), 'MatMul');
  return a.graph.node('MatMul', [a, b], [{ dtype: a.dtype, shape: [...batch, m, n] }])[0];
}

export interface ConvOptions {
  strides?: [number, number];
  /** [top, left, bottom, right] as in ONNX. */
  pads?: [number, number, number, number];
  dilations?: [number, number];
}

function convOut(size: number, k: number, s: number, p0: number, p1: number, d: number): number {
  return Math.floor((size + p0 + p1 - d * (k - 1) - 1) / s) + 1;
}

/** 2-D convolution, NCHW input, weight [out, in, kh, kw], optional bias [out]. */
export function conv(x: Tensor, w: Tensor, bias: Tensor | null, o: ConvOptions = {}): Tensor {
  if (x.rank !== 4 || w.rank !== 4)
    throw new Error(`Conv: needs NCHW input and OIHW weight, got [${x.shape}] and [${w.shape}]`);
  if (x.shape[1] !== w.shape[1])
    throw new Error(`Conv: input has ${x.shape[1]} channels, weight expects ${w.shape[1]}`);
  const s = o.strides ?? [1, 1];
  const p = o.pads ?? [0, 0, 0, 0];
  const d = o.dilations ?? [1, 1];
  const [kh, kw] = [w.shape[2], w.shape[3]];
  const ho = convOut(x.shape[2], kh, s[0], p[0], p[2], d[0]);
  const wo = convOut(x.shape[3], kw, s[1], p[1], p[3], d[1]);
  if (ho < 1 || wo < 1) throw new Error(`Conv: kernel ${kh}x${kw} larger than padded input [${x.shape}]`);
  const inputs = bias ? [x, w, bias] : [x, w];
  const attrs = { strides: { ints: s }, pads: { ints: p }, dilations: { ints: d }, kernel_shape: { ints: [kh, kw] } };
  return x.graph.node('Conv', inputs, [{ dtype: x.dtype, shape: [x.shape[0], w.shape[0], ho, wo] }], attrs)[0];
}

/** Transposed convolution (used by the Conv gradient): weight [in, out, kh, kw]. */
export function convTranspose(
  x: Tensor,
  w: Tensor,
  strides: [number, number],
  pads: [number, number, number, number],
  outputPadding: [number, number],
): Tensor {
  const [kh, kw] = [w.shape[2], w.shape[3]];
  const h = (x.shape[2] - 1) * strides[0] - pads[0] - pads[2] + kh + outputPadding[0];
  const wd = (x.shape[3] - 1) * strides[1] - pads[1] - pads[3] + kw + outputPadding[1];
  const attrs = {
    strides: { ints: strides },
    pads: { ints: pads },
    output_padding: { ints: outputPadding },
    kernel_shape: { ints: [kh, kw] },
  };
  return x.graph.node('ConvTranspose', [x, w], [{ dtype: x.dtype, shape: [x.shape[0], w.shape[1], h, wd] }], attrs)[0];
}

/** Reshape to a static shape, or one with a single -1 standing for the dynamic batch dimension. */
export function reshape(x: Tensor, shape: readonly number[]): Tensor {
  const known = (s: readonly number[]): number => s.filter((d) => d !== DYN).reduce((a, b) => a * b, 1);
  const nDyn = shape.filter((d) => d === DYN).length;
  if (nDyn > 1 || shape.some((d) => d === 0)) throw new Error(`Reshape: bad target [${shape}]`);
  let out = [...shape];
  if (x.isStatic && nDyn === 1) {
    const rest = known(shape);
    if (x.size % rest !== 0) throw new Error(`Reshape: [${x.shape}] cannot become [${shape}]`);
    out = shape.map((d) => (d === DYN ? x.size / rest : d));
  } else if (!x.isStatic && (nDyn !== 1 || known(shape) !== known(x.shape))) {
    throw new Error(`Reshape: dynamic [${x.shape}] cannot become [${shape}]`);
  } else if (x.isStatic && known(shape) !== x.size) {
    throw new Error(`Reshape: [${x.shape}] (${x.size} elements) cannot become [${shape}]`);
  }
  return x.graph.node('Reshape', [x, x.graph.ints(shape)], [{ dtype: x.dtype, shape: out }])[0];
}

export function transpose(x: Tensor, perm: readonly number[]): Tensor {
  const sorted = [...perm].sort((a, b) => a - b);
  if (perm.length !== x.rank || sorted.some((v, i) => v !== i))
    throw new Error(`Transpose: bad perm [${perm}] for rank ${x.rank}`);
  return x.graph.node('Transpose', [x], [{ dtype: x.dtype, shape: perm.map((p) => x.shape[p]) }], {
    perm: { ints: perm },
  })[0];
}

export function concat(xs: Tensor[], axis: number): Tensor {
  if (xs.length === 0) throw new Error('Concat: no inputs');
  const rank = xs[0].rank;
  const a = normAxis(axis, rank, 'Concat');
  let total = 0;
  for (const x of xs) {
    if (x.rank !== rank || x.dtype !== xs[0].dtype) throw new Error(`Concat: inputs differ in rank or dtype`);
    x.shape.forEach((d, i) => {
      if (i !== a && d !== xs[0].shape[i])
        throw new Error(`Concat: shapes [${x.shape}] and [${xs[0].shape}] differ off axis ${a}`);
    });
    if (x.shape[a] === DYN) throw new Error('Concat: cannot concatenate along the dynamic axis');
    total += x.shape[a];
  }
  const shape = xs[0].shape.map((d, i) => (i === a ? total : d));
  return xs[0].graph.node('Concat', xs, [{ dtype: xs[0].dtype, shape }], { axis: { i: a } })[0];
}

/** Static slice [start, end) along one axis (step 1). */
export function slice(x: Tensor, axis: number, start: number, end: number): Tensor {
  const a = normAxis(axis, x.rank, 'Slice');
  const n = x.shape[a];
  if (n === DYN || start < 0 || end > n || start >= end)
    throw new Error(`Slice: [${start}, ${end}) out of range for axis ${a} of [${x.shape}]`);
  const g = x.graph;
  const shape = x.shape.map((d, i) => (i === a ? end - start : d));
  return g.node(
    'Slice',
    [x, g.ints([start]), g.ints([end]), g.ints([a])],
    [{ dtype: x.dtype, shape }],
    {},
    { axis: a, start, end },
  )[0];
}

/** Rows of `data` (axis 0) picked by integer `indices`: out shape = indices.shape ++ data.shape[1:]. */
export function gather(data: Tensor, indices: Tensor): Tensor {
  if (indices.dtype !== 'int32' && indices.dtype !== 'int64')
    throw new Error(`Gather: indices must be int32/int64, got ${indices.dtype}`);
  const shape = [...indices.shape, ...data.shape.slice(1)];
  return data.graph.node('Gather', [data, indices], [{ dtype: data.dtype, shape }], { axis: { i: 0 } })[0];
}

function reduce(op: string, x: Tensor, axes: readonly number[], keepdims: boolean): Tensor {
  const ax = [...new Set(axes.map((a) => normAxis(a, x.rank, op)))].sort((a, b) => a - b);
  const shape: number[] = [];
  x.shape.forEach((d, i) => {
    if (!ax.includes(i)) shape.push(d);
    else if (keepdims) shape.push(1);
  });
  const g = x.graph;
  return g.node(
    op,
    [x, g.ints(ax)],
    [{ dtype: x.dtype, shape }],
    { keepdims: { i: keepdims ? 1 : 0 } },
    { axes: ax, keepdims },
  )[0];
}

export const reduceSum = (x: Tensor, axes: readonly number[], keepdims = false): Tensor =>
  reduce('ReduceSum', x, axes, keepdims);
export const reduceMean = (x: Tensor, axes: readonly number[], keepdims = false): Tensor =>
  reduce('ReduceMean', x, axes, keepdims);

/** Sum of all elements as a scalar (shape []). */
export function sumAll(x: Tensor): Tensor {
  return reduceSum(
    x,
    x.shape.map((_, i) => i),
    false,
  );
}

export function meanAll(x: Tensor): Tensor {
  return reduceMean(
    x,
    x.shape.map((_, i) => i),
    false,
  );
}

/** Runtime shape of x as an int64 vector. */
export function shapeOf(x: Tensor): Tensor {
  return x.graph.node('Shape', [x], [{ dtype: 'int64', shape: [x.rank] }])[0];
}

/** Broadcast x to `shape` (static), or to the runtime shape of `like` when it has a dynamic dimension. */
export function expand(x: Tensor, shape: readonly number[], like?: Tensor): Tensor {
  const out = broadcastShape(x.shape, shape, 'Expand');
  const g = x.graph;
  const target = shape.includes(DYN) ? shapeOf(like ?? failDyn()) : g.ints(shape);
  return g.node('Expand', [x, target], [{ dtype: x.dtype, shape: out }])[0];
}

function failDyn(): never {
  throw new Error('Expand: a dynamic target shape needs a tensor to take the runtime shape from');
}

/** Zero padding: pads = [begin_0, ..., begin_n, end_0, ..., end_n]. */
export function pad(x: Tensor, pads: readonly number[]): Tensor {
  if (pads.length !== 2 * x.rank) throw new Error(`Pad: needs ${2 * x.rank} pads, got ${pads.length}`);
  const shape = x.shape.map((d, i) => (d === DYN ? DYN : d + pads[i] + pads[i + x.rank]));
  const g = x.graph;
  return g.node('Pad', [x, g.ints(pads)], [{ dtype: x.dtype, shape }], { mode: { s: 'constant' } })[0];
}
