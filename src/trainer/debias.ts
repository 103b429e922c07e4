import { z } from 'zod';
import { clamp } from '../core/dmath.ts';
import { parseInput } from '../core/input-file.ts';

// Online Debiasing (the paper's form): a monotone map f from world-model rewards to
// physics rewards, refit from a FIFO of (r_wm, r_env) anchor pairs.

export const DebiasConfigSchema = z
  .object({
    capacity: z.number().int().positive().default(5000).describe('FIFO size: the newest pairs the map is fit on'),
    warmup: z
      .number()
      .int()
      .positive()
      .default(200)
      .describe('pairs seen before the first fit; the map is the identity until then'),
    refitEvery: z.number().int().positive().default(64).describe('new pairs between refits after the first fit'),
    bins: z.number().int().positive().default(10).describe('equal-width bins over r_wm in [low, high]'),
    low: z.number().default(0).describe('lower edge of the first bin'),
    high: z.number().default(1).describe('upper edge of the last bin'),
    perTask: z
      .boolean()
      .default(false)
      .describe("one map per task, fitted on that task's anchors (the trainer keeps a debiaser per task)"),
  })
  .refine((c) => c.high > c.low, { message: 'high must exceed low', path: ['high'] });
export type DebiasConfig = z.output<typeof DebiasConfigSchema>;

/** The map's knots: x strictly increasing (bin means of r_wm), y non-decreasing (PAV-fitted bin means of r_env). */
export const KnotsSchema = z
  .object({ x: z.array(z.number()).min(1), y: z.array(z.number()).min(1) })
  .refine(
    (k) =>
      k.x.length === k.y.length &&
      k.x.every((v, i) => i === 0 || v > k.x[i - 1]) &&
      k.y.every((v, i) => i === 0 || v >= k.y[i - 1]),
    { message: 'knots need equal lengths, strictly increasing x and non-decreasing y' },
  );
export type Knots = z.infer<typeof KnotsSchema>;

export const DebiasStateSchema = z
  .object({
    config: DebiasConfigSchema,
    seen: z.number().int().nonnegative(),
    refits: z.number().int().nonnegative(),
    /** FIFO contents, oldest first. */
    wm: z.array(z.number()),
    env: z.array(z.number()),
    /** null while the map is the identity (before the first fit). */
    knots: KnotsSchema.nullable(),
  })
  .refine((s) => s.wm.length === s.env.length && s.wm.length <= s.config.capacity && s.wm.length <= s.seen, {
    message: 'wm and env must have equal lengths, at most capacity and at most seen',
  });
export type DebiasState = z.infer<typeof DebiasStateSchema>;

/** Several debiasers' reports as one: pairs and refits summed, biases averaged over the pairs kept. */
export function mergeReports(reports: readonly DebiasReport[]): Omit<DebiasReport, 'knots'> {
  const fifo = reports.reduce((n, r) => n + r.fifo, 0);
  const bias = (k: 'biasBefore' | 'biasAfter') =>
    fifo ? reports.reduce((s, r) => s + (r[k] ?? 0) * r.fifo, 0) / fifo : null;
  return {
    pairs: reports.reduce((n, r) => n + r.pairs, 0),
    fifo,
    refits: reports.reduce((n, r) => n + r.refits, 0),
    biasBefore: bias('biasBefore'),
    biasAfter: bias('biasAfter'),
  };
}

export interface DebiasReport {
  /** Pairs seen in total (not only those still in the FIFO). */
  pairs: number;
  fifo: number;
  refits: number;
  /** mean(r_wm − r_env) over the FIFO; null when it is empty. */
  biasBefore: number | null;
  /** mean(f(r_wm) − r_env) over the FIFO with the current map; null when it is empty. */
  biasAfter: number | null;
  knots: Knots | null;
}

/** Pool-adjacent-violators: the weighted least-squares non-decreasing fit of `values`. */
export function pav(values: readonly number[], weights: readonly number[]): number[] {
  const blocks: { v: number; w: number; n: number }[] = [];
  for (let i = 0; i < values.length; i++) {
    blocks.push({ v: values[i], w: weights[i], n: 1 });
    while (blocks.length >= 2 && blocks[blocks.length - 2].v > blocks[blocks.length - 1].v) {
      const b = blocks.pop()!;
      const a = blocks[blocks.length - 1];
      const w = a.w + b.w;
      a.v = (a.v * a.w + b.v * b.w) / w;
      a.w = w;
      a.n += b.n;
    }
  }
  return blocks.flatMap((b) => Array<number>(b.n).fill(b.v));
}

/** Fits the map on pairs: per-bin means and counts (empty bins skipped), PAV over the bins weighted
 *  by their counts. Values outside [low, high] fall in the first or last bin. Null for no pairs. */
export function fitMap(wm: readonly number[], env: readonly number[], config: DebiasConfig): Knots | null {
  const { bins, low, high } = config;
  const sx = new Float64Array(bins),
    sy = new Float64Array(bins),
    n = new Float64Array(bins);
  for (let i = 0; i < wm.length; i++) {
    const b = clamp(Math.floor(((wm[i] - low) / (high - low)) * bins), 0, bins - 1);
    sx[b] += wm[i];
    sy[b] += env[i];
    n[b] += 1;
  }
  const x: number[] = [],
    y: number[] = [],
    w: number[] = [];
  for (let b = 0; b < bins; b++) {
    if (n[b] === 0) continue;
    x.push(sx[b] / n[b]);
    y.push(sy[b] / n[b]);
    w.push(n[b]);
  }
  return x.length ? { x, y: pav(y, w) } : null;
}

/** f(r): linear interpolation between knots, constant beyond the first and last; identity without knots. */
export function applyMap(knots: Knots | null, r: number): number {
  if (!knots) return r;
  const { x, y } = knots;
  const last = x.length - 1;
  if (r <= x[0]) return y[0];
  if (r >= x[last]) return y[last];
  let i = 1;
  while (x[i] < r) i++;
  const t = (r - x[i - 1]) / (x[i] - x[i - 1]);
  return y[i - 1] + t * (y[i] - y[i - 1]);
}

function finite(name: string, v: number): void {
  if (!Number.isFinite(v)) throw new RangeError(`Debiaser: ${name} must be finite, got ${v}`);
}

export class Debiaser {
  readonly config: DebiasConfig;
  private seen = 0;
  private refits = 0;
  private wm: number[] = [];
  private env: number[] = [];
  private knots: Knots | null = null;

  constructor(config: z.input<typeof DebiasConfigSchema> = {}) {
    this.config = DebiasConfigSchema.parse(config);
  }

  /** Adds one anchor pair; refits at pair `warmup` and then every `refitEvery` pairs (counting all
   *  pairs seen, so the cadence does not depend on the FIFO being full). Returns whether it refit. */
  add(rWm: number, rEnv: number): boolean {
    finite('r_wm', rWm);
    finite('r_env', rEnv);
    this.wm.push(rWm);
    this.env.push(rEnv);
    if (this.wm.length > this.config.capacity) {
      this.wm.shift();
      this.env.shift();
    }
    this.seen++;
    const { warmup, refitEvery } = this.config;
    if (this.seen < warmup || (this.seen - warmup) % refitEvery !== 0) return false;
    this.knots = fitMap(this.wm, this.env, this.config);
    this.refits++;
    return true;
  }

  /** f(r) clamped to [0, 1] (the reward range); before the first fit f is the identity. */
  map(r: number): number {
    finite('r', r);
    return clamp(applyMap(this.knots, r), 0, 1);
  }

  report(): DebiasReport {
    const n = this.wm.length;
    let before = 0,
      after = 0;
    for (let i = 0; i < n; i++) {
      before += this.wm[i] - this.env[i];
      after += this.map(this.wm[i]) - this.env[i];
    }
    return {
      pairs: this.seen,
      fifo: n,
      refits: this.refits,
      biasBefore: n ? before / n : null,
      biasAfter: n ? after / n : null,
      knots: this.knots && { x: [...this.knots.x], y: [...this.knots.y] },
    };
  }

  toState(): DebiasState {
    const knots = this.knots && { x: [...this.knots.x], y: [...this.knots.y] };
    return {
      config: { ...this.config },
      seen: this.seen,
      refits: this.refits,
      wm: [...this.wm],
      env: [...this.env],
      knots,
    };
  }

  /** Restores a state from toState (e.g. parsed from a checkpoint's JSON);
   *  bad state is an InputError naming the field. */
  static fromState(state: unknown): Debiaser {
    const s = parseInput(state, DebiasStateSchema, 'debias state');
    const d = new Debiaser(s.config);
    d.seen = s.seen;
    d.refits = s.refits;
    d.wm = [...s.wm];
    d.env = [...s.env];
    d.knots = s.knots && { x: [...s.knots.x], y: [...s.knots.y] };
    return d;
  }
}
