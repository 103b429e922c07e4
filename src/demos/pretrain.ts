// Behaviour-cloning pretraining as one resumable run: demonstrations re-simulated into a dataset, BcTrainer
// steps with JSONL metrics and checkpoints in a run folder (a resume continues bit-identically; a stop
// request writes a checkpoint first), the policy file at the end. `wmrl pretrain` adds flags and printing.
// Node-only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { Graph } from '../nn/ir.ts';
import { ParamStore } from '../nn/params.ts';
import { fixedCameras, tabletopSpec } from '../physics/index.ts';
import { type BcDataset, BcTrainer } from '../policy/bc.ts';
import { loadBcCheckpoint, saveBcCheckpoint } from '../policy/bc-checkpoint.ts';
import { savePolicy } from '../policy/model.ts';
import { type PresetName, PRETRAIN_SIZES, sceneWords } from '../policy/presets.ts';
import { specInterfaceHash, vlaConfigFromSpec } from '../policy/spec-config.ts';
import { WordTokenizer } from '../policy/tokenizer.ts';
import { vlaForwardBuilder } from '../policy/vla.ts';
import { loadSceneFile } from '../scene/load-file.ts';
import {
  appendMetrics,
  checkOutputDir,
  checkOutputFile,
  checkpointDue,
  lockFile,
  lockFolder,
  resumeCheckpoint,
  startMetrics,
  StopFlag,
} from '../store/index.ts';
import { demosToDataset } from './demos.ts';
import { readDemoFolder } from './folder.ts';

export interface PretrainOptions {
  /** Demonstration folder written by `wmrl collect`. */
  data: string;
  /** Policy file to write (.onnx, plus its .json sidecar). */
  out: string;
  /** Checkpoints and metrics.jsonl. */
  runDir: string;
  steps: number;
  batch: number;
  lr: number;
  weightDecay: number;
  shift: number;
  /** Probability that an instruction word is replaced by `<unk>` in a batch (0: off). */
  wordDropout?: number;
  size: PresetName;
  seed: number;
  logEvery: number;
  threads: number;
  checkpointEvery: number;
  maxNonfinite: number;
  resume?: boolean;
  onlySuccess?: boolean;
  counterfactual: boolean;
}

export interface PretrainHooks {
  /** Polled before every step (Ctrl-C): true writes a checkpoint and ends the run. */
  shouldStop?(): boolean;
  log?(line: string): void;
  /** The steps begin, `done` of `total` already taken (a stop request is honoured from here on); what it
   *  returns is called when they end. */
  onStart?(done: number, total: number): (() => void) | undefined;
  onStep?(step: number, loss: number): void;
}

export interface PretrainSummary {
  out: string;
  runDir: string;
  demos: number;
  samples: number;
  params: number;
  steps: number;
  /** The last metrics line. */
  last: Record<string, unknown> | null;
  seconds: number;
}

export type PretrainResult = { stopped: false; summary: PretrainSummary } | { stopped: true; step: number };

/** What must match for a resume to continue the same run. */
function runKey(o: PretrainOptions, dataHash: string): Record<string, unknown> {
  return {
    batch: o.batch,
    lr: o.lr,
    weightDecay: o.weightDecay,
    shift: o.shift,
    // absent when off, so runs from before word dropout still resume
    ...(o.wordDropout ? { wordDropout: o.wordDropout } : {}),
    size: o.size,
    seed: o.seed,
    onlySuccess: o.onlySuccess,
    counterfactual: o.counterfactual,
    steps: o.steps,
    dataHash,
  };
}

/** Checks the outputs, reads the demonstrations, then trains while holding the locks of `out` and `runDir`. */
export async function pretrain(o: PretrainOptions, hooks: PretrainHooks = {}): Promise<PretrainResult> {
  checkOutputFile(o.out, '--out');
  checkOutputDir(o.runDir, '--run-dir');
  const folder = readDemoFolder(o.data);
  const locks = [lockFile(o.out, '--out'), lockFolder(o.runDir, '--run-dir')];
  try {
    return await train(o, folder, hooks);
  } finally {
    for (const l of locks) l.release();
  }
}

async function train(
  o: PretrainOptions,
  { meta, demos: all }: ReturnType<typeof readDemoFolder>,
  hooks: PretrainHooks,
): Promise<PretrainResult> {
  const started = performance.now();
  const demos = o.onlySuccess ? all.filter((d) => d.success) : all;
  if (demos.length === 0) throw new InputError(`--data: ${o.data} holds no usable demonstrations`);
  const scene = loadSceneFile(meta.scene);
  const spec = tabletopSpec(scene, demos[0].task, fixedCameras(scene));
  const words = sceneWords(scene);
  const tokenizer = WordTokenizer.fromCorpus(words.corpus, { maxLength: words.maxLength });
  const config = vlaConfigFromSpec(spec, tokenizer.config, PRETRAIN_SIZES[o.size]);
  const run = runKey(o, hashOf(readFileSync(join(o.data, 'episodes.bin')), readFileSync(join(o.data, 'labels.bin'))));

  hooks.log?.(`re-simulating ${demos.length} demonstrations ...`);
  const ds = await demosToDataset(scene, demos, config, tokenizer, { counterfactual: o.counterfactual });
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  const init = ParamStore.init(g.params, o.seed);
  const ck = resumeCheckpoint(o.runDir, run, o.resume, loadBcCheckpoint);
  const trainer = await BcTrainer.create(config, ck?.params ?? init, {
    batch: o.batch,
    lr: o.lr,
    totalSteps: o.steps,
    weightDecay: o.weightDecay,
    shift: o.shift,
    wordDropout: o.wordDropout,
    seed: o.seed,
    runtime: { threads: o.threads },
    maxNonFiniteSteps: o.maxNonfinite,
  });
  const metricsPath = join(o.runDir, 'metrics.jsonl');
  if (ck) trainer.resume(ck.optimizer, ck.step);
  startMetrics(metricsPath, ck ? ck.step : null);
  const save = () =>
    saveBcCheckpoint(o.runDir, {
      step: trainer.stepCount,
      config,
      run,
      params: trainer.params(),
      optimizer: trainer.exportOptimizer(),
    });
  let steps: Awaited<ReturnType<typeof takeSteps>>;
  try {
    steps = await takeSteps(trainer, ds, o, { ...hooks, save, metricsPath, started });
  } catch (err) {
    await trainer.close();
    throw err;
  }
  const finalParams = steps.stopped ? null : trainer.params();
  const step = trainer.stepCount;
  await trainer.close();
  if (!finalParams) return { stopped: true, step };
  await savePolicy(o.out, config, finalParams, {
    provenance: {
      producer: 'wmrl pretrain',
      seed: o.seed,
      steps: o.steps,
      notes:
        `behaviour cloning on ${demos.length} demos (${ds.size} steps) from ${o.data} ` +
        `(noise ${meta.noise}, DART labels, counterfactual ${o.counterfactual}); ` +
        `size ${o.size}, batch ${o.batch}, lr ${o.lr}, shift ${o.shift}, word dropout ${o.wordDropout ?? 0}`,
    },
    specHash: specInterfaceHash(spec),
  });
  const summary = {
    out: o.out,
    runDir: o.runDir,
    demos: demos.length,
    samples: ds.size,
    params: finalParams.size,
    steps: o.steps,
    last: steps.last,
    seconds: (performance.now() - started) / 1000,
  };
  return { stopped: false, summary };
}

interface StepContext extends PretrainHooks {
  save(): void;
  metricsPath: string;
  started: number;
}

/** Steps to `o.steps`, logging mean losses every `logEvery` steps and checkpointing on schedule or on a stop. */
async function takeSteps(
  trainer: BcTrainer,
  ds: BcDataset,
  o: PretrainOptions,
  c: StepContext,
): Promise<{ stopped: boolean; last: Record<string, unknown> | null }> {
  const stop = new StopFlag(c.shouldStop);
  const end = c.onStart?.(trainer.stepCount, o.steps);
  let last = null;
  let window = 0;
  let windowLoss = 0;
  try {
    while (trainer.stepCount < o.steps) {
      if (stop.requested) {
        c.save();
        return { stopped: true, last };
      }
      const r = await trainer.step(ds);
      windowLoss += r.loss;
      window++;
      if (r.step % o.logEvery === 0 || r.step === o.steps) {
        last = {
          step: r.step,
          lr: r.lr,
          loss: windowLoss / window,
          grad_norm: r.gradNorm,
          finite: r.finite,
          accuracy: r.accuracy,
          seconds: (performance.now() - c.started) / 1000,
        };
        appendMetrics(c.metricsPath, last);
        window = 0;
        windowLoss = 0;
      }
      if (checkpointDue(r.step, o.checkpointEvery, o.steps)) c.save();
      c.onStep?.(r.step, r.loss);
    }
    return { stopped: false, last };
  } finally {
    end?.();
  }
}
