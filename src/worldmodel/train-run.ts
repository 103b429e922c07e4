// World-model training as one resumable run: physics episodes split into train and held-out transitions,
// a WorldModelTrainer fit with JSONL metrics and checkpoints in a run folder (a resume continues
// bit-identically; a stop request writes a checkpoint first), the best model written as it improves, the
// held-out report at the end. `wmrl wm train` adds flags and printing. Node-only.
import { hashOf } from '../core/hash.ts';
import { InputError } from '../core/errors.ts';
import { type EnvSpec, jsonLine } from '../core/spec.ts';
import type { Scene } from '../scene/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../scene/load-file.ts';
import {
  appendMetrics,
  checkOutputDir,
  checkOutputFile,
  lockFile,
  lockFolder,
  resumeCheckpoint,
  startMetrics,
  StopFlag,
} from '../store/index.ts';
import { loadWmCheckpoint, saveWmCheckpoint, type WmCheckpoint } from './checkpoint-file.ts';
import { type EpisodeData, readEpisodeData, TransitionSet } from './dataset.ts';
import { EnsembleDynamics } from './dynamics.ts';
import { type EvalReport, evaluateDynamics } from './evaluate.ts';
import { ActionCoder, stateLayout } from './features.ts';
import { limitsFromScene } from './model-bytes.ts';
import { saveWmModel } from './model-file.ts';
import { type FitMetrics, type FitResult, stepsForBudget, WorldModelTrainer } from './trainer.ts';

export interface WmTrainOptions {
  /** Run folders with recorded physics states. */
  data: string[];
  /** Held-out run folders (default: every 10th episode of `data`). */
  val?: string[];
  /** Model file (.onnx; sidecars NAME.json, NAME.wm.json). */
  out: string;
  /** JSONL metrics file. */
  metrics: string;
  /** Checkpoints. */
  runDir: string;
  members: number;
  /** Comma-separated hidden widths, e.g. "200,200,200". */
  hidden: string;
  /** Optimizer steps (at most, with timeBudget). */
  steps: number;
  batch: number;
  lr: number;
  /** Seconds: a timed probe chooses the step count once (recorded; a resume replays it). */
  timeBudget?: number;
  evalEvery: number;
  checkpointEvery: number;
  maxNonfinite: number;
  seed: number;
  resume?: boolean;
  /** Scene file (default scenes/tabletop.json). */
  scene?: string;
  /** The physics spec of every task of the scene (specs arrive as data; the first one's actions are used). */
  specsFor(scene: Scene): Record<string, EnvSpec>;
  /** The command line recorded in the model's metadata. */
  command: string;
}

export interface WmTrainHooks {
  /** Polled between steps (Ctrl-C): true writes a checkpoint and ends the run. */
  shouldStop?(): boolean;
  /** The fit begins, `done` of `total` steps already taken; what it returns is called when the fit ends. */
  onStart?(done: number, total: number): (() => void) | undefined;
  onMetrics?(m: FitMetrics): void;
}

export interface WmTrainSummary {
  out: string;
  train_transitions: number;
  train_episodes: number;
  val_transitions: number;
  val_episodes: number;
  members: number;
  hidden: string;
  steps: number;
  best_step: number;
  best_val_mse: number | null;
  skipped_steps: number;
}

export type WmTrainResult =
  | { stopped: true; step: number }
  | { stopped: false; summary: WmTrainSummary; heldout: EvalReport; fit: FitResult };

/** Every 10th episode (at least the last one) goes to validation when no `val` folders are given. */
function splitEpisodes(all: EpisodeData[], val: EpisodeData[] | null): { train: EpisodeData[]; val: EpisodeData[] } {
  if (val) return { train: all, val };
  const held = (i: number) => i % 10 === 9 || (all.length < 10 && i === all.length - 1);
  if (all.length < 2) throw new InputError(`--data: ${all.length} episode(s); need at least 2 (or give --val folders)`);
  return { train: all.filter((_, i) => !held(i)), val: all.filter((_, i) => held(i)) };
}

const setHash = (s: TransitionSet) =>
  hashOf(
    s.feats.subarray(0, s.count * s.layout.featureDim),
    s.acts.subarray(0, s.count * s.coder.dim),
    s.deltas.subarray(0, s.count * s.layout.stateDim),
  );

/** What must match for a resume to continue the same run. */
function runKey(o: WmTrainOptions, train: TransitionSet, val: TransitionSet): Record<string, unknown> {
  return {
    members: o.members,
    hidden: o.hidden,
    steps: o.steps,
    timeBudget: o.timeBudget ?? null,
    batch: o.batch,
    lr: o.lr,
    evalEvery: o.evalEvery,
    seed: o.seed,
    train: setHash(train),
    val: setHash(val),
  };
}

interface Inputs {
  scene: Scene;
  specs: Record<string, EnvSpec>;
  coder: ActionCoder;
  split: { train: EpisodeData[]; val: EpisodeData[] };
  train: TransitionSet;
  val: TransitionSet;
}

/** Checks every output path and reads every input before anything is written. */
function prepare(o: WmTrainOptions): Inputs {
  checkOutputFile(o.out, '--out');
  checkOutputFile(o.metrics, '--metrics');
  checkOutputDir(o.runDir, '--run-dir');
  const scene = loadSceneFile(o.scene ?? DEFAULT_SCENE_PATH);
  const specs = o.specsFor(scene);
  const spec = Object.values(specs)[0];
  const coder = new ActionCoder(spec);
  const layout = stateLayout(scene.objects);
  const split = splitEpisodes(readEpisodeData(o.data, scene, spec), o.val ? readEpisodeData(o.val, scene, spec) : null);
  if (split.val.length === 0) throw new InputError('--val: no held-out episodes');
  const train = TransitionSet.fromEpisodes(layout, coder, split.train);
  const val = TransitionSet.fromEpisodes(layout, coder, split.val);
  if (train.count === 0) throw new InputError('--data: no transitions to train on');
  return { scene, specs, coder, split, train, val };
}

/** Checks and reads everything, then trains while holding the locks of `out` and `runDir`. */
export async function trainWorldModel(o: WmTrainOptions, hooks: WmTrainHooks = {}): Promise<WmTrainResult> {
  const inputs = prepare(o);
  const locks = [lockFile(o.out, '--out'), lockFolder(o.runDir, '--run-dir')];
  try {
    return await trainAndSave(o, inputs, hooks);
  } finally {
    for (const l of locks) l.release();
  }
}

async function trainAndSave(
  o: WmTrainOptions,
  { scene, specs, coder, split, train, val }: Inputs,
  hooks: WmTrainHooks,
): Promise<WmTrainResult> {
  const run = runKey(o, train, val);
  const ckpt = resumeCheckpoint(o.runDir, run, o.resume, loadWmCheckpoint);
  const net = { members: o.members, hidden: o.hidden.split(',').map(Number) };
  const resumeFrom = ckpt ? { init: ckpt.state.params, config: ckpt.config } : {};
  const trainer = await WorldModelTrainer.create(train, val, {
    net,
    batch: o.batch,
    seed: o.seed,
    maxNonFiniteSteps: o.maxNonfinite,
    ...resumeFrom,
  });
  try {
    let steps = o.steps;
    let budget = null;
    if (ckpt) {
      trainer.restore(ckpt.state);
      steps = ckpt.steps;
    } else if (o.timeBudget) {
      // The clock chooses the step count once; it is recorded, and a resume replays it.
      const ms = await trainer.measureStepMs();
      steps = stepsForBudget(o.timeBudget, ms, o.steps);
      budget = { kind: 'budget', step: 0, time_budget_s: o.timeBudget, ms_per_step: ms, steps };
    }
    startMetrics(o.metrics, ckpt ? ckpt.state.step : null, budget ? jsonLine(budget) : '');
    const meta = { objects: scene.objects.map((x) => x.name), specs, command: o.command };
    const checkpoint = (state: WmCheckpoint['state']) =>
      saveWmCheckpoint(o.runDir, { config: trainer.config, steps, run, state });
    const fit = await fitSteps(trainer, o, steps, hooks, {
      onBest: (params, m) =>
        saveWmModel(
          o.out,
          trainer.config,
          params,
          { ...meta, report: { checkpoint_step: m.step, val_mse: m.valMse } },
          o.seed,
          m.step,
        ),
      onState: checkpoint,
    });
    if (fit.interrupted) {
      checkpoint(trainer.exportState());
      return { stopped: true, step: trainer.steps };
    }
    const params = trainer.params();
    const dyn = await EnsembleDynamics.create(
      trainer.config,
      params,
      stateLayout(scene.objects),
      limitsFromScene(scene),
      Object.values(specs)[0],
    );
    const heldout = await evaluateDynamics(dyn, scene, coder.names, split.val);
    await dyn.close();
    const summary = {
      out: o.out,
      train_transitions: train.count,
      train_episodes: split.train.length,
      val_transitions: val.count,
      val_episodes: split.val.length,
      members: o.members,
      hidden: o.hidden,
      steps: fit.steps,
      best_step: fit.bestStep,
      best_val_mse: fit.bestValMse,
      skipped_steps: fit.skipped,
    };
    // The model files hold no clock reading, so a resumed run writes the same bytes as an uninterrupted one.
    await saveWmModel(
      o.out,
      trainer.config,
      params,
      { ...meta, report: { ...summary, heldout } },
      o.seed,
      fit.bestStep,
    );
    appendMetrics(o.metrics, { kind: 'heldout', ...heldout });
    return { stopped: false, summary, heldout, fit };
  } finally {
    await trainer.close();
  }
}

type FitHooks = Pick<Parameters<WorldModelTrainer['fit']>[0], 'onBest' | 'onState'>;

/** The fit with JSONL metrics, checkpoints every `checkpointEvery` steps, and the stop flag polled between steps. */
async function fitSteps(
  trainer: WorldModelTrainer,
  o: WmTrainOptions,
  steps: number,
  hooks: WmTrainHooks,
  save: FitHooks,
): Promise<FitResult> {
  const stop = new StopFlag(hooks.shouldStop);
  const end = hooks.onStart?.(trainer.steps, steps);
  try {
    return await trainer.fit({
      steps,
      lr: o.lr,
      evalEvery: o.evalEvery,
      stateEvery: o.checkpointEvery,
      shouldStop: () => stop.requested,
      ...save,
      onMetrics: (m: FitMetrics) => {
        appendMetrics(o.metrics, { kind: 'train', ...m });
        hooks.onMetrics?.(m);
      },
    });
  } finally {
    end?.();
  }
}
