import { z } from 'zod';
import { clamp, dpow } from '../core/dmath.ts';
import { parseInput } from '../core/input-file.ts';

// Inverse-Variance Denoising (the paper's form): a weight w >= 1 on anchor-group
// advantages that grows with the world model's disagreement with physics on anchor groups.
//
// η² is the EMA of the per-group relative residual variance s² (the world model's noise as a
// share of the physics signal). c = (w_target − 1)/η² is frozen once, so after the freeze
// w = 1 + (w_target − 1)·η²_now/η²_at_freeze: w = w_target while the world model stays as noisy as
// at the freeze, rises (to w_max) if it gets noisier, and falls toward 1 as it gets better.
// With every group an anchor there is nothing to weigh anchors against: w only multiplies the
// learning rate (the trainer reports that case as such).
// rule 'inverse-variance' drops the freeze: w = 1 + η², the ratio of a world-model group's reward
// variance (signal + the model's noise) to an anchor group's (signal alone), as inverse-variance
// weighting of the two kinds of groups has it.

export const DenoiseConfigSchema = z
  .object({
    rule: z
      .enum(['paper', 'inverse-variance'])
      .default('paper')
      .describe('paper: w = 1 + c·η² with c frozen so that w = wTarget at the freeze; inverse-variance: w = 1 + η²'),
    halfLife: z.number().positive().default(64).describe('EMA half-life of η² in observed (non-skipped) anchor groups'),
    freezeAfter: z
      .number()
      .int()
      .positive()
      .default(32)
      .describe('observed anchor groups before c is frozen; w = 1 until then'),
    wTarget: z.number().min(1).default(2).describe('w at the moment of the freeze: c = (wTarget − 1)/η²'),
    wMin: z.number().default(1).describe('lower clip of w'),
    wMax: z.number().default(4).describe('upper clip of w'),
    minVar: z.number().nonnegative().default(1e-9).describe('anchor groups with Var(r_env) below this are skipped'),
    freezeFloor: z
      .number()
      .positive()
      .default(1e-9)
      .describe('c freezes only once η² reaches this (a world model in exact agreement keeps w = 1)'),
  })
  .refine((c) => c.wMax >= c.wMin, { message: 'wMax must be at least wMin', path: ['wMax'] });
export type DenoiseConfig = z.output<typeof DenoiseConfigSchema>;

export const DenoiseStateSchema = z
  .object({
    config: DenoiseConfigSchema,
    seen: z.number().int().nonnegative(),
    skipped: z.number().int().nonnegative(),
    /** null until the first observed group. */
    eta2: z.number().nonnegative().nullable(),
    /** null until frozen. */
    c: z.number().nullable(),
  })
  .refine((s) => s.skipped <= s.seen, { message: 'skipped must not exceed seen', path: ['skipped'] });
export type DenoiseState = z.infer<typeof DenoiseStateSchema>;

export interface DenoiseReport {
  eta2: number | null;
  c: number | null;
  w: number;
  groupsSeen: number;
  groupsSkipped: number;
}

/** s² = mean[((d − d̄) − (s − s̄))²] / Var(s), population moments; null when Var(s) < minVar.
 *  d: the group's debiased world-model rewards f(r_wm); s: their physics rewards r_env. */
export function residualScale(d: readonly number[], s: readonly number[], minVar = 1e-9): number | null {
  if (d.length !== s.length || d.length === 0)
    throw new RangeError(`residualScale: need equal non-empty groups, got ${d.length} and ${s.length}`);
  const n = s.length;
  let dm = 0,
    sm = 0;
  for (let i = 0; i < n; i++) {
    dm += d[i];
    sm += s[i];
  }
  dm /= n;
  sm /= n;
  let res = 0,
    v = 0;
  for (let i = 0; i < n; i++) {
    res += (d[i] - dm - (s[i] - sm)) ** 2;
    v += (s[i] - sm) ** 2;
  }
  v /= n;
  if (!(v >= minVar)) return null;
  return res / n / v;
}

export class Denoiser {
  readonly config: DenoiseConfig;
  /** Per-update decay: β^halfLife = 1/2. */
  private readonly beta: number;
  private seen = 0;
  private skipped = 0;
  private eta2: number | null = null;
  private c: number | null = null;

  constructor(config: z.input<typeof DenoiseConfigSchema> = {}) {
    this.config = DenoiseConfigSchema.parse(config);
    this.beta = dpow(0.5, 1 / this.config.halfLife);
  }

  /** Observes one anchor group (d already debiased, s physics); returns its s² (null if skipped)
   *  and the weight after this update, which is what this group's advantages get.
   *  EMA: the first observed s² initialises η² (weight 1); each later one gives
   *  η² ← β·η² + (1 − β)·s², so an observation's weight halves every halfLife updates. */
  observe(d: readonly number[], s: readonly number[]): { s2: number | null; w: number } {
    for (const v of [...d, ...s])
      if (!Number.isFinite(v)) throw new RangeError(`Denoiser: rewards must be finite, got ${v}`);
    const s2 = residualScale(d, s, this.config.minVar);
    this.seen++;
    if (s2 === null) {
      this.skipped++;
      return { s2, w: this.weight };
    }
    this.eta2 = this.eta2 === null ? s2 : this.beta * this.eta2 + (1 - this.beta) * s2;
    if (
      this.c === null &&
      this.seen - this.skipped >= this.config.freezeAfter &&
      this.eta2 >= this.config.freezeFloor
    ) {
      this.c = (this.config.wTarget - 1) / this.eta2;
    }
    return { s2, w: this.weight };
  }

  /** w = clip(1 + c·η², wMin, wMax) once c is frozen, 1 before (inverse-variance: c = 1 from the start). */
  get weight(): number {
    const { wMin, wMax, rule } = this.config;
    const c = rule === 'inverse-variance' ? 1 : this.c;
    if (c === null || this.eta2 === null) return 1;
    return clamp(1 + c * this.eta2, wMin, wMax);
  }

  report(): DenoiseReport {
    return { eta2: this.eta2, c: this.c, w: this.weight, groupsSeen: this.seen, groupsSkipped: this.skipped };
  }

  toState(): DenoiseState {
    return { config: { ...this.config }, seen: this.seen, skipped: this.skipped, eta2: this.eta2, c: this.c };
  }

  static fromState(state: unknown): Denoiser {
    const s = parseInput(state, DenoiseStateSchema, 'denoise state');
    const d = new Denoiser(s.config);
    d.seen = s.seen;
    d.skipped = s.skipped;
    d.eta2 = s.eta2;
    d.c = s.c;
    return d;
  }
}
