// The evaluation report: per task family success with its Wilson 95% interval, mean process score
// and episode length, plus an overall entry; for --compare, the paired per-episode difference on the
// same seeds with a normal-approximation 95% interval. A zod schema validates what is written.
import { z } from 'zod';
import { SPLITS } from '../task/index.ts';
import { FailedStagesSchema, stagesTable } from './stages.ts';
import { offTableNote, summarise } from './summary.ts';

export const EVAL_FORMAT = 'wmrl-eval/1';

export const FamilyResultSchema = z.object({
  success_rate: z.number().min(0).max(1),
  ci_low: z.number().min(0).max(1),
  ci_high: z.number().min(0).max(1),
  episodes: z.number().int().min(0),
  mean_progress: z.number().min(0).max(1),
  mean_length: z.number().min(0),
  /** Episodes that ended because an object left the table. */
  off_table: z.number().int().min(0).optional(),
});
export type FamilyResult = z.infer<typeof FamilyResultSchema>;

const PolicyResultSchema = z.object({
  policy: z.string(),
  /** Per task id, plus "overall" (all episodes pooled). */
  results: z.record(z.string(), FamilyResultSchema).refine((r) => 'overall' in r, 'must have an "overall" entry'),
  /** Held-out and validation splits: all tasks' episodes on train-split object-target pairs (seen) and
   *  on the pairs reserved for evaluation; `tasks` splits each family the same way. */
  pairs: z
    .object({
      seen: FamilyResultSchema,
      reserved: FamilyResultSchema,
      tasks: z.record(z.string(), z.object({ seen: FamilyResultSchema, reserved: FamilyResultSchema })).optional(),
    })
    .optional(),
  /** Success (0/1) per episode, task by task in seed order: the pairing for --compare. */
  outcomes: z.record(z.string(), z.array(z.union([z.literal(0), z.literal(1)]))),
  /** Per task id: failed episodes by the last stage reached at their final state (src/eval/stages.ts). */
  failed_stages: z.record(z.string(), FailedStagesSchema).optional(),
});
export type PolicyResult = z.infer<typeof PolicyResultSchema>;

export const PairedDiffSchema = z.object({
  /** Mean of success(A) - success(B) over episodes run on the same seeds. */
  diff: z.number().min(-1).max(1),
  ci_low: z.number(),
  ci_high: z.number(),
  episodes: z.number().int().min(0),
});
export type PairedDiff = z.infer<typeof PairedDiffSchema>;

export const EvalReportSchema = z.object({
  format: z.literal(EVAL_FORMAT),
  split: z.enum(SPLITS),
  episodes_per_task: z.number().int().positive(),
  seed: z.number().int().min(0),
  temperature: z.number().min(0),
  /** Instructions in the project's own unseen wording (absent: the scene's). */
  wording: z.literal('unseen').optional(),
  /** The handover probe: the scripted expert acted for the first `handover` steps (absent: none). */
  handover: z.number().int().positive().optional(),
  /** Episode k of a task uses splitSeed(split, seed + k). */
  seeds: z.object({ first_index: z.number().int().min(0), count: z.number().int().positive() }),
  tasks: z.array(z.string()).min(1),
  policies: z.array(PolicyResultSchema).min(1).max(2),
  /** A minus B per task and overall, present when two policies were compared. */
  paired: z.record(z.string(), PairedDiffSchema).optional(),
});
export type EvalReport = z.infer<typeof EvalReportSchema>;

export interface TaskEpisodes {
  taskId: string;
  episodes: { seed: number; success: boolean; length: number; progress: number; offTable?: boolean }[];
}

/** Per-task summaries plus the pooled "overall" entry, and the 0/1 outcomes for pairing; with
 *  `reserved`, all episodes split by whether they use a reserved object-target pair. */
export function policyResult(
  policy: string,
  perTask: TaskEpisodes[],
  reserved?: (taskId: string, seed: number) => boolean,
): PolicyResult {
  const results: Record<string, FamilyResult> = {};
  const outcomes: Record<string, (0 | 1)[]> = {};
  for (const t of perTask) {
    results[t.taskId] = familyResult(t.episodes);
    outcomes[t.taskId] = t.episodes.map((e) => (e.success ? 1 : 0));
  }
  results.overall = familyResult(perTask.flatMap((t) => t.episodes));
  if (!reserved) return { policy, results, outcomes };
  const split = (ts: TaskEpisodes[]) => {
    const tagged = ts.flatMap((t) => t.episodes.map((e) => ({ e, reserved: reserved(t.taskId, e.seed) })));
    const part = (r: boolean) => familyResult(tagged.filter((x) => x.reserved === r).map((x) => x.e));
    return { seen: part(false), reserved: part(true) };
  };
  const tasks = Object.fromEntries(perTask.map((t) => [t.taskId, split([t])]));
  return { policy, results, pairs: { ...split(perTask), tasks }, outcomes };
}

function familyResult(episodes: TaskEpisodes['episodes']): FamilyResult {
  const s = summarise(episodes);
  const { success_rate, ci_low, ci_high, mean_progress, mean_length, off_table } = s;
  return {
    success_rate,
    ci_low,
    ci_high,
    episodes: s.episodes,
    mean_progress,
    mean_length,
    ...(off_table !== undefined && { off_table }),
  };
}

/** Mean paired difference a - b with a 95% interval (normal approximation on the per-pair differences). */
export function pairedDifference(a: readonly number[], b: readonly number[]): PairedDiff {
  if (a.length !== b.length)
    throw new RangeError(`pairedDifference: ${a.length} vs ${b.length} outcomes (the runs must share seeds)`);
  const n = a.length;
  if (n === 0) return { diff: 0, ci_low: -1, ci_high: 1, episodes: 0 };
  const d = a.map((x, i) => x - b[i]);
  const mean = d.reduce((s, x) => s + x, 0) / n;
  const variance = n > 1 ? d.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1) : 0;
  const half = 1.959963984540054 * Math.sqrt(variance / n);
  return { diff: mean, ci_low: Math.max(-1, mean - half), ci_high: Math.min(1, mean + half), episodes: n };
}

/** Paired differences per task and overall between two policy results on the same seeds. */
export function comparePolicies(a: PolicyResult, b: PolicyResult): Record<string, PairedDiff> {
  const out: Record<string, PairedDiff> = {};
  const allA: number[] = [];
  const allB: number[] = [];
  for (const task of Object.keys(a.outcomes)) {
    const [oa, ob] = [a.outcomes[task], b.outcomes[task] ?? []];
    out[task] = pairedDifference(oa, ob);
    allA.push(...oa);
    allB.push(...ob);
  }
  out.overall = pairedDifference(allA, allB);
  return out;
}

/** Validates a report; the error names the bad field. */
export function validateReport(report: unknown): EvalReport {
  const r = EvalReportSchema.safeParse(report);
  if (!r.success)
    throw new Error(`eval report: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return r.data;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Plain-text table of a report (what `wmrl eval` prints without --json). */
export function formatReport(report: EvalReport): string {
  const lines: string[] = [];
  for (const p of report.policies) {
    const wording = report.wording ? `, ${report.wording} wording` : '';
    const handover = report.handover ? `, the expert's first ${report.handover} steps` : '';
    lines.push(
      `${p.policy} (${report.split}, ${report.episodes_per_task} episodes per task, ` +
        `temperature ${report.temperature}${wording}${handover})`,
    );
    const rows: Record<string, FamilyResult> = { ...p.results };
    if (p.pairs) {
      rows['seen pairs'] = p.pairs.seen;
      rows['reserved pairs'] = p.pairs.reserved;
      for (const [task, s] of Object.entries(p.pairs.tasks ?? {})) {
        rows[`${task} seen`] = s.seen;
        rows[`${task} reserved`] = s.reserved;
      }
    }
    for (const [task, r] of Object.entries(rows)) {
      lines.push(
        `  ${task.padEnd(30)} success ${pct(r.success_rate).padStart(6)}  ` +
          `95% CI [${pct(r.ci_low)}, ${pct(r.ci_high)}]  n=${r.episodes}  ` +
          `progress ${r.mean_progress.toFixed(2)}  len ${r.mean_length.toFixed(1)}${offTableNote(r.off_table)}`,
      );
    }
  }
  const stages = stagesTable(report.policies);
  if (stages) lines.push(stages);
  if (report.paired) {
    lines.push(`paired difference ${report.policies[0].policy} - ${report.policies[1].policy} (same seeds)`);
    for (const [task, d] of Object.entries(report.paired))
      lines.push(
        `  ${task.padEnd(30)} ${d.diff >= 0 ? '+' : ''}${pct(d.diff)}  ` +
          `95% CI [${pct(d.ci_low)}, ${pct(d.ci_high)}]  n=${d.episodes}`,
      );
  }
  return lines.join('\n');
}
