// The leaderboards: per task, reference runs (program, validation and test score) made once by
// scripts/make-leaderboards.ts and committed as leaderboards.json; a score's position is the share of
// them it beats. Browser-safe.
import { z } from 'zod';
import { type Program, ProgramSchema } from './dsl.ts';
import raw from './leaderboards.json' with { type: 'json' };

export const ReferenceRunSchema = z
  .object({ program: ProgramSchema, validation: z.number(), test: z.number() })
  .strict();
export const LeaderboardsSchema = z
  .object({
    version: z.literal(1),
    /** The runner seed of every reference run. */
    seed: z.number().int(),
    tasks: z.record(
      z.string(),
      z
        .object({
          metric: z.enum(['accuracy', 'macro-f1', 'rmse']),
          higherIsBetter: z.boolean(),
          runs: z.array(ReferenceRunSchema).min(1),
        })
        .strict(),
    ),
  })
  .strict();
export type Leaderboards = z.output<typeof LeaderboardsSchema>;

export interface ReferenceRun {
  program: Program;
  validation: number;
  test: number;
  /** The run's own validation score's leaderboardPosition (it ties with itself: counts half). */
  position: number;
}

let boards: Leaderboards | null = null;

/** The committed leaderboards (validated on first use). */
export function leaderboards(): Leaderboards {
  boards ??= LeaderboardsSchema.parse(raw);
  return boards;
}

function board(taskId: string): Leaderboards['tasks'][string] {
  const b = leaderboards().tasks[taskId];
  if (!b) throw new RangeError(`no leaderboard for task "${taskId}"`);
  return b;
}

/** Share of the task's reference runs that `score` beats on `split`, in [0, 1]: a tie counts half,
 *  "beats" follows the metric's direction, and a non-finite score beats nothing. */
export function leaderboardPosition(taskId: string, score: number, split: 'validation' | 'test'): number {
  const b = board(taskId);
  if (!Number.isFinite(score)) return 0;
  const sign = b.higherIsBetter ? 1 : -1;
  let wins = 0;
  for (const r of b.runs) {
    const d = sign * (score - r[split]);
    wins += d > 0 ? 1 : d === 0 ? 0.5 : 0;
  }
  return wins / b.runs.length;
}

/** The task's reference runs with their validation positions. */
export function referenceRuns(taskId: string): ReferenceRun[] {
  return board(taskId).runs.map((r) => ({ ...r, position: leaderboardPosition(taskId, r.validation, 'validation') }));
}
