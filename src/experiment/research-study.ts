// The AutoResearch study (docs/autoresearch.md): named rows (a mode, its iterations and trainer fields)
// trained from one base agent on several seeds, each run evaluated on the held-out tasks in real
// execution right after it trains, on the same evaluation episodes as the base of its seed; a table of
// between-seed means with 95% t intervals, per-seed paired differences against other rows, and the
// executions and training seconds each row needs against them. Resumable: a finished run (run.json) is
// kept; a run stopped before its run.json starts over.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type Executor, wasExecuted } from '../autoresearch/index.ts';
import { readInputJson } from '../core/input-file.ts';
import { type TrainMetrics, trainSeconds } from '../core/metrics.ts';
import { mean } from '../core/stats.ts';
import { pairedDifference } from '../eval/index.ts';
import { loadPolicy } from '../policy/model.ts';
import { commitFiles } from '../store/index.ts';
import { resolveConfig, train } from '../trainer/index.ts';
import { across, checkRows, meanCurve, StudyRowSchema, stampStudy } from './corrections.ts';
import { HELDOUT_RESEARCH_TASKS, RESEARCH_CONFIG, researchEval, researchTrainSetup } from './research.ts';
import { metricsOf } from './speedup-runs.ts';

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

const EvalSchema = z.array(z.object({ task: z.string(), perEpisode: z.array(z.number()) }));
const RunSchema = z.object({
  row: z.string(),
  seed: z.number(),
  iterations: z.number(),
  seconds: z.number(),
  executions: z.number(),
  final: EvalSchema,
});
type Run = z.infer<typeof RunSchema>;
type Evaluation = z.infer<typeof EvalSchema>;

const runDir = (runs: string, row: string, seed: number) => join(runs, `${row}-s${seed}`);
const basePath = (runs: string, seed: number) => join(runs, `base-s${seed}.json`);
const positions = (e: Evaluation) => e.flatMap((t) => t.perEpisode);

/** Trains and evaluates every (row, seed) of `only` (row names; default all) on `seeds` (default the
 *  study's), seed by seed (`train: false`: none), then reports every finished run of the study. */
export async function runResearchStudy(
  s: ResearchStudy,
  runs: string,
  executor: Executor,
  o: { only?: string[]; seeds?: number[]; train?: boolean; log?: (line: string) => void } = {},
) {
  const log = o.log ?? (() => {});
  stampStudy(runs, s, { heldout: HELDOUT_RESEARCH_TASKS.join(',') });
  const rows = o.train === false ? [] : s.rows.filter((r) => !o.only || o.only.includes(r.name));
  for (const seed of o.seeds ?? s.seeds) {
    if (!rows.length) break;
    await baseEval(s, runs, seed, executor, log);
    for (const row of rows) await researchRun(s, row, seed, runs, executor, log);
  }
  return researchStudyReport(s, runs);
}

async function evaluate(s: ResearchStudy, policy: string, seed: number, executor: Executor) {
  const m = await loadPolicy(policy);
  const opts = { config: m.config, params: m.params, episodes: s.finalEpisodes, executor, seed };
  return researchEval({ ...opts, tasks: HELDOUT_RESEARCH_TASKS });
}

async function baseEval(s: ResearchStudy, runs: string, seed: number, executor: Executor, log: (l: string) => void) {
  const path = basePath(runs, seed);
  if (existsSync(path)) return;
  const final = await evaluate(s, s.base, seed, executor);
  commitFiles([{ path, data: `${JSON.stringify(final, null, 1)}\n` }]);
  log(`base, seed ${seed}: held-out test position ${mean(positions(final)).toFixed(3)}`);
}

async function researchRun(
  s: ResearchStudy,
  row: ResearchRow,
  seed: number,
  runs: string,
  executor: Executor,
  log: (l: string) => void,
): Promise<void> {
  const dir = runDir(runs, row.name, seed);
  if (existsSync(join(dir, 'run.json'))) return;
  rmSync(dir, { recursive: true, force: true }); // its executions count starts with its first iteration
  const base = await loadPolicy(s.base);
  let executions = 0;
  const { tasks, worldModel } = researchTrainSetup({
    mode: row.mode,
    seed,
    executor,
    onRun: (r) => {
      if (wasExecuted(r.status)) executions++;
    },
  });
  const fields = { ...RESEARCH_CONFIG, ...s.config, ...row.config };
  const cfg = resolveConfig('default', fields, { mode: row.mode, seed, iterations: row.iterations });
  let seconds = 0;
  const policy = { config: base.config, params: base.params, specHash: base.sidecar.specHash };
  await train({ tasks, worldModel, policy }, cfg, dir, {
    onIteration: (m) => {
      seconds += trainSeconds(m);
      log(
        `${row.name}-s${seed} iteration ${m.iteration}/${row.iterations}: anchor reward ` +
          `${m['reward/anchor'].toFixed(3)}, ${seconds.toFixed(0)} s, ${executions} executions`,
      );
    },
  });
  const final = await evaluate(s, join(dir, 'policy.onnx'), seed, executor);
  const run: Run = { row: row.name, seed, iterations: row.iterations, seconds, executions, final };
  commitFiles([{ path: join(dir, 'run.json'), data: `${JSON.stringify(run, null, 1)}\n` }]);
  log(`${row.name}-s${seed}: held-out test position ${mean(positions(final)).toFixed(3)}`);
}

function finishedRuns(s: ResearchStudy, runs: string, row: ResearchRow) {
  return s.seeds.flatMap((seed) => {
    const path = join(runDir(runs, row.name, seed), 'run.json');
    const base = basePath(runs, seed);
    if (!existsSync(path) || !existsSync(base)) return [];
    const run = readInputJson(path, RunSchema, 'research run');
    if (run.iterations !== row.iterations) return [];
    const metrics = metricsOf(runDir(runs, row.name, seed));
    return [{ ...run, base: readInputJson(base, EvalSchema, 'base evaluation'), metrics }];
  });
}
type Finished = ReturnType<typeof finishedRuns>[number];

/** The study's table: each row's finished runs, between seeds, against its seed's base and the rows it is
 *  paired with (same seeds): the position difference, and how many times the executions and training
 *  seconds of the other row this row needs less. */
export function researchStudyReport(s: ResearchStudy, runs: string) {
  const done = new Map(s.rows.map((r) => [r.name, finishedRuns(s, runs, r)]));
  const sum = (r: Finished, key: keyof TrainMetrics) => r.metrics.reduce((a, m) => a + Number(m[key] ?? 0), 0);
  const rows = s.rows.map((row) => {
    const mine = done.get(row.name)!;
    return {
      name: row.name,
      mode: row.mode,
      iterations: row.iterations,
      config: row.config,
      seeds: mine.map((r) => r.seed),
      position: across(mine.map((r) => mean(positions(r.final)))),
      per_task: Object.fromEntries(
        HELDOUT_RESEARCH_TASKS.map((t) => [
          t,
          across(mine.map((r) => mean(r.final.find((x) => x.task === t)?.perEpisode ?? []))),
        ]),
      ),
      vs_base: across(mine.map((r) => pairedDifference(positions(r.final), positions(r.base)).diff)),
      vs_base_pooled: pairedDifference(
        mine.flatMap((r) => positions(r.final)),
        mine.flatMap((r) => positions(r.base)),
      ),
      versus: row.versus.map((name) => versus(name, mine, done.get(name)!)),
      executions: across(mine.map((r) => r.executions)),
      train_seconds: across(mine.map((r) => r.seconds)),
      corrections: {
        debias_changed: across(mine.map((r) => sum(r, 'groups/debias_changed') / Math.max(1, sum(r, 'groups/wm')))),
        w_mean: across(mine.map((r) => sum(r, 'denoise/w') / Math.max(1, r.metrics.length))),
      },
      // per iteration, mean over seeds: the executed (anchor) groups' mean reward
      anchor_reward_curve: meanCurve(mine.map((r) => r.metrics.map((m) => m['reward/anchor']))),
    };
  });
  const bases = s.seeds.filter((seed) => existsSync(basePath(runs, seed)));
  const base = bases.map((seed) => mean(positions(readInputJson(basePath(runs, seed), EvalSchema, 'base'))));
  return {
    format: 'wmrl-research-study/1',
    config: s,
    heldout: HELDOUT_RESEARCH_TASKS,
    base: { seeds: bases, position: across(base) },
    rows,
  };
}
export type ResearchStudyReport = ReturnType<typeof researchStudyReport>;

/** A row's runs against another's, seed by seed: the mean of per-seed paired position differences with
 *  its t interval over seeds, the pooled paired difference, and the other row's executions and training
 *  seconds over this row's (per seed, then between seeds). */
function versus(name: string, mine: Finished[], theirs: Finished[]) {
  const pairs = mine.flatMap((a) => {
    const b = theirs.find((x) => x.seed === a.seed);
    return b ? [{ a, b }] : [];
  });
  return {
    row: name,
    seeds: pairs.length,
    per_seed: across(pairs.map(({ a, b }) => pairedDifference(positions(a.final), positions(b.final)).diff)),
    pooled: pairedDifference(
      pairs.flatMap(({ a }) => positions(a.final)),
      pairs.flatMap(({ b }) => positions(b.final)),
    ),
    fewer_executions: across(pairs.map(({ a, b }) => b.executions / Math.max(1, a.executions))),
    faster: across(pairs.map(({ a, b }) => b.seconds / Math.max(1e-9, a.seconds))),
  };
}
