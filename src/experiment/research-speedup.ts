// `wmrl experiment speedup --suite autoresearch`: real-execution GRPO vs WMRL on the AutoResearch tasks.
// Each mode trains the base agent in process; its policy is kept every `evalEvery` iterations and, after
// training (off the clock), evaluated on the held-out tasks in real execution. Curves: held-out test
// leaderboard position vs training wall-clock and vs executions; speedup = real's training time (and
// executions) over wmrl's at the first point that reaches real's final position. Resumable: a finished
// mode's run.json is reused.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Executor, wasExecuted } from '../autoresearch/index.ts';
import { InputError } from '../core/errors.ts';
import { trainSeconds } from '../core/metrics.ts';
import type { ParamStore } from '../nn/params.ts';
import { loadPolicy } from '../policy/model.ts';
import { type Mode, resolveConfig, train } from '../trainer/index.ts';
import {
  HELDOUT_RESEARCH_TASKS,
  RESEARCH_CONFIG,
  type ResearchEvalResult,
  researchEval,
  researchTrainSetup,
} from './research.ts';

export const ResearchSpeedupSchema = z
  .object({
    seed: z.number().int().min(0).default(0).describe('run seed'),
    realIterations: z.number().int().positive().default(8).describe('iterations of real-execution GRPO'),
    wmrlIterations: z.number().int().positive().default(24).describe('iterations of WMRL'),
    evalEvery: z
      .number()
      .int()
      .positive()
      .default(4)
      .describe('keep the policy every this many iterations for the held-out curve'),
    episodes: z.number().int().positive().default(8).describe('held-out episodes per task and curve point'),
    finalEpisodes: z
      .number()
      .int()
      .positive()
      .default(32)
      .describe('held-out episodes per task of the final paired evaluation (base, real, wmrl on the same seeds)'),
  })
  .strict();
export type ResearchSpeedupConfig = z.output<typeof ResearchSpeedupSchema>;

interface CurvePoint {
  iteration: number;
  seconds: number;
  executions: number;
  position: number;
  ciLow: number;
  ciHigh: number;
  perTask: ResearchEvalResult[];
}
export interface ResearchModeRun {
  mode: Mode;
  iterations: number;
  seconds: number;
  executions: number;
  curve: CurvePoint[];
}
/** A paired difference of per-episode test positions (same evaluation seeds), with a 95% interval. */
export interface Paired {
  diff: number;
  ciLow: number;
  ciHigh: number;
  episodes: number;
}
export interface FinalEval {
  agent: string;
  position: number;
  ciLow: number;
  ciHigh: number;
  perTask: ResearchEvalResult[];
  vsBase: Paired;
  vsReal: Paired | null;
}

export interface ResearchSpeedupReport {
  config: ResearchSpeedupConfig;
  heldout: string[];
  base: CurvePoint;
  runs: ResearchModeRun[];
  final: FinalEval[];
  /** wmrl reaching real's final held-out position: real's training time / wmrl's (null: not reached). */
  speedupWall: number | null;
  speedupExecutions: number | null;
}

const overall = (r: ResearchEvalResult[]) => {
  const n = r.reduce((s, x) => s + x.episodes, 0);
  const m = r.reduce((s, x) => s + x.testPosition * x.episodes, 0) / n;
  const half = Math.sqrt(r.reduce((s, x) => s + ((x.ciHigh - x.ciLow) / 2) ** 2 * x.episodes ** 2, 0)) / n;
  return { position: m, ciLow: m - half, ciHigh: m + half };
};

async function runMode(
  mode: Mode,
  iterations: number,
  c: ResearchSpeedupConfig,
  dir: string,
  executor: Executor,
  log: (s: string) => void,
): Promise<ResearchModeRun> {
  const done = join(dir, 'run.json');
  if (existsSync(done)) {
    const run = JSON.parse(readFileSync(done, 'utf8')) as ResearchModeRun;
    if (run.iterations !== iterations)
      throw new InputError(
        `${done}: a finished ${mode} run of ${run.iterations} iterations, not ${iterations} ` +
          '(another --runs folder, or delete it)',
      );
    return run;
  }
  const base = await loadPolicy('models/agent-base.onnx');
  let executions = 0;
  const { tasks, worldModel } = researchTrainSetup({
    mode,
    seed: c.seed,
    executor,
    onRun: (o) => {
      if (wasExecuted(o.status)) executions++;
    },
  });
  const cfg = resolveConfig('default', RESEARCH_CONFIG, { mode, seed: c.seed, iterations });
  const kept: { iteration: number; seconds: number; executions: number; params: ParamStore }[] = [];
  let seconds = 0;
  await train(
    { tasks, worldModel, policy: { config: base.config, params: base.params, specHash: base.sidecar.specHash } },
    cfg,
    dir,
    {
      onIteration: (m) => {
        seconds += trainSeconds(m);
        log(
          `${mode} iteration ${m.iteration}/${iterations}: ` +
            `reward anchor ${m['reward/anchor'].toFixed(3)} wm ${m['reward/wm'].toFixed(3)}, ` +
            `${seconds.toFixed(0)} s, ${executions} executions`,
        );
      },
      onPolicy: (it, params) => {
        if (it % c.evalEvery === 0 || it === iterations) kept.push({ iteration: it, seconds, executions, params });
      },
    },
  );
  const curve: CurvePoint[] = [];
  for (const k of kept) {
    const perTask = await researchEval({
      config: base.config,
      params: k.params,
      tasks: HELDOUT_RESEARCH_TASKS,
      episodes: c.episodes,
      executor,
      seed: c.seed,
    });
    curve.push({ iteration: k.iteration, seconds: k.seconds, executions: k.executions, ...overall(perTask), perTask });
    log(`${mode} held-out after ${k.iteration} iterations: test position ${curve.at(-1)!.position.toFixed(3)}`);
  }
  const run: ResearchModeRun = { mode, iterations, seconds, executions, curve };
  writeFileSync(done, `${JSON.stringify(run, null, 1)}\n`);
  return run;
}

export async function runResearchSpeedup(
  c: ResearchSpeedupConfig,
  runs: string,
  log: (s: string) => void,
): Promise<ResearchSpeedupReport> {
  mkdirSync(runs, { recursive: true });
  const executor = new Executor({ concurrency: 2 });
  const basePath = join(runs, `base-eval-seed${c.seed}.json`);
  let base: CurvePoint;
  if (existsSync(basePath)) base = JSON.parse(readFileSync(basePath, 'utf8')) as CurvePoint;
  else {
    const m = await loadPolicy('models/agent-base.onnx');
    const perTask = await researchEval({
      config: m.config,
      params: m.params,
      tasks: HELDOUT_RESEARCH_TASKS,
      episodes: c.episodes,
      executor,
      seed: c.seed,
    });
    base = { iteration: 0, seconds: 0, executions: 0, ...overall(perTask), perTask };
    writeFileSync(basePath, `${JSON.stringify(base, null, 1)}\n`);
  }
  log(`base agent held-out test position ${base.position.toFixed(3)}`);
  const real = await runMode('real', c.realIterations, c, join(runs, `real-seed${c.seed}`), executor, log);
  const wmrl = await runMode('wmrl', c.wmrlIterations, c, join(runs, `wmrl-seed${c.seed}`), executor, log);
  const finals = await finalEvals(
    c,
    runs,
    executor,
    [
      ['base', 'models/agent-base.onnx'],
      ['real', join(runs, `real-seed${c.seed}`, 'policy.onnx')],
      ['wmrl', join(runs, `wmrl-seed${c.seed}`, 'policy.onnx')],
    ],
    log,
  );
  const target = real.curve.at(-1)!.position;
  const reach = [base, ...wmrl.curve].find((p) => p.iteration > 0 && p.position >= target);
  return {
    config: c,
    heldout: HELDOUT_RESEARCH_TASKS,
    base,
    runs: [real, wmrl],
    final: finals,
    speedupWall: reach ? real.seconds / reach.seconds : null,
    speedupExecutions: reach ? real.executions / Math.max(1, reach.executions) : null,
  };
}

function paired(a: number[], b: number[]): Paired {
  const d = a.map((x, i) => x - b[i]);
  const m = d.reduce((s, x) => s + x, 0) / d.length;
  const sd = Math.sqrt(d.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, d.length - 1));
  const half = (1.96 * sd) / Math.sqrt(d.length);
  return { diff: m, ciLow: m - half, ciHigh: m + half, episodes: d.length };
}

/** Base, real and wmrl on the same `finalEpisodes` evaluation seeds per held-out task (cached). */
async function finalEvals(
  c: ResearchSpeedupConfig,
  runs: string,
  executor: Executor,
  agents: [string, string][],
  log: (s: string) => void,
): Promise<FinalEval[]> {
  const results: { agent: string; perTask: ResearchEvalResult[] }[] = [];
  for (const [agent, path] of agents) {
    const cache = join(runs, `final-${agent}-seed${c.seed}.json`);
    if (!existsSync(cache)) {
      const m = await loadPolicy(path);
      const perTask = await researchEval({
        config: m.config,
        params: m.params,
        tasks: HELDOUT_RESEARCH_TASKS,
        episodes: c.finalEpisodes,
        executor,
        seed: c.seed,
      });
      writeFileSync(cache, `${JSON.stringify(perTask, null, 1)}\n`);
      log(`final evaluation of ${agent}: test position ${overall(perTask).position.toFixed(3)}`);
    }
    results.push({ agent, perTask: JSON.parse(readFileSync(cache, 'utf8')) as ResearchEvalResult[] });
  }
  const flat = (agent: string) => results.find((r) => r.agent === agent)!.perTask.flatMap((t) => t.perEpisode);
  return results.map((r) => ({
    agent: r.agent,
    ...overall(r.perTask),
    perTask: r.perTask,
    vsBase: paired(flat(r.agent), flat('base')),
    vsReal: r.agent === 'real' ? null : paired(flat(r.agent), flat('real')),
  }));
}

export function researchSpeedupTable(r: ResearchSpeedupReport): string {
  const row = (name: string, it: number, s: number, ex: number, p: CurvePoint) =>
    `| ${name} | ${it} | ${s.toFixed(0)} | ${ex} | ` +
    `${p.position.toFixed(3)} [${p.ciLow.toFixed(3)}, ${p.ciHigh.toFixed(3)}] | ` +
    `${p.perTask.map((t) => `${t.task} ${t.testPosition.toFixed(3)}`).join(', ')} |`;
  const reached =
    r.speedupWall === null
      ? 'not within its run'
      : `${r.speedupWall.toFixed(2)}x faster in wall-clock, ${r.speedupExecutions!.toFixed(2)}x fewer executions`;
  return [
    `| agent | iterations | training wall-clock (s) | executions | held-out test position [95%] | per task |`,
    '|---|---|---|---|---|---|',
    row('base', 0, 0, 0, r.base),
    ...r.runs.map((m) => row(m.mode, m.iterations, m.seconds, m.executions, m.curve.at(-1)!)),
    '',
    `Final paired evaluation (${r.config.finalEpisodes} episodes per held-out task, the same seeds for every agent):`,
    '',
    '| agent | held-out test position [95%] | vs base [95%] | vs real [95%] |',
    '|---|---|---|---|',
    ...r.final.map(
      (f) =>
        `| ${f.agent} | ${f.position.toFixed(3)} [${f.ciLow.toFixed(3)}, ${f.ciHigh.toFixed(3)}] | ` +
        `${f.agent === 'base' ? '0' : pairText(f.vsBase)} | ${f.vsReal ? pairText(f.vsReal) : '0'} |`,
    ),
    '',
    `wmrl reaches real's final held-out position: ${reached}.`,
  ].join('\n');
}

/** report-seedS.json and seedS.md (the tables, how they were made) in `dir`. */
export function writeResearchReport(
  dir: string,
  r: ResearchSpeedupReport,
  command: string,
): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `report-seed${r.config.seed}.json`),
    md = join(dir, `seed${r.config.seed}.md`);
  writeFileSync(json, `${JSON.stringify(r, null, 1)}\n`);
  const curve = (m: ResearchModeRun) =>
    m.curve.map(
      (p) =>
        `| ${m.mode} | ${p.iteration} | ${p.seconds.toFixed(0)} | ${p.executions} | ` +
        `${p.position.toFixed(3)} [${p.ciLow.toFixed(3)}, ${p.ciHigh.toFixed(3)}] |`,
    );
  writeFileSync(
    md,
    [
      '# AutoResearch: real-execution GRPO vs WMRL',
      '',
      `Made by \`${command}\` (seed ${r.config.seed}). Held-out tasks: ${r.heldout.join(', ')}; ` +
        `${r.config.episodes} evaluation episodes per task and point, seeds disjoint from training. Position: ` +
        "the test-score leaderboard position of each episode's submitted run (its best validation position), " +
        'mean over episodes, 95% normal interval. Wall-clock: training only (evaluation excluded).',
      '',
      researchSpeedupTable(r),
      '',
      '## Curves',
      '',
      '| mode | iteration | training wall-clock (s) | executions | held-out test position [95%] |',
      '|---|---|---|---|---|',
      ...r.runs.flatMap(curve),
      '',
    ].join('\n'),
  );
  return { json, md };
}

const pairText = (p: Paired) =>
  `${p.diff >= 0 ? '+' : ''}${p.diff.toFixed(3)} [${p.ciLow.toFixed(3)}, ${p.ciHigh.toFixed(3)}]`;
