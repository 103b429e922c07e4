// The Conv rule (ConvTranspose input-grad, dilated-Conv weight-grad) and the ConvTranspose rule (Conv
// input-grad, dilated-Conv weight-grad) run only in float32: ORT has no float64 Conv/ConvTranspose
// kernels. Each is checked against float64 central differences of a float64 JS reference; float32
// rounding bounds the achievable agreement.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { backward } from '../../src/nn/grad.ts';
import { type Attr, Graph } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { Session, floatData, tensor } from '../../src/nn/runtime.ts';
import { randValues } from './gradcheck.ts';

interface Cfg {
  n: number;
  c: number;
  h: number;
  w: number;
  out: number;
  k: number;
  s: number;
  p: number;
}

function convRef(x: Float64Array, w: Float64Array, b: Float64Array, r: Float64Array, c: Cfg): number {
  const ho = Math.floor((c.h + 2 * c.p - c.k) / c.s) + 1;
  const wo = Math.floor((c.w + 2 * c.p - c.k) / c.s) + 1;
  let loss = 0;
  for (let n = 0; n < c.n; n++)
    for (let oc = 0; oc < c.out; oc++)
      for (let oy = 0; oy < ho; oy++)
        for (let ox = 0; ox < wo; ox++) {
          let acc = b[oc];
          for (let ic = 0; ic < c.c; ic++)
            for (let ky = 0; ky < c.k; ky++)
              for (let kx = 0; kx < c.k; kx++) {
                const iy = oy * c.s + ky - c.p;
                const ix = ox * c.s + kx - c.p;
                if (iy < 0 || ix < 0 || iy >= c.h || ix >= c.w) continue;
                acc += x[((n * c.c + ic) * c.h + iy) * c.w + ix] * w[((oc * c.c + ic) * c.k + ky) * c.k + kx];
              }
          loss += acc * r[((n * c.out + oc) * ho + oy) * wo + ox];
        }
  return loss;
}

/** Normwise relative error: max |a - n| / max |n| over the tensor. */
function normwise(a: Float32Array, n: Float64Array): number {
  let err = 0;
  let scale = 0;
  for (let i = 0; i < n.length; i++) {
    err = Math.max(err, Math.abs(a[i] - n[i]));
    scale = Math.max(scale, Math.abs(n[i]));
  }
  return err / scale;
}

async function check(c: Cfg): Promise<number> {
  const rng = new Rng(c.k * 100 + c.s * 10 + c.p, 5);
  const g = new Graph('float32');
  const x = g.input('x', [c.n, c.c, c.h, c.w]);
  const w = g.input('w', [c.out, c.c, c.k, c.k]);
  const b = g.input('b', [c.out]);
  const y = o.conv(x, w, b, { strides: [c.s, c.s], pads: [c.p, c.p, c.p, c.p] });
  const r64 = randValues(rng, y.size, 0.5);
  const loss = o.sumAll(o.mul(y, g.constant(Float32Array.from(r64), y.shape)));
  backward(loss, [x, w, b]).forEach((gr, i) => g.output(`g${i}`, gr));
  const vals = [randValues(rng, x.size), randValues(rng, w.size), randValues(rng, b.size)];
  // Round the inputs to float32 so both sides see the same function.
  const v64 = vals.map((v) => Float64Array.from(Float32Array.from(v)));
  const r = Float64Array.from(Float32Array.from(r64));
  const s = await Session.create(writeOnnx(g));
  const out = await s.run({
    x: tensor('float32', Float32Array.from(v64[0]), x.shape),
    w: tensor('float32', Float32Array.from(v64[1]), w.shape),
    b: tensor('float32', Float32Array.from(v64[2]), b.shape),
  });
  await s.close();
  let worst = 0;
  for (let k = 0; k < 3; k++) {
    const numeric = new Float64Array(v64[k].length);
    for (let j = 0; j < numeric.length; j++) {
      const up = v64.map((v) => v.slice());
      const dn = v64.map((v) => v.slice());
      up[k][j] += 1e-4;
      dn[k][j] -= 1e-4;
      numeric[j] = (convRef(up[0], up[1], up[2], r, c) - convRef(dn[0], dn[1], dn[2], r, c)) / 2e-4;
    }
    worst = Math.max(worst, normwise(floatData(out[`g${k}`]) as Float32Array, numeric));
  }
  return worst;
}

describe('Conv gradient rule (float32 vs float64 reference)', () => {
  const cfgs: Cfg[] = [
    { n: 2, c: 2, h: 6, w: 6, out: 3, k: 3, s: 1, p: 1 },
    { n: 2, c: 3, h: 7, w: 7, out: 2, k: 3, s: 2, p: 1 }, // stride leaves a row: output_padding + weight slice
    { n: 1, c: 2, h: 8, w: 6, out: 2, k: 4, s: 2, p: 0 },
    { n: 2, c: 1, h: 9, w: 9, out: 2, k: 5, s: 3, p: 2 },
    { n: 2, c: 2, h: 8, w: 9, out: 2, k: 3, s: 2, p: 0 }, // weight grad must cut an input row
    { n: 1, c: 2, h: 11, w: 11, out: 2, k: 2, s: 4, p: 1 }, // ... the end padding and input columns
  ];
  for (const c of cfgs) {
    it(`k${c.k} s${c.s} p${c.p} on ${c.h}x${c.w}`, async () => {
      const err = await check(c);
      console.log(`conv k${c.k} s${c.s} p${c.p}: normwise relative error ${err.toExponential(2)}`);
      expect(err).toBeLessThanOrEqual(1e-5);
    });
  }
});

// ConvTranspose: every combination the op supports (strides, asymmetric pads, output_padding < stride,
// per-axis values; no dilation, groups or bias), with output_padding both inside and beyond the end pad.
interface TCfg {
  n: number;
  cin: number;
  cout: number;
  h: number;
  w: number;
  kh: number;
  kw: number;
  s: [number, number];
  p: [number, number, number, number];
  op: [number, number];
}

function tOut(c: TCfg): [number, number] {
  return [(c.h - 1) * c.s[0] - c.p[0] - c.p[2] + c.kh + c.op[0], (c.w - 1) * c.s[1] - c.p[1] - c.p[3] + c.kw + c.op[1]];
}

/** y[n, oc, iy*s + ky - pt, ix*s + kx - pl] += x[n, ic, iy, ix] * w[ic, oc, ky, kx], on the ONNX output grid. */
function convTransposeRef(x: Float64Array, w: Float64Array, c: TCfg): Float64Array {
  const [ho, wo] = tOut(c);
  const y = new Float64Array(c.n * c.cout * ho * wo);
  for (let n = 0; n < c.n; n++)
    for (let ic = 0; ic < c.cin; ic++)
      for (let iy = 0; iy < c.h; iy++)
        for (let ix = 0; ix < c.w; ix++) {
          const xv = x[((n * c.cin + ic) * c.h + iy) * c.w + ix];
          for (let oc = 0; oc < c.cout; oc++)
            for (let ky = 0; ky < c.kh; ky++)
              for (let kx = 0; kx < c.kw; kx++) {
                const oy = iy * c.s[0] + ky - c.p[0];
                const ox = ix * c.s[1] + kx - c.p[1];
                if (oy < 0 || ox < 0 || oy >= ho || ox >= wo) continue;
                y[((n * c.cout + oc) * ho + oy) * wo + ox] += xv * w[((ic * c.cout + oc) * c.kh + ky) * c.kw + kx];
              }
        }
  return y;
}

/** Returns [forward error, worst gradient error], both normwise relative. */
async function checkTranspose(c: TCfg): Promise<[number, number]> {
  const rng = new Rng(1000 + c.s[0] * 100 + c.p.reduce((a, b) => a * 3 + b, 0) * 10 + c.op[0] + c.op[1], 6);
  const g = new Graph('float32');
  const x = g.input('x', [c.n, c.cin, c.h, c.w]);
  const w = g.input('w', [c.cin, c.cout, c.kh, c.kw]);
  const y = o.convTranspose(x, w, c.s, c.p, c.op);
  expect(y.shape).toEqual([c.n, c.cout, ...tOut(c)]);
  const r = Float64Array.from(Float32Array.from(randValues(rng, y.size, 0.5)));
  const loss = o.sumAll(o.mul(y, g.constant(Float32Array.from(r), y.shape)));
  g.output('y', y);
  backward(loss, [x, w]).forEach((gr, i) => g.output(`g${i}`, gr));
  const v64 = [x, w].map((t) => Float64Array.from(Float32Array.from(randValues(rng, t.size))));
  const s = await Session.create(writeOnnx(g));
  const out = await s.run({
    x: tensor('float32', Float32Array.from(v64[0]), x.shape),
    w: tensor('float32', Float32Array.from(v64[1]), w.shape),
  });
  await s.close();
  const lossRef = (xv: Float64Array, wv: Float64Array): number =>
    convTransposeRef(xv, wv, c).reduce((acc, v, i) => acc + v * r[i], 0);
  const fwd = normwise(floatData(out.y) as Float32Array, convTransposeRef(v64[0], v64[1], c));
  let worst = 0;
  for (let k = 0; k < 2; k++) {
    const numeric = new Float64Array(v64[k].length);
    for (let j = 0; j < numeric.length; j++) {
      const up = v64.map((v) => v.slice());
      const dn = v64.map((v) => v.slice());
      up[k][j] += 1e-4;
      dn[k][j] -= 1e-4;
      numeric[j] = (lossRef(up[0], up[1]) - lossRef(dn[0], dn[1])) / 2e-4;
    }
    worst = Math.max(worst, normwise(floatData(out[`g${k}`]) as Float32Array, numeric));
  }
  return [fwd, worst];
}

describe('ConvTranspose gradient rule (float32 vs float64 reference)', () => {
  const cfgs: TCfg[] = [];
  const padSets: [number, number, number, number][] = [
    [0, 0, 0, 0],
    [1, 1, 1, 1],
    [2, 0, 1, 2],
  ];
  for (const st of [1, 2, 3])
    for (const p of padSets)
      for (let op = 0; op < st; op++) {
        cfgs.push({ n: 2, cin: 2, cout: 3, h: 4, w: 3, kh: 3, kw: 3, s: [st, st], p, op: [op, op] });
      }
  // Per-axis strides, output padding and non-square kernels.
  cfgs.push({ n: 1, cin: 3, cout: 2, h: 3, w: 5, kh: 2, kw: 4, s: [3, 1], p: [0, 2, 1, 0], op: [2, 0] });
  cfgs.push({ n: 2, cin: 1, cout: 2, h: 5, w: 2, kh: 4, kw: 1, s: [2, 4], p: [1, 0, 3, 0], op: [1, 3] });
  for (const c of cfgs) {
    it(`k${c.kh}x${c.kw} s${c.s} p${c.p} op${c.op} on ${c.h}x${c.w}`, async () => {
      const [fwd, err] = await checkTranspose(c);
      expect(fwd, 'forward pass vs the reference').toBeLessThanOrEqual(1e-6);
      expect(err).toBeLessThanOrEqual(1e-5);
    });
  }

  it('refuses dilated or grouped transposed convolutions instead of differentiating them wrongly', () => {
    const extra: Record<string, Attr>[] = [{ dilations: { ints: [2, 2] } }, { group: { i: 2 } }];
    for (const attrs of extra) {
      const g = new Graph('float32');
      const x = g.input('x', [1, 2, 3, 3]);
      const w = g.input('w', [2, 1, 2, 2]);
      const base = {
        strides: { ints: [1, 1] },
        pads: { ints: [0, 0, 0, 0] },
        output_padding: { ints: [0, 0] },
        kernel_shape: { ints: [2, 2] },
      };
      const [y] = g.node('ConvTranspose', [x, w], [{ dtype: 'float32', shape: [1, 1, 4, 4] }], { ...base, ...attrs });
      expect(() => backward(o.sumAll(y), [x, w])).toThrow(/ConvTranspose gradient: (dilated|grouped)/);
    }
  });
});
