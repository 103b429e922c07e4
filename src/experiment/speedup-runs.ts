// The speedup experiment's runs (src/experiment/speedup.ts): each (mode, seed) trained in its own folder of
// the runs folder by a `wmrl train` child process, fresh or resumed, at most `jobs` at once; and what is read
// back from a run's metrics.jsonl (the learning curve, the seconds per part of the training clock).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseInput, parseInputJsonText } from '../core/input-file.ts';
import {
  type TrainClockKey,
  type TrainMetricKey,
  type TrainMetrics,
  TrainMetricsSchema,
  trainSeconds,
} from '../core/metrics.ts';
import { commitFiles } from '../store/index.ts';
import type { Mode } from '../trainer/index.ts';
import type { SpeedupConfig, SpeedupPaths } from './speedup.ts';

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

/** Runs `wmrl train` for one (mode, seed): a fresh run, or --resume of an interrupted one. */
export function trainRun(
  p: SpeedupPaths,
  cfg: SpeedupConfig,
  mode: Mode,
  seed: number,
  log: (line: string) => void,
): Promise<void> {
  const dir = join(p.runs, runName(mode, seed));
  const iterations = isModel(mode) ? cfg.iterations.model : cfg.iterations.real;
  if (metricsOf(dir).length >= iterations && existsSync(join(dir, 'policy.onnx'))) return Promise.resolve();
  const resume = existsSync(join(dir, 'checkpoint.json'));
  if (!resume) rmSync(dir, { recursive: true, force: true }); // started but never checkpointed
  const configPath = join(p.runs, `${runName(mode, seed)}.config.json`);
  const evalEvery = isModel(mode) ? cfg.evalEvery.model : cfg.evalEvery.real;
  commitFiles([
    {
      path: configPath,
      data: `${JSON.stringify({ iterations, evalEvery, evalEpisodes: cfg.evalEpisodes }, null, 2)}\n`,
    },
  ]);
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
        cfg.preset,
        '--config',
        configPath,
        '--task',
        cfg.tasks.join(','),
        '--policy',
        p.policy,
        '--world-model',
        p.worldModel,
        ...(p.scene ? ['--scene', p.scene] : []),
      ];
  log(`${resume ? 'resuming' : 'training'} ${runName(mode, seed)} (${iterations} iterations)`);
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
      for (const line of lines) if (/^train \d+\/\d+/.test(line)) log(`${runName(mode, seed)}: ${line}`);
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

/** Runs `tasks` (functions returning promises) with at most `jobs` in flight. */
export async function pool(jobs: number, tasks: (() => Promise<void>)[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(jobs, tasks.length) }, async () => {
      while (next < tasks.length) await tasks[next++]();
    }),
  );
}
