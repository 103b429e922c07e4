// Behaviour-cloning pretraining as one resumable run: demonstration folders re-simulated once into rows
// folders cached in the run folder (rows-cache.ts), BcTrainer steps on their union read from disk in
// batches, JSONL metrics and checkpoints in the run folder (a resume continues bit-identically; a stop
// request writes a checkpoint first), the policy file at the end. `wmrl pretrain` adds flags and printing.
// Node-only.
import { join } from 'node:path';
import { InputError } from '../core/errors.ts';
import { readInputFile } from '../core/input-file.ts';
import { hashOf } from '../core/hash.ts';
import { canonicalJson } from '../core/spec.ts';
import { Graph } from '../nn/ir.ts';
import { ParamStore } from '../nn/params.ts';
import { checkCameras, fixedCameras, nonDefaultCameras, tabletopSpec } from '../physics/index.ts';
import { type BcData, BcTrainer } from '../policy/bc.ts';
import { type BcCheckpoint, loadBcCheckpoint, saveBcCheckpoint } from '../policy/bc-checkpoint.ts';
import { loadPolicy, savePolicy } from '../policy/model.ts';
import {
  type HeadName,
  type PresetName,
  PRETRAIN_SIZES,
  type SecondEncoderName,
  sceneWords,
  withHead,
  withSecondEncoder,
} from '../policy/presets.ts';
import { specInterfaceHash, vlaConfigFromSpec } from '../policy/spec-config.ts';
import { WordTokenizer } from '../policy/tokenizer.ts';
import { type VlaConfig, vlaForwardBuilder } from '../policy/vla.ts';
import type { Scene } from '../scene/index.ts';
import { loadSceneFile } from '../scene/load-file.ts';
import {
  appendMetrics,
  checkOutputDir,
  checkOutputFile,
  checkpointDue,
  lockFile,
  lockFolder,
  resumeCheckpoint,
  sha256Hex,
  startMetrics,
  StopFlag,
} from '../store/index.ts';
import type { Demo } from './labels.ts';
import { type DemosMeta, readDemoFolder } from './folder.ts';
import { cachedDemoRows, demoRowsSource } from './rows-cache.ts';
import type { RowsSource } from './rows-format.ts';
import { RowsUnion } from './rows-source.ts';
import { Selection } from './select.ts';

export interface PretrainOptions {
  /** Demonstration folders written by `wmrl collect` (or dagger): trained on the union of their rows. */
  data: string[];
  /** Policy file to write (.onnx, plus its .json sidecar). */
  out: string;
  /** Checkpoints and metrics.jsonl. */
  runDir: string;
  /** Where the re-simulated rows of each --data folder are cached: default `runDir`/rows, pruned to what
   *  the run uses; a folder given here may be shared by runs and is never pruned. */
  rowsDir?: string;
  steps: number;
  batch: number;
  lr: number;
  weightDecay: number;
  shift: number;
  /** Probability that an instruction word is replaced by `<unk>` in a batch (0: off). */
  wordDropout?: number;
  size: PresetName;
  /** The action head (absent: independent, every shipped model's). */
  head?: HeadName;
  seed: number;
  logEvery: number;
  threads: number;
  checkpointEvery: number;
  maxNonfinite: number;
  resume?: boolean;
  onlySuccess?: boolean;
  counterfactual: boolean;
  /** A policy file of the same network to start from (fine-tuning) instead of a seeded initialisation. */
  init?: string;
  /** Score the policy on the validation split every this many steps and at the end, and write the best
   *  weights to `out` (0 or absent: the last weights). */
  selectEvery?: number;
  /** Validation episodes per task of each score. */
  selectEpisodes?: number;
  /** Scene cameras the new policy reads (its image_<camera> inputs, in this order; at most 2, one size);
   *  default pretrainCameras(scene). */
  cameras?: string[];
  /** The second camera's encoder (absent: shared, the first camera's; light: its own cheaper one, only with
   *  2 cameras). */
  secondEncoder?: SecondEncoderName;
}

/** The cameras of a new policy when none are asked for: the scene's fixed cameras (front only on
 *  scenes/tabletop.json). To make front+wrist the default for new policies, return
 *  `scene.cameras.map((c) => c.name)` here. */
export const pretrainCameras = (scene: Scene): string[] => fixedCameras(scene);

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

/** One --data folder: its demonstrations (filtered by onlySuccess), scene and what its rows are made from. */
interface DataFolder {
  dir: string;
  meta: DemosMeta;
  scene: Scene;
  demos: Demo[];
  source: RowsSource;
}

function readData(o: PretrainOptions): DataFolder[] {
  if (!o.data.length) throw new InputError('--data: no demonstration folder given');
  const folders = o.data.map((dir) => {
    const { meta, demos: all } = readDemoFolder(dir);
    const demos = o.onlySuccess ? all.filter((d) => d.success) : all;
    const source = demoRowsSource(dir, demos, { counterfactual: o.counterfactual, onlySuccess: !!o.onlySuccess });
    return { dir, meta, scene: loadSceneFile(meta.scene), demos, source };
  });
  const [first] = folders;
  for (const f of folders)
    if (canonicalJson(f.scene) !== canonicalJson(first.scene))
      throw new InputError(
        `--data: ${f.dir} holds demonstrations of scene ${f.meta.scene}, ${first.dir} of another (${first.meta.scene})`,
      );
  if (folders.every((f) => f.demos.length === 0))
    throw new InputError(`--data: ${o.data.join(', ')} hold${o.data.length > 1 ? '' : 's'} no usable demonstrations`);
  return folders;
}

/** The data part of the run key: one folder's data hash (as before several were allowed), or a hash of all. */
const dataHashOf = (folders: readonly DataFolder[]): string =>
  folders.length === 1 ? folders[0].source.dataHash : hashOf(folders.map((f) => f.source.dataHash).join(','));

/** What must match for a resume to continue the same run. */
function runKey(
  o: PretrainOptions,
  dataHash: string,
  initHash: string | null,
  cameras: string[] | undefined,
): Record<string, unknown> {
  return {
    batch: o.batch,
    lr: o.lr,
    weightDecay: o.weightDecay,
    shift: o.shift,
    // absent when off, so runs from before word dropout still resume
    ...(o.wordDropout ? { wordDropout: o.wordDropout } : {}),
    size: o.size,
    // absent for independent heads, so earlier runs still resume
    ...(o.head && o.head !== 'independent' ? { head: o.head } : {}),
    seed: o.seed,
    onlySuccess: o.onlySuccess,
    counterfactual: o.counterfactual,
    steps: o.steps,
    dataHash,
    // absent when unused, so earlier runs still resume
    ...(initHash ? { init: initHash } : {}),
    ...(o.selectEvery ? { selectEvery: o.selectEvery, selectEpisodes: o.selectEpisodes ?? SELECT_EPISODES } : {}),
    // absent with the scene's fixed cameras, so earlier runs still resume
    ...(cameras ? { cameras } : {}),
    // absent with the shared encoder, so earlier runs still resume
    ...(o.secondEncoder && o.secondEncoder !== 'shared' ? { secondEncoder: o.secondEncoder } : {}),
  };
}

const SELECT_EPISODES = 50;

/** The tasks the data's demonstrations are of, in the scene's order. */
const dataTasks = (scene: Scene, folders: readonly DataFolder[]): string[] => {
  const present = new Set(folders.flatMap((f) => f.demos.map((d) => d.task)));
  return scene.tasks.map((t) => t.id).filter((t) => present.has(t));
};

/** The weights of `--init`, which must be a policy of exactly the network being trained. */
async function initParams(path: string, config: VlaConfig): Promise<ParamStore> {
  const loaded = await loadPolicy(path).catch((e: Error) => {
    throw new InputError(`--init: ${e.message}`);
  });
  if (canonicalJson(loaded.config) !== canonicalJson(config))
    throw new InputError(
      `--init: ${path} is another network than --size, --head, --cameras, --second-encoder and the data's vocabulary make`,
    );
  return loaded.params;
}

/** Checks the outputs, reads the demonstrations, then trains while holding the locks of `out` and `runDir`. */
export async function pretrain(o: PretrainOptions, hooks: PretrainHooks = {}): Promise<PretrainResult> {
  checkOutputFile(o.out, '--out');
  checkOutputDir(o.runDir, '--run-dir');
  const folders = readData(o);
  const cameras = checkCameras(folders[0].scene, o.cameras ?? pretrainCameras(folders[0].scene));
  checkSecondEncoder(o.secondEncoder, cameras);
  const locks = [lockFile(o.out, '--out'), lockFolder(o.runDir, '--run-dir')];
  try {
    return await train(o, folders, hooks);
  } finally {
    for (const l of locks) l.release();
  }
}

/** A second camera's own encoder needs a second camera. */
function checkSecondEncoder(kind: SecondEncoderName | undefined, cameras: readonly string[]): void {
  if (kind === 'light' && cameras.length !== 2)
    throw new InputError(
      `--second-encoder: light is the second camera's own encoder, but the policy reads ${cameras.length} camera (${cameras.join(', ')}); add --cameras with two, e.g. front,wrist`,
    );
}

async function train(o: PretrainOptions, folders: DataFolder[], hooks: PretrainHooks): Promise<PretrainResult> {
  const started = performance.now();
  const { scene } = folders[0];
  const demos = folders.reduce((s, f) => s + f.demos.length, 0);
  const cameras = o.cameras ?? pretrainCameras(scene);
  const spec = tabletopSpec(scene, folders.find((f) => f.demos.length)!.demos[0].task, cameras);
  const words = sceneWords(scene);
  const tokenizer = WordTokenizer.fromCorpus(words.corpus, { maxLength: words.maxLength });
  const image = spec.observation.find((e) => e.kind === 'image');
  const sizes = withHead(PRETRAIN_SIZES[o.size], o.head ?? 'independent');
  const config = vlaConfigFromSpec(
    spec,
    tokenizer.config,
    image ? withSecondEncoder(sizes, o.secondEncoder ?? 'shared', [image.shape[0], image.shape[1]]) : sizes,
  );
  const initBytes = o.init ? readInputFile(o.init, 'policy file (--init)') : null;
  const run = runKey(o, dataHashOf(folders), initBytes && sha256Hex(initBytes), nonDefaultCameras(scene, cameras));
  const ck = resumeCheckpoint(o.runDir, run, o.resume, loadBcCheckpoint);
  const inputs = folders.filter((f) => f.demos.length).map((f) => ({ data: f.dir, demos: f.demos, source: f.source }));
  const rows = new RowsUnion(
    await cachedDemoRows(o.rowsDir ?? join(o.runDir, 'rows'), !o.rowsDir, inputs, scene, config, tokenizer, hooks.log),
  );
  let fitted: Awaited<ReturnType<typeof fitPolicy>>;
  try {
    const selection = o.selectEvery
      ? new Selection(
          {
            runDir: o.runDir,
            scene,
            config,
            specHash: specInterfaceHash(spec),
            tasks: dataTasks(scene, folders),
            every: o.selectEvery,
            episodes: o.selectEpisodes ?? SELECT_EPISODES,
          },
          ck?.step ?? 0,
        )
      : null;
    fitted = await fitPolicy(rows, config, run, ck, o, { ...hooks, started, selection });
  } finally {
    rows.close();
  }
  if (!fitted.params) return { stopped: true, step: fitted.step };
  const noise = [...new Set(folders.map((f) => f.meta.noise))].join(', ');
  await savePolicy(o.out, config, fitted.params, {
    provenance: {
      producer: 'wmrl pretrain',
      seed: o.seed,
      steps: o.steps,
      notes:
        `behaviour cloning on ${demos} demos (${rows.size} steps) from ${o.data.join(', ')} ` +
        `(noise ${noise}, DART labels, counterfactual ${o.counterfactual}); ` +
        `size ${o.size}${o.head === 'autoregressive' ? ', autoregressive head' : ''}` +
        `${o.secondEncoder === 'light' ? ', light second-camera encoder' : ''}, batch ${o.batch}, lr ${o.lr}, shift ${o.shift}, word dropout ${o.wordDropout ?? 0}`,
    },
    specHash: specInterfaceHash(spec),
  });
  const summary = {
    out: o.out,
    runDir: o.runDir,
    demos,
    samples: rows.size,
    params: fitted.params.size,
    steps: o.steps,
    last: fitted.last,
    seconds: (performance.now() - started) / 1000,
  };
  return { stopped: false, summary };
}

/** Trains on `ds` from the checkpoint `ck` (or a fresh start): the final parameters, or null when stopped. */
async function fitPolicy(
  ds: BcData,
  config: VlaConfig,
  run: Record<string, unknown>,
  ck: BcCheckpoint | null,
  o: PretrainOptions,
  hooks: PretrainHooks & { started: number; selection: Selection | null },
): Promise<{ params: ParamStore | null; step: number; last: Record<string, unknown> | null }> {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  const start = ck?.params ?? (o.init ? await initParams(o.init, config) : ParamStore.init(g.params, o.seed));
  const trainer = await BcTrainer.create(config, start, {
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
  try {
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
    const { selection } = hooks;
    const score = async (step: number) => {
      const success = await selection!.score(step, trainer.params());
      hooks.log?.(`validation success at step ${step}: ${(100 * success).toFixed(1)}%`);
    };
    if (ck && selection && (selection.due(ck.step) || ck.step === o.steps) && !selection.scored(ck.step))
      await score(ck.step);
    const r = await takeSteps(trainer, ds, o, { ...hooks, save, metricsPath, score });
    if (r.stopped) return { params: null, step: trainer.stepCount, last: r.last };
    return {
      params: selection ? await selection.bestParams() : trainer.params(),
      step: trainer.stepCount,
      last: r.last,
    };
  } finally {
    await trainer.close();
  }
}

interface StepContext extends PretrainHooks {
  save(): void;
  metricsPath: string;
  started: number;
  selection: Selection | null;
  /** Scores the weights of a step on the validation split (after its checkpoint). */
  score(step: number): Promise<void>;
}

/** Steps to `o.steps`, logging mean losses every `logEvery` steps and checkpointing on schedule or on a stop. */
async function takeSteps(
  trainer: BcTrainer,
  ds: BcData,
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
      const select = c.selection !== null && (c.selection.due(r.step) || r.step === o.steps);
      if (select || checkpointDue(r.step, o.checkpointEvery, o.steps)) c.save();
      if (select) await c.score(r.step);
      c.onStep?.(r.step, r.loss);
    }
    return { stopped: false, last };
  } finally {
    end?.();
  }
}
