// The AutoResearch study (docs/autoresearch.md), a configuration of the study core: named rows (a mode,
// its iterations and trainer fields) trained in process from one base agent on several seeds, each run
// evaluated on the held-out tasks in real execution right after it trains, on the same evaluation
// episodes as the base of its seed; a table of between-seed means with 95% t intervals, per-seed paired
// differences against other rows, and the other row's executions and training seconds over this row's.
// Resumable: a finished run (its run.json, keyed by what decides it) is kept; a run stopped before it
// starts over.
import { join } from 'node:path';
import { z } from 'zod';
import type { Executor } from '../autoresearch/index.ts';
import { mean } from '../core/stats.ts';
import { HELDOUT_RESEARCH_TASKS } from './research.ts';
import {
  evalAgentCached,
  evaluateAgent,
  readAgentEval,
  meanPosition,
  positions,
  ResearchEvalSchema,
  researchRun,
  researchRunner,
  runRecord,
} from './research-runner.ts';
import { type MetricLine, meanMetric, metric, readFinished, readMetrics, sumMetric } from './study-cache.ts';
import { across, bySeed, meanCurve, paired, ratio, versusSeeds } from './study-stats.ts';
import { checkRows, modelHash, StudyRowSchema, stampStudy } from './study.ts';

export const ResearchRowSchema = StudyRowSchema.extend({
  iterations: z.number().int().positive().describe('policy updates of the run'),
  config: StudyRowSchema.shape.config.describe('trainer fields over the research preset and the study'),
}).strict();
export type ResearchRow = z.output<typeof ResearchRowSchema>;

export const ResearchStudySchema = z
  .object({
    base: z.string().default('models/agent-weak.onnx').describe('the agent every row starts from'),
    seeds: z.array(z.number().int().min(0)).min(1).default([0, 1, 2, 3, 4]).describe('training seeds'),
    finalEpisodes: z
      .number()
      .int()
      .positive()
      .default(32)
      .describe('held-out episodes per task of each evaluation (the same for every row of a seed)'),
    config: z
      .record(z.string(), z.unknown())
      .default({})
      .describe("trainer fields of every run over the research preset (a row's own go over them)"),
    rows: z.array(ResearchRowSchema).min(1).describe('the rows of the table'),
  })
  .strict()
  .superRefine(checkRows);
export type ResearchStudy = z.output<typeof ResearchStudySchema>;

const RunValueSchema = z.object({ seconds: z.number(), executions: z.number(), final: ResearchEvalSchema });

/** The run of `row` on `seed`: what decides it, its folder `<row>-s<seed>`. */
export const studyRun = (s: ResearchStudy, row: ResearchRow, seed: number) =>
  researchRun(
    {
      name: `${row.name}-s${seed}`,
      row: row.name,
      mode: row.mode,
      seed,
      iterations: row.iterations,
      fields: { ...s.config, ...row.config },
    },
    s.base,
    { finalEpisodes: s.finalEpisodes },
  );
const basePath = (runs: string, seed: number) => join(runs, `base-s${seed}.json`);

const runnerOf = (s: ResearchStudy, runs: string, executor: Executor, allowCodeChange?: boolean) =>
  researchRunner({
    runs,
    base: s.base,
    executor,
    allowCodeChange,
    schema: RunValueSchema,
    finish: async (run, t, dir) => {
      const final = await evaluateAgent(join(dir, 'policy.onnx'), {
        episodes: s.finalEpisodes,
        seed: run.seed,
        executor,
      });
      return { seconds: t.seconds, executions: t.executions, final };
    },
  });

/** Trains and evaluates every (row, seed) of `only` (row names; default all) on `seeds` (default the
 *  study's), seed by seed (`train: false`: none), then reports every finished run of the study. */
export async function runResearchStudy(
  s: ResearchStudy,
  runs: string,
  executor: Executor,
  o: {
    only?: string[];
    seeds?: number[];
    train?: boolean;
    log?: (line: string) => void;
    /** Keep finished runs that other code made (else they are refused). */
    allowCodeChange?: boolean;
  } = {},
) {
  const log = o.log ?? (() => {});
  const { seeds: _s, rows: _r, ...shared } = s;
  stampStudy(runs, { ...shared, base: modelHash(s.base, 'base'), heldout: HELDOUT_RESEARCH_TASKS }, s.rows);
  const rows = o.train === false ? [] : s.rows.filter((r) => !o.only || o.only.includes(r.name));
  const runner = runnerOf(s, runs, executor, o.allowCodeChange);
  for (const seed of o.seeds ?? s.seeds) {
    if (!rows.length) break;
    const base = await evalAgentCached(basePath(runs, seed), s.base, { episodes: s.finalEpisodes, seed, executor });
    log(`base, seed ${seed}: held-out test position ${meanPosition(base).toFixed(3)}`);
    for (const row of rows) {
      const run = studyRun(s, row, seed);
      await runner.train(run, log);
      log(`${run.name}: held-out test position ${meanPosition(runner.finished(run, true)!.final).toFixed(3)}`);
    }
  }
  return researchStudyReport(s, runs, o);
}

/** The row's runs whose record matches and whose seed's base evaluation is cached. */
function finishedRuns(s: ResearchStudy, runs: string, row: ResearchRow, allowCodeChange?: boolean) {
  return s.seeds.flatMap((seed) => {
    const run = studyRun(s, row, seed);
    const done = readFinished(runRecord(runs, run), run.spec, RunValueSchema, false, allowCodeChange);
    const base = done && readAgentEval(basePath(runs, seed), s.base, { episodes: s.finalEpisodes, seed });
    if (!done || !base) return [];
    return [{ seed, ...done, base, metrics: readMetrics(join(runs, run.name)) }];
  });
}
type Finished = ReturnType<typeof finishedRuns>[number];

/** The study's table: each row's finished runs, between seeds, against its seed's base and the rows it is
 *  paired with (same seeds). */
export function researchStudyReport(s: ResearchStudy, runs: string, o: { allowCodeChange?: boolean } = {}) {
  const done = new Map(s.rows.map((r) => [r.name, finishedRuns(s, runs, r, o.allowCodeChange)]));
  const rows = s.rows.map((row) => {
    const mine = done.get(row.name)!;
    const vsBase = (r: Finished) => paired(positions(r.final), positions(r.base), `${row.name}-s${r.seed} vs the base`);
    return {
      name: row.name,
      mode: row.mode,
      iterations: row.iterations,
      config: row.config,
      seeds: mine.map((r) => r.seed),
      position: across(mine.map((r) => meanPosition(r.final))),
      per_task: Object.fromEntries(
        HELDOUT_RESEARCH_TASKS.map((t) => [
          t,
          across(mine.map((r) => mean(r.final.find((x) => x.task === t)?.perEpisode ?? []))),
        ]),
      ),
      vs_base: across(mine.map((r) => vsBase(r).diff)),
      vs_base_pooled: paired(
        mine.flatMap((r) => positions(r.final)),
        mine.flatMap((r) => positions(r.base)),
        `${row.name} vs the base, seeds pooled`,
      ),
      versus: row.versus.map((name) => versus(name, mine, done.get(name)!)),
      executions: across(mine.map((r) => r.executions)),
      train_seconds: across(mine.map((r) => r.seconds)),
      corrections: {
        debias_changed: across(
          mine.map((r) => ratio(sumMetric(r.metrics, 'groups/debias_changed'), sumMetric(r.metrics, 'groups/wm'))),
        ),
        w_mean: across(mine.map((r) => meanMetric(r.metrics, 'denoise/w'))),
      },
      // per iteration, mean over seeds: the executed (anchor) groups' mean reward
      anchor_reward_curve: meanCurve(mine.map((r) => r.metrics.map((m: MetricLine) => metric(m, 'reward/anchor')))),
    };
  });
  const bases = s.seeds.flatMap((seed) => {
    const b = readAgentEval(basePath(runs, seed), s.base, { episodes: s.finalEpisodes, seed });
    return b ? [{ seed, position: meanPosition(b) }] : [];
  });
  return {
    format: 'wmrl-research-study/2',
    config: s,
    heldout: HELDOUT_RESEARCH_TASKS,
    base: { seeds: bases.map((b) => b.seed), position: across(bases.map((b) => b.position)) },
    rows,
  };
}
export type ResearchStudyReport = ReturnType<typeof researchStudyReport>;

/** A row's runs against another's, seed by seed: the position differences (study-stats.ts) and the
 *  other row's executions and training seconds over this row's (per seed, then between seeds). */
function versus(name: string, mine: Finished[], theirs: Finished[]) {
  const pairs = bySeed(mine, theirs);
  return {
    ...versusSeeds(name, pairs, (r) => positions(r.final)),
    fewer_executions: across(pairs.map(([a, b]) => ratio(b.executions, a.executions))),
    faster: across(pairs.map(([a, b]) => ratio(b.seconds, a.seconds))),
  };
}
