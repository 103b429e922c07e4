// The speedup experiment's runs (src/experiment/speedup.ts): each (mode, seed) trained in its own folder of
// the runs folder by a `wmrl train` child process, fresh or resumed, at most `jobs` at once; what is read
// back from a run's metrics.jsonl (the learning curve, the seconds per part of the training clock); and
// held-out evaluations cached beside the runs. The corrections study (corrections.ts) runs the same way.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseInput, parseInputJsonText, readInputJson } from '../core/input-file.ts';
import {
  type TrainClockKey,
  type TrainMetricKey,
  type TrainMetrics,
  TrainMetricsSchema,
  trainSeconds,
} from '../core/metrics.ts';
import { canonicalJson } from '../core/spec.ts';
import type { PolicyResult } from '../eval/index.ts';
import type { Scene } from '../scene/index.ts';
import { commitFiles } from '../store/index.ts';
import type { Mode } from '../trainer/index.ts';
import type { SpeedupConfig, SpeedupPaths } from './speedup.ts';
import { heldoutResult } from './tabletop.ts';

/** One point of a learning curve: held-out success after `iteration` updates. */
export interface CurvePoint {
  iteration: number;
  seconds: number;
  physicsSteps: number;
  success: number;
  low: number;
  high: number;
}

export const runName = (mode: Mode, seed: number) => `${mode.replace('+', '-')}-seed${seed}`;
const isModel = (mode: Mode) => mode !== 'real';

/** Lines of a run's metrics.jsonl (an unreadable line is an InputError naming the file). */
export function metricsOf(dir: string): TrainMetrics[] {
  const path = join(dir, 'metrics.jsonl');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l, i) =>
      parseInput(parseInputJsonText(path, l, 'metrics line'), TrainMetricsSchema, `${path} line ${i + 1}`),
    );
}

/** What a learning curve reads of a metrics line. */
type CurveLine = Pick<
  TrainMetrics,
  | 'iteration'
  | 'steps/physics'
  | TrainClockKey
  | 'eval/success'
  | 'eval/ci_low'
  | 'eval/ci_high'
  | 'eval_initial/success'
  | 'eval_initial/ci_low'
  | 'eval_initial/ci_high'
>;

/** The training clock and physics steps at each evaluation of a run (evaluation itself is off the clock). */
export function curveOf(metrics: readonly CurveLine[]): CurvePoint[] {
  let seconds = 0;
  const out: CurvePoint[] = [];
  for (const m of metrics) {
    if (m['eval_initial/success'] !== undefined)
      out.push({
        iteration: 0,
        seconds: 0,
        physicsSteps: 0,
        success: m['eval_initial/success'],
        low: m['eval_initial/ci_low']!,
        high: m['eval_initial/ci_high']!,
      });
    seconds += trainSeconds(m);
    if (m['eval/success'] !== undefined)
      out.push({
        iteration: m.iteration,
        seconds,
        physicsSteps: m['steps/physics'],
        success: m['eval/success'],
        low: m['eval/ci_low']!,
        high: m['eval/ci_high']!,
      });
  }
  return out;
}

/** The report's time components and the metrics they sum. */
export const TIME = {
  physics: 'time/physics_s',
  world_model: 'time/world_model_s',
  training: 'time/training_s',
  refresh: 'time/refresh_s',
  eval: 'time/eval_s',
  fidelity: 'time/fidelity_s',
} as const satisfies Record<string, TrainMetricKey>;
export type TimeKey = (typeof TIME)[keyof typeof TIME];

/** Each time metric summed over a run. */
export function secondsOf(metrics: readonly TrainMetrics[]): Record<TimeKey, number> {
  return Object.fromEntries(Object.values(TIME).map((key) => [key, metrics.reduce((s, m) => s + m[key], 0)])) as Record<
    TimeKey,
    number
  >;
}

/** One training run of an experiment: its folder name in the runs folder, and what it trains with. */
export interface RunSpec {
  name: string;
  mode: Mode;
  seed: number;
  iterations: number;
  /** Trainer config fields over the preset (the run's --config file). */
  fields: Record<string, unknown>;
  tasks: readonly string[];
  preset: string;
}

/** The speedup experiment's run of (mode, seed). */
export function speedupRun(cfg: SpeedupConfig, mode: Mode, seed: number): RunSpec {
  const iterations = isModel(mode) ? cfg.iterations.model : cfg.iterations.real;
  const evalEvery = isModel(mode) ? cfg.evalEvery.model : cfg.evalEvery.real;
  const fields = { evalEvery, evalEpisodes: cfg.evalEpisodes };
  return { name: runName(mode, seed), mode, seed, iterations, fields, tasks: cfg.tasks, preset: cfg.preset };
}

/** Runs `wmrl train` for one run: a fresh run, or --resume of an interrupted one; nothing if it finished. */
export function trainRun(p: SpeedupPaths, run: RunSpec, log: (line: string) => void): Promise<void> {
  const { name, mode, seed, iterations } = run;
  const dir = join(p.runs, name);
  if (metricsOf(dir).length >= iterations && existsSync(join(dir, 'policy.onnx'))) return Promise.resolve();
  const resume = existsSync(join(dir, 'checkpoint.json'));
  if (!resume) rmSync(dir, { recursive: true, force: true }); // started but never checkpointed
  const configPath = join(p.runs, `${name}.config.json`);
  commitFiles([{ path: configPath, data: `${JSON.stringify({ ...run.fields, iterations }, null, 2)}\n` }]);
  const args = resume
    ? ['train', '--resume', dir]
    : [
        'train',
        '--mode',
        mode,
        '--seed',
        String(seed),
        '--out',
        dir,
        '--preset',
        run.preset,
        '--config',
        configPath,
        '--task',
        run.tasks.join(','),
        '--policy',
        p.policy,
        '--world-model',
        p.worldModel,
        ...(p.scene ? ['--scene', p.scene] : []),
      ];
  log(`${resume ? 'resuming' : 'training'} ${name} (${iterations} iterations)`);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [p.bin, ...args, ...(p.trainArgs ?? []), '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    let partial = '';
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000);
      // the child's progress lines (it has no terminal) go to the experiment's log
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (/^train \d+\/\d+/.test(line)) log(`${name}: ${line}`);
    });
    child.stdout.resume();
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0
        ? done()
        : fail(
            new Error(`wmrl ${args.join(' ')} exited with ${code}:\n${err.trim().split('\n').slice(-5).join('\n')}`),
          ),
    );
  });
}

/** Held-out evaluation of a policy file, cached in `cache` (JSON), with the eval module's protocol. */
export async function evalCached(
  scene: Scene,
  cfg: { tasks: string[]; finalEpisodes: number },
  policy: string,
  cache: string,
): Promise<PolicyResult> {
  const Schema = z.object({
    policy: z.string(),
    episodes: z.number(),
    tasks: z.array(z.string()),
    result: z.unknown(),
  });
  if (existsSync(cache)) {
    const c = readInputJson(cache, Schema, 'evaluation cache');
    if (c.episodes === cfg.finalEpisodes && canonicalJson(c.tasks) === canonicalJson(cfg.tasks))
      return c.result as PolicyResult;
  }
  const result = await heldoutResult(scene, cfg.tasks, policy, cfg.finalEpisodes);
  commitFiles([
    { path: cache, data: `${JSON.stringify({ policy, episodes: cfg.finalEpisodes, tasks: cfg.tasks, result })}\n` },
  ]);
  return result;
}

/** Runs `tasks` (functions returning promises) with at most `jobs` in flight. */
export async function pool(jobs: number, tasks: (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(jobs, tasks.length) }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}
