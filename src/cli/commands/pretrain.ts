import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { hashOf } from '../../core/hash.ts';
import { canonicalJson, jsonLine } from '../../core/spec.ts';
import { Graph } from '../../nn/ir.ts';
import { ParamStore } from '../../nn/params.ts';
import { fixedCameras, tabletopSpec } from '../../physics/index.ts';
import { BcTrainer } from '../../policy/bc.ts';
import { DEFAULT_MAX_NONFINITE_STEPS } from '../../nn/train.ts';
import { loadBcCheckpoint, saveBcCheckpoint } from '../../policy/bc-checkpoint.ts';
import { savePolicy } from '../../policy/model.ts';
import { PRESET_NAMES, PRETRAIN_SIZES, sceneWords } from '../../policy/presets.ts';
import { specInterfaceHash, vlaConfigFromSpec } from '../../policy/spec-config.ts';
import { WordTokenizer } from '../../policy/tokenizer.ts';
import { vlaForwardBuilder } from '../../policy/vla.ts';
import { demosToDataset, readDemoFolder } from '../../demos/index.ts';
import { UsageError, intFlag, parseOptions, printJson, seedFlag } from '../options.ts';
import { progressBar } from '../progress.ts';
import { loadScene } from '../scene.ts';
import { checkOutputDir, checkOutputFile, hasCheckpoint, lockFile, lockFolder, truncateMetrics } from '../../store/index.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';

const PretrainOptions = z.object({
  data: z.string().min(1),
  out: z.string().endsWith('.onnx', 'must end in .onnx'),
  steps: intFlag(1),
  batch: intFlag(1).max(4096),
  lr: z.coerce.number().positive('must be > 0'),
  weightDecay: z.coerce.number().min(0, 'must be >= 0'),
  shift: intFlag(0).max(16),
  size: z.enum(PRESET_NAMES),
  seed: seedFlag,
  logEvery: intFlag(1),
  threads: intFlag(1).max(64),
  checkpointEvery: intFlag(1),
  maxNonfinite: intFlag(1),
  runDir: z.string().optional(),
  resume: z.boolean().optional(),
  onlySuccess: z.boolean().optional(),
  counterfactual: z.boolean(),
  json: z.boolean().optional(),
});
type Opts = z.infer<typeof PretrainOptions>;

/** What must match for --resume to continue the same run. */
function runKey(opts: Opts, dataHash: string): Record<string, unknown> {
  const { data: _d, out: _o, steps: _s, logEvery: _l, checkpointEvery: _c, runDir: _r, resume: _re, json: _j, threads: _t, maxNonfinite: _m, ...rest } = opts;
  return { ...rest, steps: opts.steps, dataHash };
}

const defaultRunDir = (opts: Opts) => opts.runDir ?? join('runs', `pretrain-${basename(opts.out, '.onnx')}`);

/** Checks the outputs, reads the demonstrations, then trains while holding the locks of --out and --run-dir. */
async function pretrain(opts: Opts): Promise<Record<string, unknown>> {
  checkOutputFile(opts.out, '--out');
  checkOutputDir(defaultRunDir(opts), '--run-dir');
  const demoFolder = readDemoFolder(opts.data);
  const locks = [lockFile(opts.out, '--out'), lockFolder(defaultRunDir(opts), '--run-dir')];
  try {
    return await train(opts, demoFolder);
  } finally {
    for (const l of locks) l.release();
  }
}

async function train(opts: Opts, { meta, demos: all }: ReturnType<typeof readDemoFolder>): Promise<Record<string, unknown>> {
  const started = performance.now();
  const demos = opts.onlySuccess ? all.filter((d) => d.success) : all;
  if (demos.length === 0) throw new UsageError(`--data: ${opts.data} holds no usable demonstrations`);
  const scene = loadScene(meta.scene);
  const spec = tabletopSpec(scene, demos[0].task, fixedCameras(scene));
  const words = sceneWords(scene);
  const tokenizer = WordTokenizer.fromCorpus(words.corpus, { maxLength: words.maxLength });
  const config = vlaConfigFromSpec(spec, tokenizer.config, PRETRAIN_SIZES[opts.size]);
  const runDir = defaultRunDir(opts);
  const dataHash = hashOf(readFileSync(join(opts.data, 'episodes.bin')), readFileSync(join(opts.data, 'labels.bin')));
  const run = runKey(opts, dataHash);

  process.stderr.write(`re-simulating ${demos.length} demonstrations ...\n`);
  const ds = await demosToDataset(scene, demos, config, tokenizer, { counterfactual: opts.counterfactual });
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  let params = ParamStore.init(g.params, opts.seed);
  const ckpt = opts.resume && hasCheckpoint(runDir) ? loadBcCheckpoint(runDir) : null;
  if (opts.resume && !ckpt) throw new UsageError(`--resume: no checkpoint in ${runDir}`);
  if (ckpt) {
    if (canonicalJson(ckpt.run) !== canonicalJson(run)) throw new UsageError(`--resume: the checkpoint in ${runDir} belongs to a run with different options or data`);
    params = ckpt.params;
  }
  const trainer = await BcTrainer.create(config, params, { batch: opts.batch, lr: opts.lr, totalSteps: opts.steps, weightDecay: opts.weightDecay, shift: opts.shift, seed: opts.seed, runtime: { threads: opts.threads }, maxNonFiniteSteps: opts.maxNonfinite });
  const metricsPath = join(runDir, 'metrics.jsonl');
  if (ckpt) {
    trainer.resume(ckpt.optimizer, ckpt.step);
    truncateMetrics(metricsPath, ckpt.step);
  } else writeFileSync(metricsPath, '');
  const bar = progressBar('pretrain', opts.steps);
  bar.tick(trainer.stepCount);
  const save = () => saveBcCheckpoint(runDir, { step: trainer.stepCount, config, run, params: trainer.params(), optimizer: trainer.exportOptimizer() });
  let last = null;
  let window = 0;
  let windowLoss = 0;
  const release = cooperate();
  try {
    while (trainer.stepCount < opts.steps) {
      if (interrupted()) {
        save();
        throw new InterruptedError(`interrupted at step ${trainer.stepCount}: checkpoint in ${runDir} (continue with --resume)`);
      }
      const r = await trainer.step(ds);
      windowLoss += r.loss;
      window++;
      if (r.step % opts.logEvery === 0 || r.step === opts.steps) {
        last = { step: r.step, lr: r.lr, loss: windowLoss / window, grad_norm: r.gradNorm, finite: r.finite, accuracy: r.accuracy, seconds: (performance.now() - started) / 1000 };
        appendFileSync(metricsPath, jsonLine(last));
        window = 0;
        windowLoss = 0;
      }
      if (r.step % opts.checkpointEvery === 0 || r.step === opts.steps) save();
      bar.tick(1, `loss ${r.loss.toFixed(3)}`);
    }
  } catch (err) {
    await trainer.close();
    throw err;
  } finally {
    release();
    bar.stop();
  }
  const finalParams = trainer.params();
  await trainer.close();
  await savePolicy(opts.out, config, finalParams, {
    provenance: { producer: 'wmrl pretrain', seed: opts.seed, steps: opts.steps, notes: `behaviour cloning on ${demos.length} demos (${ds.size} steps) from ${opts.data} (noise ${meta.noise}, DART labels, counterfactual ${opts.counterfactual}); size ${opts.size}, batch ${opts.batch}, lr ${opts.lr}, shift ${opts.shift}` },
    specHash: specInterfaceHash(spec),
  });
  return { out: opts.out, runDir, demos: demos.length, samples: ds.size, params: finalParams.size, steps: opts.steps, last, seconds: (performance.now() - started) / 1000 };
}

export function registerPretrain(program: Command): void {
  program
    .command('pretrain')
    .description('behaviour-clone the VLA on demonstrations from `wmrl collect` (cross-entropy on action tokens); the defaults are the recipe of models/vla-base.onnx')
    .requiredOption('--data <dir>', 'demonstration folder written by wmrl collect')
    .requiredOption('--out <file.onnx>', 'policy file to write (plus its .json sidecar)')
    .option('--steps <n>', 'optimizer steps', '12000')
    .option('--batch <n>', 'batch size', '64')
    .option('--lr <x>', 'peak learning rate (cosine decay to 10%)', '0.002')
    .option('--weight-decay <x>', 'AdamW decoupled weight decay', '0.0001')
    .option('--shift <px>', 'random-shift image augmentation (pixels, 0 = off)', '0')
    .option('--size <preset>', `network size: ${PRESET_NAMES.join(' | ')}`, 'keypoints16')
    .option('--seed <n>', 'initialisation and batch-sampling seed', '0')
    .option('--log-every <n>', 'steps per JSONL metrics line', '50')
    .option('--threads <n>', 'onnxruntime intra-op threads', '1')
    .option('--checkpoint-every <n>', 'steps between checkpoints (each one commit; Ctrl-C also writes one)', '500')
    .option('--max-nonfinite <n>', 'stop with an error after this many consecutive steps with a non-finite loss or gradient', String(DEFAULT_MAX_NONFINITE_STEPS))
    .option('--run-dir <dir>', 'checkpoints and metrics.jsonl (default: runs/pretrain-<name>)')
    .option('--resume', 'continue from the checkpoint in the run folder (same options and data): the result is bit-identical to an uninterrupted run')
    .option('--only-success', 'train only on demonstrations whose noisy execution succeeded')
    .option('--no-counterfactual', 'leave out the counterfactual-instruction rows (approach frames relabelled for the other objects)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(PretrainOptions, raw);
      const result = await pretrain(opts);
      if (opts.json) return printJson(result);
      console.log(`wrote ${opts.out}: ${result.steps} steps on ${result.samples} samples in ${(result.seconds as number).toFixed(0)} s (metrics: ${result.runDir}/metrics.jsonl)`);
    });
}
