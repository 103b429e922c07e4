// Frontier starts (Salimans and Chen 2018, Florensa et al. 2017): per task, a start on the scripted
// expert's trajectory that follows the policy's success. The frontier is the share of the expert's
// trajectory still to do at a group's start (1 = the true initial state). It moves back, to more left to
// do, once the running success of groups started there reaches the band's top, and forward when it
// falls below the band's bottom. Most groups start at the frontier; a share starts uniformly later (the
// skills already learnt are kept) and a share at the true initial state (the task as evaluated).
// Positions are whole multiples of `step`, so a run's frontier is exact and resumes exactly.
import { z } from 'zod';
import type { Rng } from '../core/rng.ts';
import { StartCurriculum } from './start-curriculum.ts';

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

/** A task's position is its frontier in steps (level = position · step, 1 at most). */
export class Frontier extends StartCurriculum<FrontierConfig> {
  static readonly kind = { name: 'frontier', config: FrontierSchema, positionKey: 'position', minPosition: 1 };
  /** The position of the true initial state. */
  private readonly last = Math.ceil(1 / this.config.step - 1e-9);

  constructor(config: z.input<typeof FrontierSchema>, tasks: number) {
    super(Frontier.kind, config, tasks);
    this.position.fill(this.clamp(Math.round(this.config.start / this.config.step)));
  }

  private clamp(p: number): number {
    return Math.min(this.last, Math.max(1, p));
  }

  level(task: number): number {
    return Math.min(1, this.position[task] * this.config.step);
  }

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

  protected moved(task: number, success: number): number {
    const { band } = this.config;
    return this.clamp(this.position[task] + (success >= band[1] ? 1 : success < band[0] ? -1 : 0));
  }

  static fromState(state: unknown): Frontier {
    return StartCurriculum.restore(Frontier, state);
  }
}
