// Start selection (River's environment filter; docs/trainer.md#start-selection): keep a running success estimate per
// start and draw starts whose outcome under the current policy is uncertain, so that fewer groups are
// all-success or all-failure. Initial states come from a fixed pool of train starts weighted by
// p(1 − p) of a Laplace estimate (unvisited starts count as p = 1/2); branch points are weighted by
// whether the anchor's own Φ moved over the next H steps (a state where something happens).
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';
import type { Rng } from '../core/rng.ts';
import type { BranchPoint } from './rollouts.ts';

export const StartSelectionSchema = z.object({
  mode: z
    .enum(['uniform', 'uncertain'])
    .default('uniform')
    .describe('uniform: any train start; uncertain: prefer starts whose outcome is uncertain'),
  pool: z.number().int().positive().default(256).describe('train starts per task in the pool (uncertain)'),
  floor: z
    .number()
    .min(0)
    .max(1)
    .default(0.05)
    .describe('weight added to every start (uncertain), so settled ones still come back'),
  still: z
    .number()
    .min(0)
    .max(1)
    .default(0.2)
    .describe('weight of a branch point whose anchor Φ did not move over the next H steps, vs 1 (uncertain)'),
});
export type StartSelectionConfig = z.output<typeof StartSelectionSchema>;

const StateSchema = z.object({
  config: StartSelectionSchema,
  counts: z.array(z.array(z.tuple([z.number().int().min(0), z.number().int().min(0)]))),
});

export class StartSelector {
  readonly config: StartSelectionConfig;
  /** counts[task][k] = [successes, trials] of pool start k. */
  private counts: [number, number][][];

  constructor(config: z.input<typeof StartSelectionSchema>, tasks: number) {
    this.config = StartSelectionSchema.parse(config);
    this.counts = Array.from({ length: tasks }, () =>
      Array.from({ length: this.config.pool }, (): [number, number] => [0, 0]),
    );
  }

  /** The start index (into the task's train starts) of a new group. */
  drawStart(rng: Rng, task: number, range: number): number {
    if (this.config.mode === 'uniform') return rng.int(range);
    const w = this.counts[task].map(([s, n]) => {
      const p = (s + 1) / (n + 2);
      return p * (1 - p) + this.config.floor;
    });
    return this.poolStart(task, rng.categorical(w), range);
  }

  /** Pool start k of a task: a fixed spread of the train range. */
  private poolStart(task: number, k: number, range: number): number {
    return ((Math.imul(k + 1, 2654435761) + task * 7919) >>> 0) % range;
  }

  /** Group outcomes from a start drawn by drawStart (ignored under uniform selection). */
  observe(task: number, start: number, range: number, successes: number, trials: number): void {
    if (this.config.mode === 'uniform') return;
    const k = this.counts[task].findIndex((_, i) => this.poolStart(task, i, range) === start);
    if (k < 0) return;
    this.counts[task][k][0] += successes;
    this.counts[task][k][1] += trials;
  }

  /** A branch point of the pool for a world-model group. */
  drawPoint(rng: Rng, pool: readonly BranchPoint[]): BranchPoint {
    if (this.config.mode === 'uniform') return pool[rng.int(pool.length)];
    return pool[rng.categorical(pool.map((p) => (p.moved === false ? this.config.still : 1)))];
  }

  toState(): z.infer<typeof StateSchema> {
    return { config: this.config, counts: this.counts.map((t) => t.map(([s, n]): [number, number] => [s, n])) };
  }

  static fromState(state: unknown): StartSelector {
    const s = parseInput(state, StateSchema, 'start selection state');
    const out = new StartSelector(s.config, s.counts.length);
    out.counts = s.counts;
    return out;
  }
}
