// The MLP family on the project's nn engine: seeded init, AdamW, `epochs` passes over the training
// rows in minibatches of MLP_BATCH (or all rows when fewer) shuffled from Rng([seed, epoch]), one ORT
// thread, so a run is bit-for-bit repeatable. The train graph has a static batch (the mean's gradient
// needs it): an epoch's last batch is filled up from the start of that epoch's order.
// Classification minimises cross-entropy; regression the squared error of the standardised target.
import { Rng } from '../core/rng.ts';
import { DYN, Graph } from '../nn/ir.ts';
import { categoricalLogProb, logSoftmax, mlp } from '../nn/layers.ts';
import * as o from '../nn/ops.ts';
import { ParamStore } from '../nn/params.ts';
import { floatData, tensor } from '../nn/runtime.ts';
import { ForwardSession, type LossBuild, TrainSession } from '../nn/train.ts';

export const MLP_BATCH = 64;

export interface MlpConfig {
  hidden: number;
  layers: number;
  epochs: number;
  lr: number;
  /** Classes (0: regression). */
  classes: number;
  seed: number;
}

function net(g: Graph, batch: number, dim: number, c: MlpConfig): ReturnType<typeof mlp> {
  const x = g.input('x', [batch, dim]);
  return mlp(x, 'mlp', new Array(c.layers).fill(c.hidden), Math.max(1, c.classes));
}

function lossBuilder(batch: number, dim: number, c: MlpConfig): (g: Graph) => LossBuild {
  return (g) => {
    const out = net(g, batch, dim, c);
    if (c.classes > 0) {
      const y = g.input('y', [batch], 'int32');
      return { loss: o.neg(o.meanAll(categoricalLogProb(logSoftmax(out), y))) };
    }
    const y = g.input('y', [batch, 1]);
    const d = o.sub(out, y);
    return { loss: o.meanAll(o.mul(d, d)) };
  };
}

function rowsTensor(x: readonly number[][], rows: readonly number[], dim: number): ReturnType<typeof tensor> {
  const data = new Float32Array(rows.length * dim);
  rows.forEach((r, i) => data.set(x[r], i * dim));
  return tensor('float32', data, [rows.length, dim]);
}

/** Trains on (x, y) and returns the predictions (class index or value) for each set in `evals`. */
export async function fitPredictMlp(
  x: number[][],
  y: number[],
  evals: number[][][],
  c: MlpConfig,
): Promise<number[][]> {
  const dim = x[0].length;
  const batch = Math.min(MLP_BATCH, x.length);
  const g = new Graph();
  lossBuilder(batch, dim, c)(g);
  const params = ParamStore.init(g.params, c.seed);
  const mean = c.classes ? 0 : y.reduce((a, b) => a + b, 0) / y.length;
  const std = c.classes ? 1 : Math.sqrt(y.reduce((s, v) => s + (v - mean) ** 2, 0) / y.length) || 1;
  const target = (rows: number[]): ReturnType<typeof tensor> =>
    c.classes
      ? tensor(
          'int32',
          Int32Array.from(rows, (r) => y[r]),
          [rows.length],
        )
      : tensor(
          'float32',
          Float32Array.from(rows, (r) => (y[r] - mean) / std),
          [rows.length, 1],
        );
  const session = await TrainSession.create(lossBuilder(batch, dim, c), params, {
    optimizer: { maxGradNorm: 10 },
    threads: 1,
  });
  let trained: ParamStore;
  try {
    for (let epoch = 0; epoch < c.epochs; epoch++) {
      const order = new Rng([c.seed, epoch], 0x3a1b).shuffle(Array.from({ length: x.length }, (_, i) => i));
      for (let s = 0; s < order.length; s += batch) {
        const rows = Array.from({ length: batch }, (_, i) => order[(s + i) % order.length]);
        await session.step({ x: rowsTensor(x, rows, dim), y: target(rows) }, c.lr);
      }
    }
    trained = session.params();
  } finally {
    await session.close();
  }
  const fwd = await ForwardSession.create((fg) => ({ out: net(fg, DYN, dim, c) }), trained, { threads: 1 });
  try {
    const preds: number[][] = [];
    for (const e of evals) {
      const out = floatData(
        (
          await fwd.run({
            x: rowsTensor(
              e,
              e.map((_, i) => i),
              dim,
            ),
          })
        ).out,
      );
      preds.push(c.classes ? argmaxRows(out, c.classes) : Array.from(out, (v) => v * std + mean));
    }
    return preds;
  } finally {
    await fwd.close();
  }
}

function argmaxRows(out: ArrayLike<number>, k: number): number[] {
  const n = out.length / k;
  return Array.from({ length: n }, (_, i) => {
    let best = 0;
    for (let j = 1; j < k; j++) if (out[i * k + j] > out[i * k + best]) best = j;
    return best;
  });
}
