import { dcos, dlog, dsin } from './dmath.ts';

/** Seeded PRNG (sfc32 over 32-bit integer math): identical streams on every JS engine. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    // splitmix32 expands (seed, stream) into the 128-bit state.
    let s = (seed ^ Math.imul(stream + 0x9e3779b9, 0x85ebca6b)) >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Uniform integer in [0, 2^32). */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  uniform(): number {
    const hi = this.u32() >>> 5;
    const lo = this.u32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform();
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!Number.isInteger(n) || n <= 0) throw new RangeError(`Rng.int: n must be a positive integer, got ${n}`);
    return Math.floor(this.uniform() * n);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty list');
    return items[this.int(items.length)];
  }

  /** Standard normal sample (Box-Muller with the project's deterministic log/cos). */
  normal(): number {
    const u1 = 1 - this.uniform();
    const u2 = this.uniform();
    return Math.sqrt(-2 * dlog(u1)) * dcos(2 * Math.PI * u2);
  }

  /** Pair of independent standard normals. */
  normal2(): [number, number] {
    const u1 = 1 - this.uniform();
    const u2 = this.uniform();
    const r = Math.sqrt(-2 * dlog(u1));
    return [r * dcos(2 * Math.PI * u2), r * dsin(2 * Math.PI * u2)];
  }

  /** Sample an index from unnormalised non-negative weights. */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i];
    let u = this.uniform() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i];
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}
