// The Conv rule (ConvTranspose input-grad, dilated-Conv weight-grad) runs only in float32: ORT has no
// float64 Conv/ConvTranspose kernels. It is checked against float64 central differences of a float64
// JS reference convolution; float32 rounding bounds the achievable agreement.
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { backward } from '../../src/nn/grad.ts';
import { Graph } from '../../src/nn/ir.ts';
import * as o from '../../src/nn/ops.ts';
import { writeOnnx } from '../../src/nn/onnx.ts';
import { Session, floatData, tensor } from '../../src/nn/runtime.ts';
import { randValues } from './gradcheck.ts';

interface Cfg { n: number; c: number; h: number; w: number; out: number; k: number; s: number; p: number }

function convRef(x: Float64Array, w: Float64Array, b: Float64Array, r: Float64Array, c: Cfg): number {
  const ho = Math.floor((c.h + 2 * c.p - c.k) / c.s) + 1;
  const wo = Math.floor((c.w + 2 * c.p - c.k) / c.s) + 1;
  let loss = 0;
  for (let n = 0; n < c.n; n++) for (let oc = 0; oc < c.out; oc++) for (let oy = 0; oy < ho; oy++) for (let ox = 0; ox < wo; ox++) {
    let acc = b[oc];
    for (let ic = 0; ic < c.c; ic++) for (let ky = 0; ky < c.k; ky++) for (let kx = 0; kx < c.k; kx++) {
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
  const out = await s.run({ x: tensor('float32', Float32Array.from(v64[0]), x.shape), w: tensor('float32', Float32Array.from(v64[1]), w.shape), b: tensor('float32', Float32Array.from(v64[2]), b.shape) });
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
