import { z } from 'zod';
import { clamp } from '../core/dmath.ts';
import { parseInput } from '../core/input-file.ts';

// GRPO group advantages with optional weights: a per-group weight (the denoiser's w on anchor
// groups) and per-rollout weights from ensemble reward variance.

export const EnsembleWeightsSchema = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe('weigh world-model rollouts by their ensemble reward variance (beyond the paper; ablated)'),
    shrink: z
      .number()
      .nonnegative()
      .default(1)
      .describe('κ in w_i ∝ 1/(v_i + κ·mean(v)): larger is gentler, 0 is plain inverse variance'),
    min: z
      .number()
      .nonnegative()
      .default(0.25)
      .describe('lower clip of a rollout weight (after normalising to mean 1)'),
    max: z.number().positive().default(4).describe('upper clip of a rollout weight (after normalising to mean 1)'),
  })
  .refine((c) => c.max >= c.min, { message: 'max must be at least min', path: ['max'] });

export const AdvantageConfigSchema = z.object({
  eps: z.number().positive().default(1e-4).describe('ε in A_i = (r_i − μ_g)/(σ_g + ε)'),
  zeroVarTol: z
    .number()
    .nonnegative()
    .default(1e-9)
    .describe('a group with σ_g below this gets zero advantages and counts as zero-variance'),
  ensemble: EnsembleWeightsSchema.default({ enabled: false, shrink: 1, min: 0.25, max: 4 }).describe(
    'per-rollout weights from ensemble variance',
  ),
});
export type AdvantageConfig = z.output<typeof AdvantageConfigSchema>;

export const AdvantageStateSchema = z
  .object({
    config: AdvantageConfigSchema,
    groups: z.number().int().nonnegative(),
    zeroVarianceGroups: z.number().int().nonnegative(),
  })
  .refine((s) => s.zeroVarianceGroups <= s.groups, {
    message: 'zeroVarianceGroups must not exceed groups',
    path: ['zeroVarianceGroups'],
  });
export type AdvantageState = z.infer<typeof AdvantageStateSchema>;

export interface GroupAdvantages {
  /** One per member; 0 for ungraded (null) members. */
  advantages: number[];
  /** μ_g and σ_g (population) over the graded members; NaN if none is graded. */
  mean: number;
  std: number;
  graded: number;
  zeroVariance: boolean;
}

/** A_i = (r_i − μ_g)/(σ_g + eps) over the graded members (null = ungraded, advantage 0). */
export function standardise(rewards: readonly (number | null)[], eps = 1e-4, zeroVarTol = 1e-9): GroupAdvantages {
  const graded = rewards.filter((r): r is number => r !== null);
  for (const r of graded)
    if (!Number.isFinite(r)) throw new RangeError(`standardise: rewards must be finite, got ${r}`);
  const n = graded.length;
  let m = 0;
  for (const r of graded) m += r;
  m /= n;
  let v = 0;
  for (const r of graded) v += (r - m) ** 2;
  const sd = Math.sqrt(v / n);
  const zeroVariance = !(sd >= zeroVarTol);
  const advantages = rewards.map((r) => (r === null || zeroVariance ? 0 : (r - m) / (sd + eps)));
  return { advantages, mean: m, std: sd, graded: n, zeroVariance };
}

/** Per-rollout weights from reward variances v_i: w_i ∝ 1/(v_i + κ·v̄) (κ = shrink; a tiny floor
 *  keeps all-zero variances finite), normalised to mean 1, then clipped (so the mean is ~1, not
 *  exactly 1, when a clip binds). Disabled: all ones. */
export function ensembleWeights(
  variances: readonly number[],
  config: z.input<typeof EnsembleWeightsSchema> = {},
): number[] {
  const c = EnsembleWeightsSchema.parse(config);
  if (!c.enabled || variances.length === 0) return variances.map(() => 1);
  for (const v of variances) {
    if (!(v >= 0) || !Number.isFinite(v))
      throw new RangeError(`ensembleWeights: variances must be finite and >= 0, got ${v}`);
  }
  const vbar = variances.reduce((a, b) => a + b, 0) / variances.length;
  const raw = variances.map((v) => 1 / (v + c.shrink * vbar + 1e-12));
  const rbar = raw.reduce((a, b) => a + b, 0) / raw.length;
  return raw.map((r) => clamp(r / rbar, c.min, c.max));
}

/** Whether mapping a group's rewards through `f` changes any of its standardised advantages by more than
 *  `tol` (an affine f changes them only through eps, far less). */
export function changesAdvantages(
  rewards: readonly number[],
  f: (r: number) => number,
  config: Pick<AdvantageConfig, 'eps' | 'zeroVarTol'>,
  tol = 0.01,
): boolean {
  const before = standardise(rewards, config.eps, config.zeroVarTol).advantages;
  const after = standardise(rewards.map(f), config.eps, config.zeroVarTol).advantages;
  return before.some((a, k) => Math.abs(a - after[k]) > tol);
}

export interface GroupOptions {
  /** Multiplies every advantage of the group (the denoiser's w for anchor groups). */
  groupWeight?: number;
  /** Per-member ensemble reward variances; used only when config.ensemble.enabled. */
  rewardVars?: readonly number[];
}

export class Advantages {
  readonly config: AdvantageConfig;
  private groups = 0;
  private zeroVarianceGroups = 0;

  constructor(config: z.input<typeof AdvantageConfigSchema> = {}) {
    this.config = AdvantageConfigSchema.parse(config);
  }

  /** Standardises one group, then multiplies by the group weight and the per-rollout weights
   *  (computed over the graded members only). Counts the group and whether it was zero-variance. */
  group(rewards: readonly (number | null)[], options: GroupOptions = {}): GroupAdvantages & { weights: number[] } {
    const { groupWeight = 1, rewardVars } = options;
    if (!Number.isFinite(groupWeight))
      throw new RangeError(`Advantages: groupWeight must be finite, got ${groupWeight}`);
    if (rewardVars && rewardVars.length !== rewards.length) {
      throw new RangeError(`Advantages: ${rewardVars.length} variances for ${rewards.length} members`);
    }
    const g = standardise(rewards, this.config.eps, this.config.zeroVarTol);
    const weights = rewards.map(() => 1);
    if (rewardVars && this.config.ensemble.enabled) {
      const idx = rewards.flatMap((r, i) => (r === null ? [] : [i]));
      const w = ensembleWeights(
        idx.map((i) => rewardVars[i]),
        this.config.ensemble,
      );
      idx.forEach((i, k) => (weights[i] = w[k]));
    }
    this.groups++;
    if (g.zeroVariance) this.zeroVarianceGroups++;
    const advantages = g.advantages.map((a, i) => a * groupWeight * weights[i]);
    return { ...g, advantages, weights };
  }

  /** World-model rewards go through the debiaser's f BEFORE
   *  standardisation (z-scoring would cancel an affine map; only f's non-affine part survives). */
  worldModelGroup(
    rWm: readonly (number | null)[],
    map: (r: number) => number,
    options: GroupOptions = {},
  ): GroupAdvantages & { weights: number[]; rewards: (number | null)[] } {
    const rewards = rWm.map((r) => (r === null ? null : map(r)));
    return { ...this.group(rewards, options), rewards };
  }

  report(): { groups: number; zeroVarianceGroups: number } {
    return { groups: this.groups, zeroVarianceGroups: this.zeroVarianceGroups };
  }

  toState(): AdvantageState {
    const config = { ...this.config, ensemble: { ...this.config.ensemble } };
    return { config, groups: this.groups, zeroVarianceGroups: this.zeroVarianceGroups };
  }

  static fromState(state: unknown): Advantages {
    const s = parseInput(state, AdvantageStateSchema, 'advantage state');
    const a = new Advantages(s.config);
    a.groups = s.groups;
    a.zeroVarianceGroups = s.zeroVarianceGroups;
    return a;
  }
}
