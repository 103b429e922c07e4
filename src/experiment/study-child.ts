// The tabletop studies' runner (speedup, corrections): each run trained in its own folder of the runs
// folder by a `wmrl train` child process, fresh or resumed, stamped beside its folder (<name>.stamp.json);
// what is read back from a finished run's metrics.jsonl (the learning curve, the seconds per part of the
// training clock); and held-out evaluations cached under a key of everything that decides them.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../core/errors.ts';
import { type TrainMetricKey, trainSeconds } from '../core/metrics.ts';
import { EvalReportSchema, type PolicyResult } from '../eval/index.ts';
import type { Scene } from '../scene/index.ts';
import { commitFiles } from '../store/index.ts';
import { type Mode, modeFlags } from '../trainer/index.ts';
import { cached, type MetricLine, metric, readCache, readMetrics, sumMetric } from './study-cache.ts';
import {
  checkStamp,
  modelHash,
  pool,
  type Runner,
  runLabel,
  type StudyRun,
  stampOf,
  stampState,
  writeStamp,
} from './study.ts';
import { heldoutResult } from './tabletop.ts';

/** The bin script this package runs its commands with. */
export const WMRL_BIN = resolve(import.meta.dirname, '../../bin/wmrl.mjs');

/** Where a tabletop study's runs, report and inputs are, and the flags its `wmrl train` children get. */
export interface ChildPaths {
  runs: string;
  report: string;
  policy: string;
  worldModel: string;
  scene?: string;
  bin: string;
  /** Extra flags of every `wmrl train` child (--progress-every). */
  trainArgs?: string[];
  /** Keep (and resume) runs that other code made, instead of refusing them (the child gets the flag too). */
  allowCodeChange?: boolean;
}

/** What decides a tabletop run's result: its trainer settings and the hashes of its inputs. */
export interface TabletopSpec {
  mode: Mode;
  seed: number;
  iterations: number;
  /** Trainer config fields over the preset (the run's --config file). */
  fields: Record<string, unknown>;
  tasks: readonly string[];
  preset: string;
  policy: string;
  world_model?: string;
  scene: string;
}
export type TabletopRun = StudyRun<TabletopSpec>;

/** The hashes of a study's input files and scene (computed once per study). */
export function inputHashes(p: ChildPaths, scene: Scene) {
  const [policy, worldModel] = [modelHash(p.policy, '--policy'), modelHash(p.worldModel, '--world-model')];
  return { policy, worldModel, scene, sceneHash: stampOf(scene) };
}
export type InputHashes = ReturnType<typeof inputHashes>;

/** A run of `row` on `seed` with its trainer settings; the world model counts only where the mode uses one. */
export function tabletopRun(
  h: InputHashes,
  r: { name: string; row: string; mode: Mode; seed: number; iterations: number; fields: Record<string, unknown> },
  s: { tasks: readonly string[]; preset: string },
): TabletopRun {
  const world_model = modeFlags(r.mode).model ? h.worldModel : undefined;
  const spec = {
    mode: r.mode,
    seed: r.seed,
    iterations: r.iterations,
    fields: r.fields,
    tasks: s.tasks,
    preset: s.preset,
    world_model,
  };
  return {
    name: r.name,
    row: r.row,
    mode: r.mode,
    seed: r.seed,
    spec: { ...spec, policy: h.policy, scene: h.sceneHash },
  };
}

const stampPath = (p: ChildPaths, run: TabletopRun) => join(p.runs, `${run.name}.stamp.json`);

/** A finished run's metrics: its stamp matches, it ran every iteration and wrote its policy; else null. */
export function finishedMetrics(p: ChildPaths, run: TabletopRun): MetricLine[] | null {
  const dir = join(p.runs, run.name);
  if (stampState(stampPath(p, run), run, p.allowCodeChange) !== 'same' || !existsSync(join(dir, 'policy.onnx')))
    return null;
  const metrics = readMetrics(dir);
  return metrics.length >= run.spec.iterations ? metrics : null;
}

/** The runner: `wmrl train` for a fresh run, `--resume` for an interrupted one, nothing for a finished one. */
export const childRunner = (p: ChildPaths): Runner<TabletopSpec> => ({
  train: (run, log, signal) => {
    const dir = join(p.runs, run.name);
    const stamped = checkStamp(stampPath(p, run), run, p.allowCodeChange);
    if (!stamped && existsSync(dir))
      throw new InputError(
        `${dir}: ${runLabel(run)} has no stamp (${run.name}.stamp.json: made before run stamps?); ` +
          'delete it or use another --runs folder',
      );
    if (finishedMetrics(p, run)) return Promise.resolve();
    const resume = stamped && existsSync(join(dir, 'checkpoint.json'));
    if (!resume) {
      rmSync(dir, { recursive: true, force: true }); // started but never checkpointed
      writeStamp(stampPath(p, run), run);
    }
    log(`${resume ? 'resuming' : 'training'} ${run.name} (${run.spec.iterations} iterations)`);
    return spawnTrain(p, run, resume ? ['train', '--resume', dir] : freshArgs(p, run), log, signal);
  },
});

function freshArgs(p: ChildPaths, run: TabletopRun): string[] {
  const s = run.spec;
  const configPath = join(p.runs, `${run.name}.config.json`);
  commitFiles([{ path: configPath, data: `${JSON.stringify({ ...s.fields, iterations: s.iterations }, null, 2)}\n` }]);
  return [
    'train',
    ...['--mode', s.mode, '--seed', String(s.seed), '--out', join(p.runs, run.name), '--preset', s.preset],
    ...['--config', configPath, '--task', s.tasks.join(','), '--policy', p.policy, '--world-model', p.worldModel],
    ...(p.scene ? ['--scene', p.scene] : []),
  ];
}

/** Runs the child; its progress lines go to `log` under the run's name. An aborted signal stops it as
 *  Ctrl-C does (it checkpoints: resumable). A failure names the run and the exit code. */
function spawnTrain(
  p: ChildPaths,
  run: TabletopRun,
  args: string[],
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((done, fail) => {
    const allow = p.allowCodeChange ? ['--allow-code-change'] : [];
    const child = spawn(process.execPath, [p.bin, ...args, ...(p.trainArgs ?? []), ...allow, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stop = () => child.kill('SIGINT');
    signal?.addEventListener('abort', stop, { once: true });
    let err = '';
    let partial = '';
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000);
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (/^train \d+\/\d+/.test(line)) log(`${run.name}: ${line}`);
    });
    child.stdout.resume();
    child.on('error', fail);
    child.on('exit', (code, sig) => {
      signal?.removeEventListener('abort', stop);
      if (code === 0) return done();
      const tail = err.trim().split('\n').slice(-5).join('\n');
      const how = code === null ? `was killed by ${sig}` : `exited with code ${code}`;
      const why = signal?.aborted ? ' (stopped: another run failed)' : '';
      const message = `${runLabel(run)}: wmrl ${args.join(' ')} ${how}${why}:\n${tail}`;
      fail(code === 2 ? new InputError(message) : new Error(message));
    });
  });
}

/** Trains `runs` with at most `jobs` at once; the first failure stops the rest (see pool). */
export function trainRuns(p: ChildPaths, runs: readonly TabletopRun[], jobs: number, log: (l: string) => void) {
  const runner = childRunner(p);
  return pool(
    jobs,
    runs.map((run) => (signal) => runner.train(run, log, signal)),
  );
}

/** One point of a learning curve: held-out success after `iteration` updates. */
export interface CurvePoint {
  iteration: number;
  seconds: number;
  physicsSteps: number;
  success: number;
  low: number;
  high: number;
}

/** The training clock and physics steps at each evaluation of a run (evaluation itself is off the clock);
 *  a line whose evaluation is missing gives no point. */
export function curveOf(metrics: readonly MetricLine[]): CurvePoint[] {
  let seconds = 0;
  const out: CurvePoint[] = [];
  const point = (m: MetricLine, at: 'eval' | 'eval_initial', iteration: number, s: number, steps: number) => {
    const [success, low, high] = (['success', 'ci_low', 'ci_high'] as const).map((k) => metric(m, `${at}/${k}`));
    if (success !== null) out.push({ iteration, seconds: s, physicsSteps: steps, success, low: low!, high: high! });
  };
  for (const m of metrics) {
    point(m, 'eval_initial', 0, 0, 0);
    seconds += trainSeconds(m);
    point(m, 'eval', m.iteration, seconds, m['steps/physics']);
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

/** Each time component summed over a run (null where no line has it). */
export const secondsOf = (metrics: readonly MetricLine[]) =>
  Object.fromEntries(Object.entries(TIME).map(([name, key]) => [name, sumMetric(metrics, key)])) as Record<
    keyof typeof TIME,
    number | null
  >;

const PolicyResultSchema = EvalReportSchema.shape.policies.element;

/** What decides a held-out evaluation: the protocol, the scene, the tasks, the episodes and the policy bytes. */
export const evalKey = (h: InputHashes, tasks: readonly string[], episodes: number, policy: string) => ({
  protocol: 'tabletop-heldout/1 (seeds 0.., temperature 1)',
  scene: h.sceneHash,
  tasks,
  episodes,
  policy: modelHash(policy, 'policy'),
});

/** Held-out evaluation of a policy file, cached in `cache`. */
export function evalCached(
  h: InputHashes,
  s: { tasks: string[]; finalEpisodes: number },
  policy: string,
  cache: string,
): Promise<PolicyResult> {
  return cached(cache, evalKey(h, s.tasks, s.finalEpisodes, policy), PolicyResultSchema, () =>
    heldoutResult(h.scene, s.tasks, policy, s.finalEpisodes),
  );
}

/** The cached held-out evaluation of a policy file, or null (none, or of other settings). */
export function readEval(
  h: InputHashes,
  s: { tasks: string[]; finalEpisodes: number },
  policy: string,
  cache: string,
): PolicyResult | null {
  if (!existsSync(policy)) return null;
  return readCache(cache, evalKey(h, s.tasks, s.finalEpisodes, policy), PolicyResultSchema);
}
