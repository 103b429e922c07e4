// The AutoResearch studies' runner (research study, research speedup): a run trains a base agent in
// process, counting executions and training seconds; its record (run.json) is a cache keyed by what
// decides the run, written last, so a run stopped before it starts over. Held-out evaluations in real
// execution are cached under a key of the agent's bytes, the tasks, the episodes and the sampling seed.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type Executor, wasExecuted } from '../autoresearch/index.ts';
import { trainSeconds } from '../core/metrics.ts';
import { mean } from '../core/stats.ts';
import type { ParamStore } from '../nn/params.ts';
import { loadPolicy } from '../policy/model.ts';
import { type Mode, resolveConfig, train } from '../trainer/index.ts';
import {
  HELDOUT_RESEARCH_TASKS,
  RESEARCH_CONFIG,
  RESEARCH_EVAL_SEED,
  researchEval,
  researchTrainSetup,
} from './research.ts';
import { cached, readCache, readFinished, writeCache } from './study-cache.ts';
import { modelHash, type Runner, runLabel, type StudyRun } from './study.ts';

/** A held-out evaluation (researchEval's result): per task, each episode's test position in
 *  evaluation-seed order, their mean and interval, and what the episodes ran. */
export const ResearchEvalSchema = z.array(
  z.object({
    task: z.string(),
    episodes: z.number().int(),
    testPosition: z.number(),
    ciLow: z.number(),
    ciHigh: z.number(),
    validShare: z.number(),
    reward: z.number(),
    statuses: z.record(z.string(), z.number()),
    executions: z.number(),
    perEpisode: z.array(z.number()),
  }),
);
export type ResearchEvaluation = z.output<typeof ResearchEvalSchema>;
export const positions = (e: ResearchEvaluation) => e.flatMap((t) => t.perEpisode);

/** What decides an AutoResearch run: mode, seed, iterations, trainer fields, the base agent's bytes and
 *  the held-out evaluation after it (with the studies' own fields in `extra`). */
export interface ResearchSpec {
  mode: Mode;
  seed: number;
  iterations: number;
  fields: Record<string, unknown>;
  base: string;
  heldout: readonly string[];
  extra: Record<string, unknown>;
}

/** A run of `row` on `seed` from the agent at `base`, its trainer fields over RESEARCH_CONFIG. */
export function researchRun(
  r: { name: string; row: string; mode: Mode; seed: number; iterations: number; fields: Record<string, unknown> },
  base: string,
  extra: Record<string, unknown>,
): StudyRun<ResearchSpec> {
  const fields = { ...RESEARCH_CONFIG, ...r.fields };
  const spec = { mode: r.mode, seed: r.seed, iterations: r.iterations, fields, base: modelHash(base, 'base agent') };
  return { ...r, spec: { ...spec, heldout: HELDOUT_RESEARCH_TASKS, extra } };
}

/** A policy kept during training (`keep`), with the clock and executions so far. */
export interface Kept {
  iteration: number;
  seconds: number;
  executions: number;
  params: ParamStore;
}

/** Trains `run` from the agent at `base` into `dir`; training seconds and executions, and the policies kept. */
export async function trainResearch(
  run: StudyRun<ResearchSpec>,
  o: {
    base: string;
    dir: string;
    executor: Executor;
    log: (l: string) => void;
    keep?: (iteration: number, run: StudyRun<ResearchSpec>) => boolean;
    /** Aborted: training stops after the current iteration. */
    signal?: AbortSignal;
  },
) {
  const { mode, seed, iterations, fields } = run.spec;
  const base = await loadPolicy(o.base);
  let executions = 0;
  const count = (r: { status: Parameters<typeof wasExecuted>[0] }) => {
    if (wasExecuted(r.status)) executions++;
  };
  const { tasks, worldModel } = researchTrainSetup({ mode, seed, executor: o.executor, onRun: count });
  const cfg = resolveConfig('default', fields, { mode, seed, iterations });
  const kept: Kept[] = [];
  let seconds = 0;
  const policy = { config: base.config, params: base.params, specHash: base.sidecar.specHash };
  await train({ tasks, worldModel, policy }, cfg, o.dir, {
    shouldStop: () => o.signal?.aborted === true,
    onIteration: (m) => {
      seconds += trainSeconds(m);
      o.log(
        `${run.name} iteration ${m.iteration}/${iterations}: anchor reward ${m['reward/anchor']?.toFixed(3) ?? 'n/a'}, ` +
          `${seconds.toFixed(0)} s, ${executions} executions`,
      );
    },
    onPolicy: (iteration, params) => {
      if (o.keep?.(iteration, run)) kept.push({ iteration, seconds, executions, params });
    },
  });
  return { seconds, executions, kept, config: base.config };
}
export type Trained = Awaited<ReturnType<typeof trainResearch>>;

/** The agent (a policy file, or a config and parameters) on `episodes` episodes per held-out task. */
export async function evaluateAgent(
  agent: string | { config: Trained['config']; params: ParamStore },
  o: { episodes: number; seed: number; executor: Executor },
): Promise<ResearchEvaluation> {
  const m = typeof agent === 'string' ? await loadPolicy(agent) : agent;
  return researchEval({ config: m.config, params: m.params, tasks: HELDOUT_RESEARCH_TASKS, ...o });
}

/** What decides an agent file's held-out evaluation: the protocol, its bytes, the episodes and the seed. */
export const agentEvalKey = (agent: string, o: { episodes: number; seed: number }) => ({
  protocol: 'research-heldout/1',
  first_seed: RESEARCH_EVAL_SEED,
  tasks: HELDOUT_RESEARCH_TASKS,
  episodes: o.episodes,
  seed: o.seed,
  agent: modelHash(agent, 'agent'),
});

/** The agent file's held-out evaluation, cached in `cache`. */
export function evalAgentCached(
  cache: string,
  agent: string,
  o: { episodes: number; seed: number; executor: Executor },
): Promise<ResearchEvaluation> {
  return cached(cache, agentEvalKey(agent, o), ResearchEvalSchema, () => evaluateAgent(agent, o));
}

/** The agent file's cached held-out evaluation, or null (none, or of other settings). */
export const readAgentEval = (cache: string, agent: string, o: { episodes: number; seed: number }) =>
  readCache(cache, agentEvalKey(agent, o), ResearchEvalSchema);

/** A run's record: run.json in its folder. */
export const runRecord = (runs: string, run: StudyRun<unknown>) => join(runs, run.name, 'run.json');

/** The in-process runner: a run whose record matches is kept; a record of other settings (or, unless
 *  `allowCodeChange`, made by other code) is an InputError; otherwise the run trains from its first
 *  iteration and `finish` makes its record. An aborted signal stops it after the current iteration, with
 *  no record (it starts over next time). */
export function researchRunner<S extends z.ZodType>(o: {
  runs: string;
  base: string;
  executor: Executor;
  schema: S;
  allowCodeChange?: boolean;
  keep?: (iteration: number, run: StudyRun<ResearchSpec>) => boolean;
  finish: (run: StudyRun<ResearchSpec>, t: Trained, dir: string) => Promise<z.output<S>>;
}): Runner<ResearchSpec> & { finished(run: StudyRun<ResearchSpec>, strict: boolean): z.output<S> | null } {
  const record = (run: StudyRun<ResearchSpec>) => runRecord(o.runs, run);
  const finished = (run: StudyRun<ResearchSpec>, strict: boolean) =>
    readFinished(record(run), run.spec, o.schema, strict, o.allowCodeChange);
  return {
    finished,
    async train(run, log, signal) {
      if (finished(run, true) !== null) return;
      const dir = join(o.runs, run.name);
      const stopped = () => new Error('stopped (another run failed)');
      try {
        if (signal?.aborted) throw stopped();
        rmSync(dir, { recursive: true, force: true }); // its executions count starts with its first iteration
        const t = await trainResearch(run, { base: o.base, dir, executor: o.executor, log, keep: o.keep, signal });
        if (signal?.aborted) throw stopped();
        writeCache(record(run), run.spec, await o.finish(run, t, dir));
      } catch (e) {
        if (e instanceof Error) e.message = `${runLabel(run)}: ${e.message}`;
        throw e;
      }
    },
  };
}

export const meanPosition = (e: ResearchEvaluation) => mean(positions(e));
