// `wmrl wm train`: flags to a WorldModelTrainer fit with checkpoints in a run folder (--resume continues
// bit-identically), the best model written to --out, Ctrl-C writing a final checkpoint.
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { hashOf } from '../../core/hash.ts';
import { canonicalJson, jsonLine } from '../../core/spec.ts';
import { DEFAULT_MAX_NONFINITE_STEPS } from '../../nn/train.ts';
import type { Scene } from '../../scene/index.ts';
import { checkOutputDir, checkOutputFile, hasCheckpoint, lockFile, lockFolder, truncateMetrics } from '../../store/index.ts';
import {
  ActionCoder, EnsembleDynamics, evaluateDynamics, limitsFromScene, loadWmCheckpoint, readEpisodeData, saveWmCheckpoint, saveWmModel, stateLayout,
  stepsForBudget, TransitionSet, WorldModelTrainer, type EpisodeData, type FitMetrics, type FitResult, type WmCheckpoint,
} from '../../worldmodel/index.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';
import { intFlag, parseOptions, printJson, seedFlag, UsageError } from '../options.ts';
import { progressBar } from '../progress.ts';
import { loadScene } from '../scene.ts';
import { physicsSpecs, printReport } from './wm.ts';

const list = (v: string, prev: string[] = []) => [...prev, v];

const TrainOptions = z.object({
  data: z.array(z.string()).min(1, 'give at least one run folder'),
  val: z.array(z.string()).optional(),
  out: z.string().regex(/\.onnx$/, 'must end in .onnx'),
  members: intFlag(1).max(32),
  hidden: z.string().regex(/^\d+(,\d+)*$/, 'must be comma-separated widths, e.g. 200,200,200'),
  steps: intFlag(1),
  batch: intFlag(8).max(4096),
  lr: z.coerce.number().positive(),
  timeBudget: z.coerce.number().positive().optional(),
  evalEvery: intFlag(1),
  checkpointEvery: intFlag(1),
  maxNonfinite: intFlag(1),
  seed: seedFlag,
  metrics: z.string().optional(),
  runDir: z.string().optional(),
  resume: z.boolean().optional(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});
type Opts = z.infer<typeof TrainOptions>;

/** Every 10th episode (at least the last one) goes to validation when no --val folders are given. */
function splitEpisodes(all: EpisodeData[], val: EpisodeData[] | null): { train: EpisodeData[]; val: EpisodeData[] } {
  if (val) return { train: all, val };
  const held = (i: number) => i % 10 === 9 || (all.length < 10 && i === all.length - 1);
  if (all.length < 2) throw new UsageError(`--data: ${all.length} episode(s); need at least 2 (or give --val folders)`);
  return { train: all.filter((_, i) => !held(i)), val: all.filter((_, i) => held(i)) };
}

const setHash = (s: TransitionSet) => hashOf(s.feats.subarray(0, s.count * s.layout.featureDim), s.acts.subarray(0, s.count * s.coder.dim), s.deltas.subarray(0, s.count * s.layout.stateDim));

/** What must match for --resume to continue the same run. */
function runKey(o: Opts, train: TransitionSet, val: TransitionSet): Record<string, unknown> {
  return { members: o.members, hidden: o.hidden, steps: o.steps, timeBudget: o.timeBudget ?? null, batch: o.batch, lr: o.lr, evalEvery: o.evalEvery, seed: o.seed, train: setHash(train), val: setHash(val) };
}

interface Inputs {
  scene: Scene;
  coder: ActionCoder;
  split: { train: EpisodeData[]; val: EpisodeData[] };
  train: TransitionSet;
  val: TransitionSet;
  metricsPath: string;
  runDir: string;
}

/** Checks every output path and reads every input before anything is written. */
function prepare(o: Opts): Inputs {
  const metricsPath = o.metrics ?? o.out.replace(/\.onnx$/, '.metrics.jsonl');
  const runDir = o.runDir ?? join('runs', `wm-train-${basename(o.out, '.onnx')}`);
  checkOutputFile(o.out, '--out');
  checkOutputFile(metricsPath, '--metrics');
  checkOutputDir(runDir, '--run-dir');
  const scene = loadScene(o.scene);
  const spec = Object.values(physicsSpecs(scene))[0];
  const coder = new ActionCoder(spec);
  const layout = stateLayout(scene.objects);
  const split = splitEpisodes(readEpisodeData(o.data, scene, spec), o.val ? readEpisodeData(o.val, scene, spec) : null);
  if (split.val.length === 0) throw new UsageError('--val: no held-out episodes');
  const train = TransitionSet.fromEpisodes(layout, coder, split.train);
  const val = TransitionSet.fromEpisodes(layout, coder, split.val);
  if (train.count === 0) throw new UsageError('--data: no transitions to train on');
  return { scene, coder, split, train, val, metricsPath, runDir };
}

async function wmTrain(o: Opts): Promise<void> {
  const inputs = prepare(o);
  const locks = [lockFile(o.out, '--out'), lockFolder(inputs.runDir, '--run-dir')];
  try {
    await trainAndSave(o, inputs);
  } finally {
    for (const l of locks) l.release();
  }
}

async function trainAndSave(o: Opts, { scene, coder, split, train, val, metricsPath, runDir }: Inputs): Promise<void> {
  const run = runKey(o, train, val);
  const ckpt = o.resume && hasCheckpoint(runDir) ? loadWmCheckpoint(runDir) : null;
  if (o.resume && !ckpt) throw new UsageError(`--resume: no checkpoint in ${runDir}`);
  if (ckpt && canonicalJson(ckpt.run) !== canonicalJson(run)) throw new UsageError(`--resume: the checkpoint in ${runDir} belongs to a run with different options or data`);
  const net = { members: o.members, hidden: o.hidden.split(',').map(Number) };
  const resumeFrom = ckpt ? { init: ckpt.state.params, config: ckpt.config } : {};
  const trainer = await WorldModelTrainer.create(train, val, { net, batch: o.batch, seed: o.seed, maxNonFiniteSteps: o.maxNonfinite, ...resumeFrom });
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
    mkdirSync(dirname(metricsPath), { recursive: true });
    if (ckpt) truncateMetrics(metricsPath, ckpt.state.step);
    else writeFileSync(metricsPath, budget ? jsonLine(budget) : '');
    const command = `wmrl wm train ${process.argv.slice(4).filter((a) => a !== '--resume').join(' ')}`;
    const meta = { objects: scene.objects.map((x) => x.name), specs: physicsSpecs(scene), command };
    const checkpoint = (state: WmCheckpoint['state']) => saveWmCheckpoint(runDir, { config: trainer.config, steps, run, state });
    const fit = await fitWithProgress(trainer, o, steps, metricsPath, {
      onBest: (params, m) => saveWmModel(o.out, trainer.config, params, { ...meta, report: { checkpoint_step: m.step, val_mse: m.valMse } }, o.seed, m.step),
      onState: checkpoint,
    });
    if (fit.interrupted) {
      checkpoint(trainer.exportState());
      throw new InterruptedError(`interrupted at step ${trainer.steps}: checkpoint in ${runDir} (continue with --resume)`);
    }
    const params = trainer.params();
    const dyn = await EnsembleDynamics.create(trainer.config, params, stateLayout(scene.objects), limitsFromScene(scene), Object.values(meta.specs)[0]);
    const report = await evaluateDynamics(dyn, scene, coder.names, split.val);
    await dyn.close();
    const summary = {
      out: o.out, train_transitions: train.count, train_episodes: split.train.length, val_transitions: val.count, val_episodes: split.val.length,
      members: o.members, hidden: o.hidden, steps: fit.steps, best_step: fit.bestStep, best_val_mse: fit.bestValMse, skipped_steps: fit.skipped,
    };
    // The model files hold no clock reading, so a resumed run writes the same bytes as an uninterrupted one.
    await saveWmModel(o.out, trainer.config, params, { ...meta, report: { ...summary, heldout: report } }, o.seed, fit.bestStep);
    appendFileSync(metricsPath, jsonLine({ kind: 'heldout', ...report }));
    if (o.json) return printJson({ ...summary, elapsed_s: fit.elapsedMs / 1000, heldout: report, metrics: metricsPath, run_dir: runDir });
    console.log(`trained ${o.out}: ${fit.steps} steps (${(fit.elapsedMs / 1000).toFixed(0)} s in this process), best held-out 1-step MSE ${fit.bestValMse?.toFixed(4)} (normalised) at step ${fit.bestStep}`);
    printReport(report);
  } finally {
    await trainer.close();
  }
}

/** The fit with a progress bar, JSONL metrics and Ctrl-C checked between steps. */
async function fitWithProgress(trainer: WorldModelTrainer, o: Opts, steps: number, metricsPath: string, hooks: { onBest: NonNullable<Parameters<WorldModelTrainer['fit']>[0]['onBest']>; onState: (s: WmCheckpoint['state']) => void }): Promise<FitResult> {
  const bar = progressBar('wm train', steps);
  let last = trainer.steps;
  bar.tick(last);
  const release = cooperate();
  try {
    return await trainer.fit({
      steps, lr: o.lr, evalEvery: o.evalEvery, stateEvery: o.checkpointEvery, shouldStop: interrupted, ...hooks,
      onMetrics: (m: FitMetrics) => {
        appendFileSync(metricsPath, jsonLine({ kind: 'train', ...m }));
        bar.tick(m.step - last, `loss ${m.loss.toFixed(3)} val ${m.valMse?.toFixed(4) ?? '-'}`);
        last = m.step;
      },
    });
  } finally {
    release();
    bar.stop();
  }
}

export function registerWmTrain(wm: Command): void {
  wm.command('train')
    .description('train the K-member ensemble on physics transitions from run folders (wmrl rollout writes them)')
    .option('--data <dir>', 'run folder with recorded states (repeatable)', list)
    .option('--val <dir>', 'held-out run folder (repeatable; default: every 10th episode of --data)', list)
    .requiredOption('--out <file>', 'model file, e.g. models/wm-base.onnx (sidecars NAME.json, NAME.wm.json)')
    .option('--members <k>', 'ensemble members', '5')
    .option('--hidden <widths>', 'hidden layer widths', '200,200,200')
    .option('--steps <n>', 'optimizer steps (at most, with --time-budget)', '8000')
    .option('--batch <n>', 'transitions per member per step', '256')
    .option('--lr <x>', 'peak learning rate (cosine decay to a tenth)', '0.001')
    .option('--time-budget <s>', 'choose the step count from a timed probe so training takes about this long (the count is recorded; --resume replays it)')
    .option('--eval-every <n>', 'validate every n steps (the best model so far is written to --out)', '500')
    .option('--checkpoint-every <n>', 'steps between checkpoints in the run folder (Ctrl-C also writes one)', '500')
    .option('--max-nonfinite <n>', 'stop with an error after this many consecutive steps with a non-finite loss or gradient', String(DEFAULT_MAX_NONFINITE_STEPS))
    .option('--seed <n>', 'init and batch seed', '0')
    .option('--metrics <file>', 'JSONL metrics (default: NAME.metrics.jsonl next to the model)')
    .option('--run-dir <dir>', 'checkpoints (default: runs/wm-train-<name>)')
    .option('--resume', 'continue from the checkpoint in the run folder (same options and data): the model is bit-identical to an uninterrupted run')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout (training summary and held-out report)')
    .action(async (raw) => wmTrain(parseOptions(TrainOptions, raw)));
}
