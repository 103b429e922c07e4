// Frontier starts (Salimans and Chen 2018, Florensa et al. 2017): per task, a start on the scripted
// expert's trajectory that follows the policy's success. The frontier is the share of the expert's
// trajectory still to do at a group's start (1 = the true initial state). It moves back, to more left to
// do, once the running success of groups started there reaches the band's top, and forward when it
// falls below the band's bottom. Most groups start at the frontier; a share starts uniformly later (the
// skills already learnt are kept) and a share at the true initial state (the task as evaluated).
// Positions are whole multiples of `step`, so a run's frontier is exact and resumes exactly.
import { z } from 'zod';
import { parseInput } from '../core/input-file.ts';
import type { Rng } from '../core/rng.ts';

export const FrontierSchema = z
  .object({
    enabled: z.boolean().default(false).describe("start groups at each task's success frontier on the expert's path"),
    start: z
      .number()
      .gt(0)
      .max(1)
      .default(0.25)
      .describe("share of the expert's trajectory left at the first frontier"),
    step: z.number().gt(0).max(0.5).default(0.05).describe('how far the frontier moves at once (share of trajectory)'),
    band: z
      .tuple([z.number().min(0).max(1), z.number().min(0).max(1)])
      .default([0.2, 0.6])
      .describe('running success below the first moves the frontier forward, at or above the second back'),
    window: z.number().int().positive().default(16).describe('rollouts of that running success'),
    later: z
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe('share of groups started uniformly between the frontier and the end (against forgetting)'),
    initial: z.number().min(0).max(1).default(0.1).describe('share of groups started at the true initial state'),
    worldModel: z
      .boolean()
      .default(false)
      .describe("world-model groups' verdicts move the frontier too (with anchors on, only anchors do otherwise)"),
  })
  .refine((c) => c.band[0] < c.band[1], { message: 'band must be [low, high] with low < high', path: ['band'] })
  .refine((c) => c.later + c.initial <= 1, { message: 'later + initial must be <= 1', path: ['initial'] });
export type FrontierConfig = z.output<typeof FrontierSchema>;

const StateSchema = z.object({
  config: FrontierSchema,
  position: z.array(z.number().int().min(1)),
  recent: z.array(z.array(z.union([z.literal(0), z.literal(1)]))),
});

export class Frontier {
  readonly config: FrontierConfig;
  /** Per task: the frontier in steps (level = position · step, 1 at most), and the outcomes (1 = success)
   *  of the latest rollouts started there. */
  private position: number[];
  private recent: (0 | 1)[][];

  constructor(config: z.input<typeof FrontierSchema>, tasks: number) {
    this.config = FrontierSchema.parse(config);
    this.position = new Array(tasks).fill(this.clamp(Math.round(this.config.start / this.config.step)));
    this.recent = Array.from({ length: tasks }, () => []);
  }

  private get last(): number {
    return Math.ceil(1 / this.config.step - 1e-9);
  }

  private clamp(p: number): number {
    return Math.min(this.last, Math.max(1, p));
  }

  /** The share of the trajectory left at `task`'s frontier. */
  level(task: number): number {
    return Math.min(1, this.position[task] * this.config.step);
  }

  /** The level a new group of `task` starts at (null: the true initial state; also when off or when the
   *  task has no expert starts). Draws from `rng` only when on. */
  draw(rng: Rng, task: number, canEvolve: boolean): number | null {
    if (!this.config.enabled || !canEvolve) return null;
    const u = rng.uniform();
    const at = this.position[task];
    let p = at;
    if (u < this.config.initial) p = this.last;
    else if (u < this.config.initial + this.config.later && at > 1) p = 1 + rng.int(at - 1);
    const level = Math.min(1, p * this.config.step);
    return level >= 1 ? null : level;
  }

  /** Outcomes of a group's rollouts that started at `level` (null: the initial state); only groups at
   *  the frontier count. */
  observe(task: number, level: number | null, outcomes: readonly boolean[]): void {
    if (!this.config.enabled || (level ?? 1) !== this.level(task)) return;
    const { window, band } = this.config;
    const recent = this.recent[task];
    for (const ok of outcomes) recent.push(ok ? 1 : 0);
    recent.splice(0, Math.max(0, recent.length - window));
    if (recent.length < window) return;
    const success = recent.reduce<number>((a, b) => a + b, 0) / window;
    const move = success >= band[1] ? 1 : success < band[0] ? -1 : 0;
    const next = this.clamp(this.position[task] + move);
    if (next === this.position[task]) return;
    this.position[task] = next;
    this.recent[task] = [];
  }

  /** Per task: the share of the trajectory left at its frontier. */
  levels(): number[] {
    return this.position.map((_, t) => this.level(t));
  }

  toState(): z.infer<typeof StateSchema> {
    return { config: this.config, position: [...this.position], recent: this.recent.map((r) => [...r]) };
  }

  static fromState(state: unknown): Frontier {
    const s = parseInput(state, StateSchema, 'frontier state');
    const out = new Frontier(s.config, s.position.length);
    out.position = s.position;
    out.recent = s.recent;
    return out;
  }
}
