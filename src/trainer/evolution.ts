// Environment evolution: difficulty generations made off-policy. A task that can replay a scripted
// expert starts groups from the expert's own states of the same seed: generation g starts with
// levels[g] of the expert's trajectory still to do (late states first, 1 = the true initial state), a
// reverse curriculum. A task moves to its next generation once the running success of its groups at
// the current level passes `advanceAt`. Scene-level difficulty (start distance, clutter) moves with the
// generations too: a start is the easiest of a number of train starts that shrinks generation by
// generation. Tasks without expert starts keep their initial states. Evaluation never uses it: only
// training starts change.
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';
import type { Rng } from '../core/rng.ts';

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

const StateSchema = z.object({
  config: EvolutionSchema,
  generation: z.array(z.number().int().min(0)),
  recent: z.array(z.array(z.union([z.literal(0), z.literal(1)]))),
});

export class Evolution {
  readonly config: EvolutionConfig;
  /** Per task: its generation, and the outcomes (1 = success) of its latest rollouts at that level. */
  private generation: number[];
  private recent: (0 | 1)[][];

  constructor(config: z.input<typeof EvolutionSchema>, tasks: number) {
    this.config = EvolutionSchema.parse(config);
    this.generation = new Array(tasks).fill(0);
    this.recent = Array.from({ length: tasks }, () => []);
  }

  /** The level a new group of `task` starts at (null when evolution is off or the task cannot branch
   *  from expert states: its true initial state). Draws from `rng` only when on. */
  draw(rng: Rng, task: number, canEvolve: boolean): number | null {
    if (!this.config.enabled || !canEvolve) return null;
    const g = this.generation[task];
    const k = g > 0 && rng.uniform() < this.config.earlier ? rng.int(g) : g;
    const level = this.config.levels[k];
    return level >= 1 ? null : level;
  }

  /** How many train starts a new group of `task` picks the easiest of (1: any start). */
  candidates(task: number): number {
    const c = this.config.sceneCandidates;
    if (!this.config.enabled || c.length === 0) return 1;
    return c[Math.min(this.generation[task], c.length - 1)];
  }

  /** Outcomes of a group's rollouts that started at `level` (null: the initial state); only the current
   *  level counts. */
  observe(task: number, level: number | null, outcomes: readonly boolean[]): void {
    if (!this.config.enabled) return;
    const { levels, window, advanceAt } = this.config;
    const g = this.generation[task];
    if ((level ?? 1) !== levels[g] || g === levels.length - 1) return;
    const recent = this.recent[task];
    for (const ok of outcomes) recent.push(ok ? 1 : 0);
    recent.splice(0, Math.max(0, recent.length - window));
    if (recent.length === window && recent.reduce<number>((a, b) => a + b, 0) / window >= advanceAt) {
      this.generation[task] = g + 1;
      this.recent[task] = [];
    }
  }

  /** Per task: its generation (0-based). */
  generations(): readonly number[] {
    return this.generation;
  }

  toState(): z.infer<typeof StateSchema> {
    return { config: this.config, generation: [...this.generation], recent: this.recent.map((r) => [...r]) };
  }

  static fromState(state: unknown): Evolution {
    const s = parseInput(state, StateSchema, 'evolution state');
    const out = new Evolution(s.config, s.generation.length);
    out.generation = s.generation;
    out.recent = s.recent;
    return out;
  }
}
