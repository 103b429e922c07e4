import { dcos, dlog } from './dmath.ts';

/** murmur3's 32-bit finaliser. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Hashes a key of integers (each a safe integer) with `lane` into 32 bits, word by word. */
function hashKey(words: readonly number[], stream: number, lane: number): number {
  let h = fmix32(Math.imul(lane + 1, 0x9e3779b9) ^ stream);
  for (const w of words) {
    h = fmix32((h ^ (w >>> 0)) + 0x7f4a7c15);
    h = fmix32((h ^ (Math.floor(w / 4294967296) >>> 0)) + 0x2545f491);
  }
  return h;
}

/** The `purpose` words of drawRng: one per consumer of random draws. */
export const DRAW = {
  policySample: 0x501c,
  tokenNoise: 0x5e4,
  randomPolicy: 0x7a4d,
  worldModelMember: 0x3e3b,
  reservoir: 0x4e5e,
  groupStart: 0x5747,
  equalRewardRows: 0x6e71,
  expertShare: 0xda66,
} as const;

/** The generator of one random draw site: `purpose` names the consumer (policy sampling, token noise,
 *  member choice ...), `episode` the episode's key and `step` its step, so an episode's draws never
 *  depend on how episodes are batched, ordered or split across workers (docs/run-state.md#determinism). */
export function drawRng(seed: number, episode: number, step: number, purpose: number): Rng {
  return new Rng([seed, episode, step], purpose);
}

/** Seeded PRNG (sfc32 over 32-bit integer math): identical streams on every JS engine. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` may be a key, a list of integers such as [seed, episode, step]: every word is mixed into
   *  all 128 state bits, so keys that differ in any word give unrelated streams. */
  constructor(seed: number | readonly number[], stream = 0) {
    if (typeof seed !== 'number') {
      for (const w of seed)
        if (!Number.isSafeInteger(w)) throw new RangeError(`Rng: key words must be safe integers, got ${w}`);
      [this.a, this.b, this.c, this.d] = [0, 1, 2, 3].map((lane) => hashKey(seed, stream, lane));
      for (let i = 0; i < 12; i++) this.u32();
      return;
    }
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
