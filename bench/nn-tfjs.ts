// The benchmark's reference: the same policy and world-model networks and losses written with
// @tensorflow/tfjs on its wasm backend (forward + backward + Adam per step), for the speed ratio.
// tfjs gets no gradient clipping and no NaN guard here, which only favours it.
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Rng } from '../src/core/rng.ts';

export interface PolicySpec {
  batch: number;
  image: number;
  conv: { out: number; k: number; stride: number; pad: number }[];
  imageFeatures: number;
  vocab: number;
  maxLength: number;
  embedDim: number;
  proprioDim: number;
  proprioHidden: number;
  trunk: number;
  heads: number[];
}

export interface WorldModelSpec {
  batch: number;
  members: number;
  stateDim: number;
  actionDim: number;
  hidden: number[];
}

/** Selects the wasm backend with its .wasm files from node_modules; returns what it runs with. */
export async function initTfjsWasm(): Promise<{ backend: string; simd: boolean; threads: boolean; wasmDir: string }> {
  const require = createRequire(import.meta.url);
  const wasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  setWasmPaths(`${wasmDir}/`);
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs: the wasm backend failed to initialise');
  await tf.ready();
  const simd = Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT'));
  const threads = Boolean(await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'));
  return { backend: tf.getBackend(), simd, threads, wasmDir };
}

function he(rng: Rng, shape: number[], fanIn: number, std = Math.sqrt(2 / fanIn)): tf.Variable {
  const n = shape.reduce((a, b) => a * b, 1);
  return tf.variable(
    tf.tensor(
      Float32Array.from({ length: n }, () => std * rng.normal()),
      shape,
    ),
  );
}
const zeros = (shape: number[]): tf.Variable => tf.variable(tf.zeros(shape));

type Pad4 = [[number, number], [number, number], [number, number], [number, number]];

/** conv2d whose filter gradient is a dilated conv2d (tfjs-wasm has no Conv2DBackpropFilter kernel):
 *  the same construction the ORT graphs use. */
export function convWithGrad(stride: number, p: number) {
  const pad: Pad4 = [
    [0, 0],
    [p, p],
    [p, p],
    [0, 0],
  ];
  const f = (x: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
    const [xt, wt] = [x as tf.Tensor4D, w as tf.Tensor4D];
    save([xt, wt]);
    return {
      value: tf.conv2d(xt, wt, stride, pad),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [xs, ws] = saved as [tf.Tensor4D, tf.Tensor4D];
        const g = dy as tf.Tensor4D;
        const dx = tf.conv2dTranspose(g, ws, xs.shape, stride, pad as never);
        const k = ws.shape[0];
        let dw = tf.conv2d(
          tf.transpose(xs, [3, 1, 2, 0]),
          tf.transpose(g, [1, 2, 0, 3]) as tf.Tensor4D,
          1,
          pad,
          'NHWC',
          stride,
        );
        dw = tf.slice(dw, [0, 0, 0, 0], [dw.shape[0], k, k, dw.shape[3]]);
        return [dx, tf.transpose(dw, [1, 2, 0, 3])];
      },
    };
  };
  return tf.customGrad(f as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (
    x: tf.Tensor4D,
    w: tf.Tensor4D,
  ) => tf.Tensor4D;
}

function dense(x: tf.Tensor2D, w: tf.Variable, b: tf.Variable): tf.Tensor2D {
  return tf.add(tf.matMul(x, w as tf.Tensor2D), b) as tf.Tensor2D;
}

export type TfStep = () => Promise<void>;

/** A policy train step (PPO-style loss, forward + backward + Adam), after one warm-up step. */
export async function tfjsPolicyStep(s: PolicySpec): Promise<TfStep> {
  const rng = new Rng(1);
  const B = s.batch;
  let c = 3;
  let hw = s.image;
  const convs = s.conv.map((l) => {
    const v = { w: he(rng, [l.k, l.k, c, l.out], l.k * l.k * c), b: zeros([l.out]), l };
    c = l.out;
    hw = Math.floor((hw + 2 * l.pad - l.k) / l.stride) + 1;
    return v;
  });
  const flat = hw * hw * c;
  const imgFc = { w: he(rng, [flat, s.imageFeatures], flat), b: zeros([s.imageFeatures]) };
  const table = he(rng, [s.vocab, s.embedDim], s.embedDim, 1 / Math.sqrt(s.embedDim));
  const textFc = { w: he(rng, [s.embedDim, s.embedDim], s.embedDim), b: zeros([s.embedDim]) };
  const propFc = { w: he(rng, [s.proprioDim, s.proprioHidden], s.proprioDim), b: zeros([s.proprioHidden]) };
  const fused = s.imageFeatures + s.embedDim + s.proprioHidden;
  const trunk = {
    w: he(rng, [fused, s.trunk], fused),
    b: zeros([s.trunk]),
    g: tf.variable(tf.ones([s.trunk])),
    beta: zeros([s.trunk]),
  };
  const heads = s.heads.map((n) => ({ w: he(rng, [s.trunk, n], s.trunk, 0.01), b: zeros([n]), n }));

  const images = tf.tensor(
    Uint8Array.from({ length: B * s.image * s.image * 3 }, () => rng.int(256)),
    [B, s.image, s.image, 3],
    'int32',
  );
  const tokens = tf.tensor2d(
    Int32Array.from({ length: B * s.maxLength }, (_, i) => (i % s.maxLength < 6 ? 2 + rng.int(s.vocab - 2) : 0)),
    [B, s.maxLength],
    'int32',
  );
  const proprio = tf.tensor2d(
    Float32Array.from({ length: B * s.proprioDim }, () => rng.range(-1, 1)),
    [B, s.proprioDim],
  );
  const actions = s.heads.map((n) =>
    tf.tensor1d(
      Int32Array.from({ length: B }, () => rng.int(n)),
      'int32',
    ),
  );
  const oldLogp = tf.tensor1d(Float32Array.from({ length: B }, () => -6 + 0.1 * rng.normal()));
  const adv = tf.tensor1d(Float32Array.from({ length: B }, () => rng.normal()));
  const opt = tf.train.adam(1e-4);

  const lossFn = (): tf.Scalar => {
    let x: tf.Tensor4D = tf.sub(tf.div(tf.cast(images, 'float32'), 255), 0.5) as tf.Tensor4D;
    for (const { w, b, l } of convs) {
      x = tf.relu(tf.add(convWithGrad(l.stride, l.pad)(x, w as tf.Tensor4D), b)) as tf.Tensor4D;
    }
    const img = tf.relu(dense(tf.reshape(x, [B, flat]), imgFc.w, imgFc.b));
    // tfjs-wasm has no UnsortedSegmentSum kernel (Gather's gradient): embed via a one-hot product.
    const onehot = tf.oneHot(tf.reshape(tokens, [B * s.maxLength]) as tf.Tensor1D, s.vocab);
    const emb = tf.reshape(tf.matMul(onehot, table as tf.Tensor2D), [B, s.maxLength, s.embedDim]) as tf.Tensor3D;
    const mask = tf.cast(tf.notEqual(tokens, 0), 'float32');
    const wts = tf.div(mask, tf.maximum(tf.sum(mask, 1, true), 1));
    const text = tf.relu(dense(tf.sum(tf.mul(emb, tf.expandDims(wts, 2)), 1) as tf.Tensor2D, textFc.w, textFc.b));
    const prop = tf.relu(dense(proprio, propFc.w, propFc.b));
    const h0 = dense(tf.concat([img, text, prop], 1), trunk.w, trunk.b);
    const { mean, variance } = tf.moments(h0, 1, true);
    const h = tf.relu(
      tf.add(tf.mul(tf.div(tf.sub(h0, mean), tf.sqrt(tf.add(variance, 1e-5))), trunk.g), trunk.beta),
    ) as tf.Tensor2D;
    let logp: tf.Tensor = tf.zeros([B]);
    let ent: tf.Tensor = tf.zeros([B]);
    heads.forEach((hd, i) => {
      const lp = tf.logSoftmax(dense(h, hd.w, hd.b));
      logp = tf.add(logp, tf.sum(tf.mul(lp, tf.oneHot(actions[i], hd.n)), 1));
      ent = tf.sub(ent, tf.sum(tf.mul(tf.exp(lp), lp), 1));
    });
    const ratio = tf.exp(tf.sub(logp, oldLogp));
    const surr = tf.minimum(tf.mul(ratio, adv), tf.mul(tf.clipByValue(ratio, 0.8, 1.2), adv));
    return tf.sub(tf.neg(tf.mean(surr)), tf.mul(tf.mean(ent), 0.01)) as tf.Scalar;
  };
  return stepper(() => opt.minimize(lossFn, true)!);
}

/** A world-model train step (K-member ensemble, Gaussian NLL), after one warm-up step. */
export async function tfjsWorldModelStep(s: WorldModelSpec): Promise<TfStep> {
  const rng = new Rng(2);
  const K = s.members;
  const N = s.batch;
  let fan = s.stateDim + s.actionDim;
  const layers = [...s.hidden, 2 * s.stateDim].map((width, i, all) => {
    const l = {
      w: he(rng, [K, fan, width], fan, i === all.length - 1 ? Math.sqrt(1 / fan) : undefined),
      b: zeros([K, 1, width]),
    };
    fan = width;
    return l;
  });
  const x = tf.tensor3d(
    Float32Array.from({ length: K * N * (s.stateDim + s.actionDim) }, () => rng.normal()),
    [K, N, s.stateDim + s.actionDim],
  );
  const y = tf.tensor3d(
    Float32Array.from({ length: K * N * s.stateDim }, () => rng.normal()),
    [K, N, s.stateDim],
  );
  const opt = tf.train.adam(1e-3);
  const lossFn = (): tf.Scalar => {
    let h: tf.Tensor3D = x;
    layers.forEach((l, i) => {
      const z = tf.add(tf.matMul(h, l.w as tf.Tensor3D), l.b) as tf.Tensor3D;
      h = i === layers.length - 1 ? z : (tf.mul(z, tf.sigmoid(z)) as tf.Tensor3D);
    });
    const mean = tf.slice(h, [0, 0, 0], [K, N, s.stateDim]);
    const raw = tf.slice(h, [0, 0, s.stateDim], [K, N, s.stateDim]);
    const upper = tf.sub(1, tf.softplus(tf.sub(1, raw)));
    const logvar = tf.add(-10, tf.softplus(tf.sub(upper, -10)));
    const d = tf.sub(y, mean);
    return tf.mean(tf.mul(tf.add(logvar, tf.mul(tf.square(d), tf.exp(tf.neg(logvar)))), 0.5)) as tf.Scalar;
  };
  return stepper(() => opt.minimize(lossFn, true)!);
}

async function stepper(step: () => tf.Scalar): Promise<TfStep> {
  const run = async (): Promise<void> => {
    const loss = step();
    await loss.data();
    loss.dispose();
  };
  await run(); // warm-up (kernel setup)
  return run;
}
