// Layer builders and losses, all composites of primitives (so they need no gradient rules).
// Each layer declares its parameters on the tensor's graph under `name`. Browser-safe.
import { DYN, type Tensor } from './ir.ts';
import * as o from './ops.ts';
import { dlog } from '../core/dmath.ts';

export type Activation = 'relu' | 'tanh' | 'silu' | 'none';

export function activate(x: Tensor, act: Activation): Tensor {
  if (act === 'relu') return o.relu(x);
  if (act === 'tanh') return o.tanh(x);
  if (act === 'silu') return o.mul(x, o.sigmoid(x));
  return x;
}

export interface LinearOptions {
  bias?: boolean;
  /** Weight init std (default He: sqrt(2 / fanIn)). */
  std?: number;
}

/** x [..., in] -> [..., out] with weight `${name}.w` [in, out] and bias `${name}.b` [out]. */
export function linear(x: Tensor, name: string, out: number, opts: LinearOptions = {}): Tensor {
  const fanIn = x.shape[x.rank - 1];
  const w = x.graph.param(`${name}.w`, [fanIn, out], { kind: 'normal', std: opts.std ?? Math.sqrt(2 / fanIn) });
  const y = o.matmul(x, w);
  if (opts.bias === false) return y;
  return o.add(y, x.graph.param(`${name}.b`, [out], { kind: 'zeros' }));
}

export interface MlpOptions {
  act?: Activation;
  layerNorm?: boolean;
  /** Init std of the last layer (e.g. 0.01 for policy logits). */
  outStd?: number;
}

/** Hidden layers (linear [+ layer norm] + activation) and, if `out` is given, a final linear layer. */
export function mlp(x: Tensor, name: string, hidden: readonly number[], out?: number, opts: MlpOptions = {}): Tensor {
  let h = x;
  hidden.forEach((width, i) => {
    h = linear(h, `${name}.${i}`, width);
    if (opts.layerNorm) h = layerNorm(h, `${name}.${i}.ln`);
    h = activate(h, opts.act ?? 'relu');
  });
  return out === undefined ? h : linear(h, `${name}.out`, out, { std: opts.outStd });
}

/** Sum over the last axis as a MatMul with ones. ORT's ReduceSum takes SIMD paths that depend on
 *  where a row sits in memory, so a row's sum would depend on the batch it is computed in; the GEMM
 *  kernel accumulates every row in the same order wherever it sits (test/policy/batch-invariance). */
export function sumLast(x: Tensor, keepdims = false): Tensor {
  const n = x.shape[x.rank - 1];
  const y = o.matmul(x, x.graph.constant(new Array(n).fill(1), [n, 1]));
  return keepdims ? y : o.reshape(y, x.shape.slice(0, -1));
}

/** Mean over the last axis, batch-invariant like sumLast. */
export function meanLast(x: Tensor, keepdims = false): Tensor {
  const n = x.shape[x.rank - 1];
  const y = o.matmul(x, x.graph.constant(new Array(n).fill(1 / n), [n, 1]));
  return keepdims ? y : o.reshape(y, x.shape.slice(0, -1));
}

/** Normalise over the last axis, then scale `${name}.g` and shift `${name}.b`. */
export function layerNorm(x: Tensor, name: string, eps = 1e-5): Tensor {
  const d = x.shape[x.rank - 1];
  const c = o.sub(x, meanLast(x, true));
  const v = meanLast(o.mul(c, c), true);
  const y = o.div(c, o.sqrt(o.add(v, eps)));
  const g = x.graph.param(`${name}.g`, [d], { kind: 'ones' });
  const b = x.graph.param(`${name}.b`, [d], { kind: 'zeros' });
  return o.add(o.mul(y, g), b);
}

/** Token ids [...] -> vectors [..., dim] from table `${name}.table` [vocab, dim]. */
export function embedding(ids: Tensor, name: string, vocab: number, dim: number): Tensor {
  const table = ids.graph.param(`${name}.table`, [vocab, dim], { kind: 'normal', std: 1 / Math.sqrt(dim) });
  return o.gather(table, ids);
}

export interface Conv2dOptions {
  stride?: number;
  pad?: number;
}

/** NCHW conv with weight `${name}.w` [out, in, k, k] and bias `${name}.b`. ORT has no float64 Conv
 *  kernel, so float64 graphs (gradient tests) lower the same convolution to gather + matmul. */
export function conv2d(x: Tensor, name: string, out: number, k: number, opts: Conv2dOptions = {}): Tensor {
  const cin = x.shape[1];
  const g = x.graph;
  const w = g.param(`${name}.w`, [out, cin, k, k], { kind: 'normal', std: Math.sqrt(2 / (cin * k * k)) });
  const b = g.param(`${name}.b`, [out], { kind: 'zeros' });
  const s = opts.stride ?? 1;
  const p = opts.pad ?? 0;
  if (x.dtype === 'float32') return o.conv(x, w, b, { strides: [s, s], pads: [p, p, p, p] });
  return convIm2col(x, w, b, s, p);
}

function convIm2col(x: Tensor, w: Tensor, b: Tensor, s: number, p: number): Tensor {
  const [, c, h, wd] = x.shape;
  const [out, , k] = w.shape;
  const hp = h + 2 * p;
  const wp = wd + 2 * p;
  const ho = Math.floor((hp - k) / s) + 1;
  const wo = Math.floor((wp - k) / s) + 1;
  const idx: number[] = [];
  for (let oy = 0; oy < ho; oy++)
    for (let ox = 0; ox < wo; ox++) {
      for (let ky = 0; ky < k; ky++) for (let kx = 0; kx < k; kx++) idx.push((oy * s + ky) * wp + ox * s + kx);
    }
  const padded = p ? o.pad(x, [0, 0, p, p, 0, 0, p, p]) : x;
  const rows = o.reshape(o.transpose(padded, [2, 3, 0, 1]), [hp * wp, DYN, c]);
  const picked = o.gather(rows, x.graph.constant(idx, [idx.length], 'int64'));
  const cols = o.transpose(o.reshape(picked, [ho * wo, k * k, DYN, c]), [2, 0, 3, 1]);
  const y = o.matmul(o.reshape(cols, [DYN, c * k * k]), o.transpose(o.reshape(w, [out, c * k * k]), [1, 0]));
  const nchw = o.transpose(o.reshape(y, [DYN, ho, wo, out]), [0, 3, 1, 2]);
  return o.add(nchw, o.reshape(b, [out, 1, 1]));
}

/** log-softmax along the last axis (one batch-invariant primitive, see ops.logSoftmax). */
export function logSoftmax(x: Tensor): Tensor {
  return o.logSoftmax(x);
}

export function softmax(x: Tensor): Tensor {
  return o.exp(logSoftmax(x));
}

/** Log-probability [B] of integer `actions` [B] under log-probabilities `logp` [B, n]. */
export function categoricalLogProb(logp: Tensor, actions: Tensor): Tensor {
  const n = logp.shape[logp.rank - 1];
  const range = logp.graph.constant(
    Array.from({ length: n }, (_, i) => i),
    [1, n],
    actions.dtype,
  );
  const hit = o.equal(o.reshape(actions, [DYN, 1]), range);
  return sumLast(o.where(hit, logp, 0));
}

/** Entropy [B] of the categorical with log-probabilities `logp` [B, n]. */
export function categoricalEntropy(logp: Tensor): Tensor {
  return o.neg(sumLast(o.mul(o.exp(logp), logp)));
}

/** Elementwise Gaussian negative log-likelihood 0.5 * (logvar + (y - mean)^2 / var + log 2 pi). */
export function gaussianNll(mean: Tensor, logvar: Tensor, target: Tensor, constant = true): Tensor {
  const d = o.sub(target, mean);
  const nll = o.mul(o.add(logvar, o.mul(o.mul(d, d), o.exp(o.neg(logvar)))), 0.5);
  return constant ? o.add(nll, 0.5 * dlog(2 * Math.PI)) : nll;
}

/** Squash `x` softly into [lo, hi] (PETS-style log-variance bounds). */
export function softClamp(x: Tensor, lo: number, hi: number): Tensor {
  const upper = o.sub(hi, o.softplus(o.sub(hi, x)));
  return o.add(lo, o.softplus(o.sub(upper, lo)));
}
