import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { dsin } from '../../src/core/dmath.ts';
import { Graph } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import * as L from '../../src/nn/layers.ts';
import { ParamStore } from '../../src/nn/params.ts';
import { type ShardHost, TrainSession } from '../../src/nn/train.ts';
import { Session, tensor } from '../../src/nn/runtime.ts';

const bytesOf = (a: Float32Array | Float64Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

async function makeSession(
  build: (g: Graph) => { loss: ReturnType<typeof o.add> },
  seed: number,
  opts = {},
): Promise<TrainSession> {
  const g = new Graph();
  build(g);
  return TrainSession.create((gr) => build(gr), ParamStore.init(g.params, seed), opts);
}

describe('training', () => {
  it('drives a small regression problem to near-zero loss', async () => {
    const n = 128;
    const rng = new Rng(11);
    const xs = new Float32Array(n * 2);
    const ys = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const a = rng.range(-1, 1);
      const b = rng.range(-1, 1);
      xs.set([a, b], 2 * i);
      ys[i] = dsin(2 * a) * b + 0.3 * a;
    }
    const build = (g: Graph) => {
      const d = o.sub(L.mlp(g.input('x', [n, 2]), 'net', [64, 64], 1, { act: 'tanh' }), g.input('y', [n, 1]));
      return { loss: o.meanAll(o.mul(d, d)) };
    };
    const ts = await makeSession(build, 3, { optimizer: { maxGradNorm: 1 } });
    const data = { x: tensor('float32', xs, [n, 2]), y: tensor('float32', ys, [n, 1]) };
    let first = 0;
    let last = 0;
    for (let s = 0; s < 1500; s++) {
      const r = await ts.step(data, s < 1000 ? 3e-3 : 1e-3);
      if (s === 0) first = r.loss;
      last = r.loss;
    }
    await ts.close();
    console.log(`regression MSE ${first.toExponential(2)} -> ${last.toExponential(2)}`);
    expect(last).toBeLessThan(2e-4);
    expect(last).toBeLessThan(first / 100);
  });

  it('drives a small 3-class classification problem to near-zero cross-entropy', async () => {
    const n = 96;
    const rng = new Rng(5);
    const xs = new Float32Array(n * 2);
    const labels = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const k = i % 3;
      const t = rng.range(0.2, 1);
      const ang = 2.1 * k + 2.5 * t;
      xs.set([t * dsin(ang + Math.PI / 2) + 0.02 * rng.normal(), t * dsin(ang) + 0.02 * rng.normal()], 2 * i);
      labels[i] = k;
    }
    const build = (g: Graph) => {
      const logp = L.logSoftmax(L.mlp(g.input('x', [n, 2]), 'clf', [64, 64], 3));
      return { loss: o.neg(o.meanAll(L.categoricalLogProb(logp, g.input('label', [n], 'int32')))) };
    };
    const ts = await makeSession(build, 9);
    const data = { x: tensor('float32', xs, [n, 2]), label: tensor('int32', labels, [n]) };
    let last = 0;
    for (let s = 0; s < 1500; s++) last = (await ts.step(data, 1e-2)).loss;
    await ts.close();
    console.log(`spiral cross-entropy after 1500 steps: ${last.toExponential(2)}`);
    expect(last).toBeLessThan(0.02);
  });
});

describe('determinism', () => {
  it('same seed and data give bit-identical parameters after training (1 and 2 threads)', async () => {
    const n = 32;
    const build = (g: Graph) => {
      const logp = L.logSoftmax(L.mlp(L.layerNorm(g.input('x', [n, 8]), 'ln'), 'net', [64, 64], 5));
      return { loss: o.neg(o.meanAll(L.categoricalLogProb(logp, g.input('k', [n], 'int32')))) };
    };
    const rng = new Rng(8);
    const data = {
      x: tensor(
        'float32',
        Float32Array.from({ length: n * 8 }, () => rng.normal()),
        [n, 8],
      ),
      k: tensor(
        'int32',
        Int32Array.from({ length: n }, () => rng.int(5)),
        [n],
      ),
    };
    const run = async (threads: number): Promise<ParamStore> => {
      const ts = await makeSession(build, 12, { threads, optimizer: { maxGradNorm: 1, weightDecay: 0.01 } });
      for (let s = 0; s < 30; s++) await ts.step(data, 1e-2);
      const p = ts.params();
      await ts.close();
      return p;
    };
    for (const threads of [1, 2]) {
      const [a, b] = [await run(threads), await run(threads)];
      for (const name of a.names) expect(bytesOf(b.get(name))).toEqual(bytesOf(a.get(name)));
    }
  });
});

describe('AdamW', () => {
  // loss = sum((x w - y)^2) in float64 with a JS reference optimizer: bias correction, decoupled weight
  // decay (weights only), global-norm clipping and a learning-rate schedule fed as an input.
  it('matches a float64 reference implementation step for step', async () => {
    const X = [
      [0.5, -1, 2],
      [1.5, 0.25, -0.5],
    ];
    const Y = [
      [1, -2],
      [0.5, 3],
    ];
    const build = (g: Graph) => {
      const w = g.param('w', [3, 2], { kind: 'normal', std: 1 });
      const b = g.param('b', [2], { kind: 'normal', std: 1 });
      const d = o.sub(o.add(o.matmul(g.input('x', [2, 3]), w), b), g.input('y', [2, 2]));
      return { loss: o.sumAll(o.mul(d, d)) };
    };
    const g0 = new Graph('float64');
    build(g0);
    const params = ParamStore.init(g0.params, 4, 'float64');
    const cfg = { beta1: 0.8, beta2: 0.95, eps: 1e-6, weightDecay: 0.1, maxGradNorm: 2 };
    const ts = await TrainSession.create(build, params, { optimizer: cfg });
    const w = Array.from(params.get('w'));
    const b = Array.from(params.get('b'));
    const m = [new Array(6).fill(0), new Array(2).fill(0)];
    const v = [new Array(6).fill(0), new Array(2).fill(0)];
    const feeds = {
      x: tensor('float64', Float64Array.from(X.flat()), [2, 3]),
      y: tensor('float64', Float64Array.from(Y.flat()), [2, 2]),
    };
    for (let t = 1; t <= 6; t++) {
      const lr = 0.05 / t;
      const gw = new Array(6).fill(0);
      const gb = [0, 0];
      for (let i = 0; i < 2; i++)
        for (let j = 0; j < 2; j++) {
          const d = X[i][0] * w[j] + X[i][1] * w[2 + j] + X[i][2] * w[4 + j] + b[j] - Y[i][j];
          for (let k = 0; k < 3; k++) gw[k * 2 + j] += 2 * d * X[i][k];
          gb[j] += 2 * d;
        }
      const norm = Math.sqrt([...gw, ...gb].reduce((s, x) => s + x * x, 0));
      const scale = Math.min(1, cfg.maxGradNorm / (norm + 1e-6));
      [
        [w, gw, 0, true],
        [b, gb, 1, false],
      ].forEach(([p, gr, k, decay]) => {
        const P = p as number[];
        (gr as number[]).forEach((gv, i) => {
          const gc = gv * scale;
          m[k as number][i] = cfg.beta1 * m[k as number][i] + (1 - cfg.beta1) * gc;
          v[k as number][i] = cfg.beta2 * v[k as number][i] + (1 - cfg.beta2) * gc * gc;
          const upd =
            m[k as number][i] / (1 - cfg.beta1 ** t) / (Math.sqrt(v[k as number][i] / (1 - cfg.beta2 ** t)) + cfg.eps);
          P[i] = P[i] - lr * upd - (decay ? lr * cfg.weightDecay * P[i] : 0);
        });
      });
      const r = await ts.step(feeds, lr);
      expect(r.gradNorm).toBeCloseTo(norm, 10);
    }
    const got = ts.params();
    await ts.close();
    Array.from(got.get('w')).forEach((x, i) => expect(Math.abs(x - w[i])).toBeLessThan(1e-12));
    Array.from(got.get('b')).forEach((x, i) => expect(Math.abs(x - b[i])).toBeLessThan(1e-12));
  });
});

describe('NaN/Inf guard', () => {
  it('a step fed a NaN leaves parameters and optimizer state bit-identical and reports it', async () => {
    const n = 8;
    const build = (g: Graph) => {
      const d = o.sub(L.mlp(g.input('x', [n, 3]), 'net', [16], 1), g.input('y', [n, 1]));
      return { loss: o.meanAll(o.mul(d, d)) };
    };
    const ts = await makeSession(build, 1);
    const x = Float32Array.from({ length: n * 3 }, (_, i) => (i % 5) / 5);
    const y = new Float32Array(n).fill(0.5);
    const good = { x: tensor('float32', x, [n, 3]), y: tensor('float32', y, [n, 1]) };
    for (let s = 0; s < 3; s++) expect((await ts.step(good, 1e-2)).finite).toBe(true);
    const before = ts.params();
    const optBefore = ts.exportOptimizer();
    const bad = x.slice();
    bad[4] = NaN;
    const r = await ts.step({ x: tensor('float32', bad, [n, 3]), y: good.y }, 1e-2);
    expect(r.finite).toBe(false);
    expect(Number.isNaN(r.loss)).toBe(true);
    const after = ts.params();
    const optAfter = ts.exportOptimizer();
    for (const name of before.names) {
      expect(bytesOf(after.get(name))).toEqual(bytesOf(before.get(name)));
      expect(bytesOf(optAfter.m.get(name)!)).toEqual(bytesOf(optBefore.m.get(name)!));
      expect(bytesOf(optAfter.v.get(name)!)).toEqual(bytesOf(optBefore.v.get(name)!));
    }
    expect(optAfter.step).toBe(3);
    const inf = y.slice();
    inf[0] = Infinity;
    expect((await ts.step({ x: good.x, y: tensor('float32', inf, [n, 1]) }, 1e-2)).finite).toBe(false);
    expect((await ts.step(good, 1e-2)).finite).toBe(true);
    expect(ts.stepCount).toBe(4);
    await ts.close();
  });
});

describe('data-parallel steps (shards)', () => {
  // Sum of squared errors over a slice divided by the whole batch's row count: slices add up.
  const rows = 32;
  const build = (batch: number) => (g: Graph) => {
    const scale = g.param('scale', [1], { kind: 'const', value: 0.5 }, { trainable: false }); // a buffer
    const x = o.mul(g.input('x', [batch, 3]), scale);
    const d = o.sub(L.mlp(x, 'net', [16], 1, { act: 'tanh' }), g.input('y', [batch, 1]));
    return { loss: o.div(o.sumAll(o.mul(d, d)), rows), metrics: { err: o.reshape(d, [batch]), sq: o.sumAll(d) } };
  };
  const rng = new Rng(4);
  const data = {
    x: tensor(
      'float32',
      Float32Array.from({ length: rows * 3 }, () => rng.range(-1, 1)),
      [rows, 3],
    ),
    y: tensor(
      'float32',
      Float32Array.from({ length: rows }, () => rng.range(-1, 1)),
      [rows, 1],
    ),
  };
  const g = new Graph();
  build(rows)(g);
  const init = ParamStore.init(g.params, 2);
  const train = async (shards: number, hosts?: ShardHost[]) => {
    const ts = await TrainSession.create(build(rows / shards), init, { shards, hosts, optimizer: { maxGradNorm: 1 } });
    const losses: number[] = [];
    let last: Awaited<ReturnType<TrainSession['step']>> | null = null;
    for (let s = 0; s < 20; s++) {
      last = await ts.step(data, 1e-2);
      losses.push(last.loss);
    }
    const params = ts.params();
    await ts.close();
    return { losses, params, last: last! };
  };
  /** A host that runs the graph in this process: where a slice runs must not matter. */
  const here: ShardHost = {
    async open(model) {
      const s = await Session.create(model);
      return { run: (feeds) => s.run(feeds), close: () => s.close() };
    },
  };

  it('slices on a host give the bits of slices run here; the metrics cover the whole batch', async () => {
    const local = await train(4);
    const hosted = await train(4, [here, here]);
    expect(hosted.losses).toEqual(local.losses);
    for (const n of local.params.names) expect(bytesOf(hosted.params.get(n))).toEqual(bytesOf(local.params.get(n)));
    expect(local.last.metrics.err.dims).toEqual([rows]);
    expect(local.last.metrics.sq.dims).toEqual([]);
  });

  it('follow the unsharded step to float32 rounding', async () => {
    const one = await train(1);
    const four = await train(4);
    for (let s = 0; s < 20; s++) expect(four.losses[s]).toBeCloseTo(one.losses[s], 5);
    for (const n of one.params.names) {
      const a = one.params.get(n);
      const b = four.params.get(n);
      for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-4);
    }
    await expect(TrainSession.create(build(rows), init, { shards: 0 })).rejects.toThrow(/shards must be/);
  });
});
