// `wmrl experiment speedup --suite autoresearch`, a configuration of the study core: real-execution GRPO
// vs WMRL on the AutoResearch tasks, one seed. Each mode trains the base agent in process; its policy is
// kept every `evalEvery` iterations and, after training (off the clock), evaluated on the held-out tasks
// in real execution. Curves: held-out test position vs training wall-clock and vs executions; the
// speedup is the studies' one (study-speedup.ts): real's cost to reach its own fitted final position over
// wmrl's. Resumable: a mode's run.json (keyed by everything that decides it) and the evaluations are kept.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Executor } from '../autoresearch/index.ts';
import type { PairedDiff } from '../eval/index.ts';
import { MODES, type Mode } from '../trainer/index.ts';
import { HELDOUT_RESEARCH_TASKS } from './research.ts';
import {
  evalAgentCached,
  evaluateAgent,
  positions,
  type ResearchEvaluation,
  ResearchEvalSchema,
  researchRun,
  researchRunner,
} from './research-runner.ts';
import { normalRedraw, type SpeedupInterval, speedupInterval } from './study-speedup.ts';
import { paired } from './study-stats.ts';

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

/** The agent both modes start from. */
export const RESEARCH_BASE_AGENT = 'models/agent-base.onnx';

const CurvePointSchema = z.object({
  iteration: z.number(),
  seconds: z.number(),
  executions: z.number(),
  position: z.number(),
  ciLow: z.number(),
  ciHigh: z.number(),
  perTask: ResearchEvalSchema,
});
export type ResearchCurvePoint = z.output<typeof CurvePointSchema>;
const ModeRunSchema = z.object({
  mode: z.enum(MODES),
  iterations: z.number(),
  seconds: z.number(),
  executions: z.number(),
  curve: z.array(CurvePointSchema),
});
export type ResearchModeRun = z.output<typeof ModeRunSchema>;

/** Pooled mean position over tasks, its interval from the tasks' own. */
const overall = (r: ResearchEvaluation) => {
  const n = r.reduce((s, x) => s + x.episodes, 0);
  const m = r.reduce((s, x) => s + x.testPosition * x.episodes, 0) / n;
  const half = Math.sqrt(r.reduce((s, x) => s + ((x.ciHigh - x.ciLow) / 2) ** 2 * x.episodes ** 2, 0)) / n;
  return { position: m, ciLow: m - half, ciHigh: m + half };
};
const point = (
  iteration: number,
  seconds: number,
  executions: number,
  perTask: ResearchEvaluation,
): ResearchCurvePoint => ({
  iteration,
  seconds,
  executions,
  ...overall(perTask),
  perTask,
});

export async function runResearchSpeedup(
  c: ResearchSpeedupConfig,
  runs: string,
  log: (s: string) => void,
  o: { allowCodeChange?: boolean } = {},
) {
  mkdirSync(runs, { recursive: true });
  const executor = new Executor({ concurrency: 2 });
  const curveEval = { episodes: c.episodes, seed: c.seed, executor };
  const baseEval = await evalAgentCached(join(runs, `base-eval-seed${c.seed}.json`), RESEARCH_BASE_AGENT, curveEval);
  const base = point(0, 0, 0, baseEval);
  log(`base agent held-out test position ${base.position.toFixed(3)}`);
  const runner = researchRunner({
    runs,
    base: RESEARCH_BASE_AGENT,
    executor,
    schema: ModeRunSchema,
    allowCodeChange: o.allowCodeChange,
    keep: (it, run) => it % c.evalEvery === 0 || it === run.spec.iterations,
    finish: async (run, t) => {
      const curve: ResearchCurvePoint[] = [];
      for (const k of t.kept) {
        curve.push(
          point(
            k.iteration,
            k.seconds,
            k.executions,
            await evaluateAgent({ config: t.config, params: k.params }, curveEval),
          ),
        );
        log(`${run.name} held-out after ${k.iteration} iterations: test position ${curve.at(-1)!.position.toFixed(3)}`);
      }
      return { mode: run.mode, iterations: run.spec.iterations, seconds: t.seconds, executions: t.executions, curve };
    },
  });
  const modeRun = async (mode: Mode, iterations: number) => {
    const name = `${mode}-seed${c.seed}`;
    const run = researchRun({ name, row: mode, mode, seed: c.seed, iterations, fields: {} }, RESEARCH_BASE_AGENT, {
      evalEvery: c.evalEvery,
      episodes: c.episodes,
    });
    await runner.train(run, log);
    return runner.finished(run, true)!;
  };
  const modes = [await modeRun('real', c.realIterations), await modeRun('wmrl', c.wmrlIterations)];
  const finals: [string, ResearchEvaluation][] = [];
  for (const [agent, path] of [
    ['base', RESEARCH_BASE_AGENT],
    ['real', join(runs, `real-seed${c.seed}`, 'policy.onnx')],
    ['wmrl', join(runs, `wmrl-seed${c.seed}`, 'policy.onnx')],
  ]) {
    const cache = join(runs, `final-${agent}-seed${c.seed}.json`);
    finals.push([agent, await evalAgentCached(cache, path, { episodes: c.finalEpisodes, seed: c.seed, executor })]);
  }
  return researchSpeedupReport(c, base, modes, finals);
}

/** The report: the curves, the final paired evaluation (base, real, wmrl on the same episodes) and
 *  wmrl's speedup over real in training wall-clock and in executions. */
export function researchSpeedupReport(
  c: ResearchSpeedupConfig,
  base: ResearchCurvePoint,
  runs: ResearchModeRun[],
  finals: [string, ResearchEvaluation][],
) {
  const flat = (agent: string) => positions(finals.find(([a]) => a === agent)![1]);
  const final = finals.map(([agent, perTask]) => ({
    agent,
    ...overall(perTask),
    perTask,
    vsBase: paired(flat(agent), flat('base'), `final evaluation of ${agent} vs base`) as PairedDiff,
    vsReal: agent === 'real' ? null : paired(flat(agent), flat('real'), `final evaluation of ${agent} vs real`),
  }));
  const [real, wmrl] = ['real', 'wmrl'].map((m) => runs.find((r) => r.mode === m)!);
  return { config: c, heldout: HELDOUT_RESEARCH_TASKS, base, runs, final, speedup: speedups(c.seed, real, wmrl) };
}
export type ResearchSpeedupReport = ReturnType<typeof researchSpeedupReport>;

/** wmrl's speedup over real in training seconds and in executions, each point's position redrawn from
 *  its interval (normal, the standard error from its 95% bounds). */
function speedups(seed: number, real: ResearchModeRun, wmrl: ResearchModeRun) {
  const trained = (r: ResearchModeRun) => r.curve.filter((p) => p.iteration > 0);
  const se = (r: ResearchModeRun) => trained(r).map((p) => (p.ciHigh - p.ciLow) / (2 * 1.959963984540054));
  const redraw = { real: normalRedraw(se(real)), run: normalRedraw(se(wmrl)) };
  const on = (axis: 'seconds' | 'executions', k: number): SpeedupInterval => {
    const curve = (r: ResearchModeRun) => ({ x: trained(r).map((p) => p[axis]), y: trained(r).map((p) => p.position) });
    return speedupInterval(curve(real), curve(wmrl), redraw, [seed, k]);
  };
  return { wall: on('seconds', 0), executions: on('executions', 1) };
}
