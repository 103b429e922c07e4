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
  const trainable = trainableParams(graph);
  const grads = backward(
    loss,
    trainable.map((p) => p.tensor),
  );
  const layout = addUpdate(graph, loss, grads, config);
  for (const [name, tensor] of Object.entries(metrics)) graph.output(name, tensor);
  return { ...layout, metrics: Object.keys(metrics) };
}

/** Names of a gradient shard's outputs and of the update graph's inputs that take them. */
export const SHARD_IO = {
  grad: (p: string) => `grad.${p}`,
  loss: 'shard.loss',
  /** Input `name` of shard k in the update graph. */
  of: (k: number, name: string) => `shard${k}.${name}`,
} as const;

/** A gradient shard: the loss on a slice of the batch, its gradient for every trainable parameter
 *  and the metrics, and nothing else (the update graph sums the shards' gradients). */
export function addShardGradients(
  graph: Graph,
  loss: Tensor,
  metrics: Record<string, Tensor> = {},
): { trainable: string[]; metrics: string[] } {
  const trainable = trainableParams(graph);
  const grads = backward(
    loss,
    trainable.map((p) => p.tensor),
  );
  trainable.forEach((p, i) => graph.output(SHARD_IO.grad(p.name), grads[i]));
  graph.output(SHARD_IO.loss, loss);
  for (const [name, tensor] of Object.entries(metrics)) graph.output(name, tensor);
  return { trainable: trainable.map((p) => p.name), metrics: Object.keys(metrics) };
}

/** The update of a sharded step: the shards' gradients and losses summed (shard 0 first), then
 *  clipping, AdamW and the finite guard as addAdamW does them. `params` are the trainable
 *  parameters of the shards' graph (they become this graph's parameters). */
export function addShardedUpdate(
  graph: Graph,
  params: readonly { name: string; shape: readonly number[]; decay: boolean }[],
  shards: number,
  config: AdamWConfig = {},
): TrainGraphLayout {
  for (const p of params) graph.param(p.name, p.shape, { kind: 'zeros' }, { decay: p.decay });
  const sum = (name: string, shape: readonly number[]): Tensor => {
    let t = graph.input(SHARD_IO.of(0, name), shape);
    for (let k = 1; k < shards; k++) t = o.add(t, graph.input(SHARD_IO.of(k, name), shape));
    return t;
  };
  const grads = params.map((p) => sum(SHARD_IO.grad(p.name), p.shape));
  const loss = sum(SHARD_IO.loss, []);
  return { ...addUpdate(graph, loss, grads, config), metrics: [] };
}

function trainableParams(graph: Graph) {
  const trainable = graph.params.filter((p) => p.trainable);
  if (trainable.length === 0) throw new Error('addAdamW: the graph has no trainable parameters');
  return trainable;
}

/** Clipping, AdamW and the finite guard on given gradients of the graph's trainable parameters. */
function addUpdate(
  graph: Graph,
  loss: Tensor,
  grads: readonly Tensor[],
  config: AdamWConfig,
): Omit<TrainGraphLayout, 'metrics'> {
  const c = { ...ADAMW_DEFAULTS, ...config };
  const trainable = trainableParams(graph);
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
  return {
    trainable: trainable.map((p) => p.name),
    buffers: graph.params.filter((p) => !p.trainable).map((p) => p.name),
    carried,
  };
}
