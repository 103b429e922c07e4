// Hybrid-environment loss weights (SE-RL style, beyond the paper; off by default): anchor rows and
// world-model rows are weighted so that each source counts equally in the loss, from running (EMA)
// shares of their rows, each weight floored, then renormalised to a mean of 1 over the rows.
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';

export const HybridConfigSchema = z.object({
  enabled: z.boolean().default(false).describe('weigh anchor vs world-model rows by their running shares (ablated)'),
  floor: z.number().min(0).max(1).default(0.25).describe('lowest weight of a source before renormalising'),
  halfLife: z.number().positive().default(16).describe('half-life (iterations) of the running row shares'),
});
export type HybridConfig = z.output<typeof HybridConfigSchema>;

const StateSchema = z.object({ config: HybridConfigSchema, anchorShare: z.number().min(0).max(1).nullable() });

export class HybridWeights {
  readonly config: HybridConfig;
  private anchorShare: number | null = null;

  constructor(config: z.input<typeof HybridConfigSchema> = {}) {
    this.config = HybridConfigSchema.parse(config);
  }

  /** Row weights of this iteration for `anchorRows` physics rows and `modelRows` world-model rows. */
  weights(anchorRows: number, modelRows: number): { anchor: number; model: number } {
    const total = anchorRows + modelRows;
    if (!this.config.enabled || total === 0) return { anchor: 1, model: 1 };
    const share = anchorRows / total;
    const decay = 0.5 ** (1 / this.config.halfLife);
    this.anchorShare = this.anchorShare === null ? share : decay * this.anchorShare + (1 - decay) * share;
    const s = Math.min(1 - 1e-6, Math.max(1e-6, this.anchorShare));
    const anchor = Math.max(this.config.floor, 1 / (2 * s));
    const model = Math.max(this.config.floor, 1 / (2 * (1 - s)));
    const mean = (anchorRows * anchor + modelRows * model) / total;
    return { anchor: anchor / mean, model: model / mean };
  }

  toState(): z.infer<typeof StateSchema> {
    return { config: this.config, anchorShare: this.anchorShare };
  }

  static fromState(state: unknown): HybridWeights {
    const s = parseInput(state, StateSchema, 'hybrid weight state');
    const h = new HybridWeights(s.config);
    h.anchorShare = s.anchorShare;
    return h;
  }
}
