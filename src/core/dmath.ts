// Pure-arithmetic elementary functions. Math.sin/cos/exp/... may differ between JS engines in the
// last bit; these use only + - * / and Math.sqrt (exactly rounded by IEEE 754), so anything that
// feeds the simulation or the rendered image is bit-identical in Node and in browsers.

const PIO2_HI = 1.5707963267341256; // pi/2 split into a short head and a tail
const PIO2_LO = 6.077100506506192e-11;
const LN2_HI = 0.6931471803691238;
const LN2_LO = 1.9082149292705877e-10;
const INV_PIO2 = 0.6366197723675814;
const INV_LN2 = Math.LOG2E;

function sinKernel(r: number): number {
  const z = r * r;
  // Taylor series to r^17, |r| <= pi/4: truncation error < 1e-17.
  return (
    r *
    (1 +
      z *
        (-1 / 6 +
          z *
            (1 / 120 +
              z *
                (-1 / 5040 +
                  z *
                    (1 / 362880 +
                      z *
                        (-1 / 39916800 +
                          z * (1 / 6227020800 + z * (-1 / 1307674368000 + z * (1 / 355687428096000)))))))))
  );
}

function cosKernel(r: number): number {
  const z = r * r;
  return (
    1 +
    z *
      (-1 / 2 +
        z *
          (1 / 24 +
            z *
              (-1 / 720 +
                z *
                  (1 / 40320 +
                    z * (-1 / 3628800 + z * (1 / 479001600 + z * (-1 / 87178291200 + z * (1 / 20922789888000))))))))
  );
}

function reduceQuadrant(x: number): [number, number] {
  const k = Math.round(x * INV_PIO2);
  const r = x - k * PIO2_HI - k * PIO2_LO;
  return [r, ((k % 4) + 4) % 4];
}

export function dsin(x: number): number {
  if (!Number.isFinite(x)) return NaN;
  const [r, q] = reduceQuadrant(x);
  if (q === 0) return sinKernel(r);
  if (q === 1) return cosKernel(r);
  if (q === 2) return -sinKernel(r);
  return -cosKernel(r);
}

export function dcos(x: number): number {
  if (!Number.isFinite(x)) return NaN;
  const [r, q] = reduceQuadrant(x);
  if (q === 0) return cosKernel(r);
  if (q === 1) return -sinKernel(r);
  if (q === 2) return -cosKernel(r);
  return sinKernel(r);
}

/** atan on |x| <= 1: two argument halvings bring |x| under tan(pi/16), then an odd Taylor series. */
function atanUnit(x: number): number {
  let t = x;
  t = t / (1 + Math.sqrt(1 + t * t));
  t = t / (1 + Math.sqrt(1 + t * t));
  const z = t * t;
  let s = 0;
  for (let n = 27; n >= 3; n -= 2) s = z * (((n - 1) / 2) % 2 === 1 ? -1 / n + s : 1 / n + s);
  return 4 * (t + t * s);
}

export function datan2(y: number, x: number): number {
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (x === 0 && y === 0) return 0;
  const pi = 2 * (PIO2_HI + PIO2_LO);
  if (Math.abs(x) >= Math.abs(y)) {
    const a = atanUnit(y / x);
    if (x > 0) return a;
    return y >= 0 ? a + pi : a - pi;
  }
  const a = atanUnit(x / y);
  return y > 0 ? pi / 2 - a : -pi / 2 - a;
}

/** 2^k for every normal exponent, built once from the IEEE bits (exact). */
const POW2 = (() => {
  const view = new DataView(new ArrayBuffer(8));
  const t = new Float64Array(2046);
  for (let k = -1022; k <= 1023; k++) {
    view.setUint32(0, (k + 1023) << 20);
    view.setUint32(4, 0);
    t[k + 1022] = view.getFloat64(0);
  }
  return t;
})();

/** 2^k for integer k, exactly. */
function pow2(k: number): number {
  if (k > 1023) return Infinity;
  if (k < -1074) return 0;
  if (k < -1022) return pow2(k + 60) * 8.673617379884035e-19; // 2^-60, exact
  return POW2[k + 1022];
}

export function dexp(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x > 709.782712893384) return Infinity;
  if (x < -745.1332191019412) return 0;
  const k = Math.round(x * INV_LN2);
  const r = x - k * LN2_HI - k * LN2_LO; // |r| <= ln2/2
  let p = 1;
  for (let n = 14; n >= 1; n--) p = 1 + (r * p) / n;
  return p * pow2(k);
}

/** Scratch bits for dlog (no allocation per call). */
const LOG_VIEW = new DataView(new ArrayBuffer(8));

export function dlog(x: number): number {
  if (Number.isNaN(x) || x < 0) return NaN;
  if (x === 0) return -Infinity;
  if (x === Infinity) return Infinity;
  const view = LOG_VIEW;
  let scale = 0;
  if (x < 2.2250738585072014e-308) {
    x *= 18014398509481984; // 2^54, exact
    scale = -54;
  }
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  let e = ((hi >>> 20) & 0x7ff) - 1023 + scale;
  view.setUint32(0, (hi & 0x000fffff) | 0x3ff00000);
  let m = view.getFloat64(0); // [1, 2)
  if (m > Math.SQRT2) {
    m /= 2;
    e += 1;
  }
  const s = (m - 1) / (m + 1); // |s| < 0.172
  const z = s * s;
  let series = 0;
  for (let n = 31; n >= 3; n -= 2) series = z * (1 / n + series);
  return 2 * (s + s * series) + e * LN2_HI + e * LN2_LO;
}

export function dpow(base: number, exponent: number): number {
  if (Number.isInteger(exponent) && Math.abs(exponent) <= 64) {
    let result = 1;
    let b = exponent < 0 ? 1 / base : base;
    let n = Math.abs(exponent);
    while (n > 0) {
      if (n & 1) result *= b;
      b *= b;
      n >>= 1;
    }
    return result;
  }
  if (base < 0) return NaN;
  return dexp(exponent * dlog(base));
}

/** Wrap an angle to [-pi, pi). */
export function wrapAngle(a: number): number {
  const twoPi = 4 * (PIO2_HI + PIO2_LO);
  const k = Math.floor((a + twoPi / 2) / twoPi);
  return a - k * twoPi;
}

export function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}
