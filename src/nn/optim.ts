// In-graph AdamW: backward + global-norm clipping + bias-corrected AdamW + the NaN/Inf guard, appended
// to a loss graph so one session.run does a whole training step. Browser-safe.
import type { Graph, Tensor } from './ir.ts';
import * as o from './ops.ts';
import { backward } from './grad.ts';

export interface AdamWConfig {
  beta1?: number;
  beta2?: number;
  eps?: number;
  /** Decoupled weight decay (applied to parameters declared with decay = true). */
  weightDecay?: number;
  /** Clip the global gradient norm to this value (Infinity: no clipping). */
  maxGradNorm?: number;
}

export const ADAMW_DEFAULTS: Required<AdamWConfig> = {
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  weightDecay: 0,
  maxGradNorm: Infinity,
};

/** Names of the train-step graph's inputs and outputs. */
export const TRAIN_IO = {
  lr: 'lr',
  step: 'adam.step',
  m: (p: string) => `adam.m.${p}`,
  v: (p: string) => `adam.v.${p}`,
  out: (name: string) => `new.${name}`,
  loss: 'loss',
  gradNorm: 'grad_norm',
  finite: 'finite',
} as const;

export interface TrainGraphLayout {
  /** Parameters the optimizer updates (inputs p, adam.m.p, adam.v.p; outputs new.*). */
  trainable: string[];
  /** Parameters fed every step but never updated (normalisers and other buffers). */
  buffers: string[];
  /** The carried state: each input name and the output that replaces it after a step. */
  carried: { input: string; output: string }[];
  /** Extra outputs the caller asked for (metrics), by name. */
  metrics: string[];
}

function isFiniteScalar(x: Tensor): Tensor {
  return o.not(o.or(o.isNan(x), o.isInf(x)));
}

/**
 * Appends gradients, clipping, AdamW and the finite guard to `graph`. The step is skipped (every
 * carried tensor passes through unchanged) when the loss or the gradient norm is NaN or infinite.
 */
export function addAdamW(
  graph: Graph,
  loss: Tensor,
  config: AdamWConfig = {},
  metrics: Record<string, Tensor> = {},
): TrainGraphLayout {
  const c = { ...ADAMW_DEFAULTS, ...config };
  const trainable = graph.params.filter((p) => p.trainable);
  if (trainable.length === 0) throw new Error('addAdamW: the graph has no trainable parameters');
  const grads = backward(
    loss,
    trainable.map((p) => p.tensor),
  );

  let sq: Tensor | null = null;
  for (const g of grads) {
    const s = o.sumAll(o.mul(g, g));
    sq = sq ? o.add(sq, s) : s;
  }
  const gradNorm = o.sqrt(sq!);
  const finite = o.and(isFiniteScalar(loss.rank ? o.sumAll(loss) : loss), isFiniteScalar(gradNorm));
  const scale = Number.isFinite(c.maxGradNorm) ? o.minimum(1, o.div(c.maxGradNorm, o.add(gradNorm, 1e-6))) : null;

  const lr = graph.input(TRAIN_IO.lr, []);
  const step = graph.input(TRAIN_IO.step, []);
  const t = o.add(step, 1);
  const bc1 = o.sub(1, o.pow(graph.scalar(c.beta1), t));
  const bc2 = o.sub(1, o.pow(graph.scalar(c.beta2), t));
  const keep = (fresh: Tensor, old: Tensor): Tensor => o.where(finite, fresh, old);
  const carried: TrainGraphLayout['carried'] = [];
  const emit = (input: string, value: Tensor): void => {
    graph.output(TRAIN_IO.out(input), value);
    carried.push({ input, output: TRAIN_IO.out(input) });
  };

  trainable.forEach((p, i) => {
    const g = scale ? o.mul(grads[i], scale) : grads[i];
    const m = graph.input(TRAIN_IO.m(p.name), p.shape);
    const v = graph.input(TRAIN_IO.v(p.name), p.shape);
    const m1 = o.add(o.mul(m, c.beta1), o.mul(g, 1 - c.beta1));
    const v1 = o.add(o.mul(v, c.beta2), o.mul(o.mul(g, g), 1 - c.beta2));
    const update = o.div(o.div(m1, bc1), o.add(o.sqrt(o.div(v1, bc2)), c.eps));
    let p1 = o.sub(p.tensor, o.mul(lr, update));
    if (p.decay && c.weightDecay > 0) p1 = o.sub(p1, o.mul(o.mul(lr, c.weightDecay), p.tensor));
    emit(p.name, keep(p1, p.tensor));
    emit(TRAIN_IO.m(p.name), keep(m1, m));
    emit(TRAIN_IO.v(p.name), keep(v1, v));
  });
  emit(TRAIN_IO.step, keep(t, step));
  graph.output(TRAIN_IO.loss, loss);
  graph.output(TRAIN_IO.gradNorm, gradNorm);
  graph.output(TRAIN_IO.finite, finite);
  for (const [name, tensor] of Object.entries(metrics)) graph.output(name, tensor);
  return {
    trainable: trainable.map((p) => p.name),
    buffers: graph.params.filter((p) => !p.trainable).map((p) => p.name),
    carried,
    metrics: Object.keys(metrics),
  };
}
