// Environment evolution: difficulty generations made off-policy. A task that can replay a scripted
// expert starts groups from the expert's own states of the same seed: generation g starts with
// levels[g] of the expert's trajectory still to do (late states first, 1 = the true initial state), a
// reverse curriculum. A task moves to its next generation once the running success of its groups at
// the current level passes `advanceAt`. Scene-level difficulty (start distance, clutter) moves with the
// generations too: a start is the easiest of a number of train starts that shrinks generation by
// generation. Tasks without expert starts keep their initial states. Evaluation never uses it: only
// training starts change.
import { z } from 'zod';
import type { Rng } from '../core/rng.ts';
import { StartCurriculum } from './start-curriculum.ts';

export const EvolutionSchema = z
  .object({
    enabled: z.boolean().default(false).describe('start groups from expert states, generation by generation'),
    levels: z
      .array(z.number().gt(0).max(1))
      .min(1)
      .default([0.25, 0.5, 0.75, 1])
      .describe("share of the expert's trajectory left at the start, per generation (ascending; 1: initial state)"),
    advanceAt: z
      .number()
      .min(0)
      .max(1)
      .default(0.5)
      .describe("running success at the current generation's level that moves a task to the next"),
    window: z.number().int().positive().default(32).describe('rollouts of that running success'),
    sceneCandidates: z
      .array(z.number().int().positive())
      .default([])
      .describe(
        'scene-level difficulty per generation: a start is the easiest (nearest target, least clutter) of this ' +
          'many train starts (the last entry holds for later generations; empty: off)',
      ),
    earlier: z
      .number()
      .min(0)
      .max(1)
      .default(0.25)
      .describe('share of groups started at an earlier generation (against forgetting)'),
  })
  .refine((c) => c.levels.every((l, k) => k === 0 || l > c.levels[k - 1]), {
    message: 'levels must be ascending',
    path: ['levels'],
  });
export type EvolutionConfig = z.output<typeof EvolutionSchema>;

/** A task's position is its generation. */
export class Evolution extends StartCurriculum<EvolutionConfig> {
  static readonly kind = { name: 'evolution', config: EvolutionSchema, positionKey: 'generation', minPosition: 0 };

  constructor(config: z.input<typeof EvolutionSchema>, tasks: number) {
    super(Evolution.kind, config, tasks);
  }

  draw(rng: Rng, task: number, canEvolve: boolean): number | null {
    if (!this.config.enabled || !canEvolve) return null;
    const g = this.position[task];
    const k = g > 0 && rng.uniform() < this.config.earlier ? rng.int(g) : g;
    const level = this.config.levels[k];
    return level >= 1 ? null : level;
  }

  /** How many train starts a new group of `task` picks the easiest of (1: any start). */
  candidates(task: number): number {
    const c = this.config.sceneCandidates;
    if (!this.config.enabled || c.length === 0) return 1;
    return c[Math.min(this.position[task], c.length - 1)];
  }

  level(task: number): number {
    return this.config.levels[this.position[task]];
  }

  protected moved(task: number, success: number): number {
    return this.position[task] + (success >= this.config.advanceAt ? 1 : 0);
  }

  /** The last generation is final: it keeps no outcomes. */
  override observe(task: number, level: number | null, outcomes: readonly boolean[]): void {
    if (this.position[task] < this.config.levels.length - 1) super.observe(task, level, outcomes);
  }

  /** Per task: its generation (0-based). */
  generations(): readonly number[] {
    return this.position;
  }

  static fromState(state: unknown): Evolution {
    return StartCurriculum.restore(Evolution, state);
  }
}
