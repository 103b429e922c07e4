// `wmrl pretrain`: flags to a BC pretraining run (src/demos/pretrain.ts), its progress bar and Ctrl-C, and
// what it prints.
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_MAX_NONFINITE_STEPS } from '../../nn/train.ts';
import { PRESET_NAMES } from '../../policy/presets.ts';
import { pretrain, type PretrainSummary } from '../../demos/index.ts';
import { intFlag, parseOptions, printJson, seedFlag } from '../options.ts';
import { type ProgressBar, ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';

const PretrainOptions = ProgressFlags.extend({
  data: z.array(z.string().min(1, 'a folder name is empty')).min(1),
  out: z.string().endsWith('.onnx', 'must end in .onnx'),
  steps: intFlag(1),
  batch: intFlag(1).max(4096),
  lr: z.coerce.number().positive('must be > 0'),
  weightDecay: z.coerce.number().min(0, 'must be >= 0'),
  shift: intFlag(0).max(16),
  wordDropout: z.coerce.number().min(0, 'must be >= 0').max(0.9, 'must be <= 0.9'),
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

/** The run with a progress bar; Ctrl-C (from its first step on) ends it with a checkpoint and exit 130. */
async function pretrainWithProgress({ json: _json, quiet, progressEvery, ...opts }: Opts): Promise<PretrainSummary> {
  const runDir = opts.runDir ?? join('runs', `pretrain-${basename(opts.out, '.onnx')}`);
  let bar: ProgressBar | undefined;
  const r = await pretrain(
    { ...opts, runDir },
    {
      shouldStop: interrupted,
      log: (line) => process.stderr.write(`${line}\n`),
      onStart: (done, total) => {
        const steps = progressBar('pretrain', total, { quiet, progressEvery });
        steps.tick(done);
        bar = steps;
        const release = cooperate();
        return () => {
          release();
          steps.stop();
        };
      },
      onStep: (_step, loss) => bar?.tick(1, `loss ${loss.toFixed(3)}`),
    },
  );
  if (r.stopped)
    throw new InterruptedError(`interrupted at step ${r.step}: checkpoint in ${runDir} (continue with --resume)`);
  return r.summary;
}

export function registerPretrain(program: Command): void {
  addProgressFlags(program.command('pretrain'))
    .description(
      'behaviour-clone the VLA on demonstrations from `wmrl collect` (cross-entropy on action tokens); ' +
        'the defaults are the recipe of models/vla-base.onnx',
    )
    .requiredOption(
      '--data <dirs>',
      'demonstration folders written by wmrl collect (repeat the flag or separate them with commas): ' +
        'each is re-simulated once into rows cached in the run folder, and the policy trains on their union',
      (v: string, prev: string[] = []) => [...prev, ...v.split(',')],
    )
    .requiredOption('--out <file.onnx>', 'policy file to write (plus its .json sidecar)')
    .option('--steps <n>', 'optimizer steps', '12000')
    .option('--batch <n>', 'batch size', '64')
    .option('--lr <x>', 'peak learning rate (cosine decay to 10%)', '0.002')
    .option('--weight-decay <x>', 'AdamW decoupled weight decay', '0.0001')
    .option('--shift <px>', 'random-shift image augmentation (pixels, 0 = off)', '0')
    .option('--word-dropout <p>', 'probability that an instruction word is replaced by <unk> (0 = off)', '0.1')
    .option('--size <preset>', `network size: ${PRESET_NAMES.join(' | ')}`, 'keypoints16')
    .option('--seed <n>', 'initialisation and batch-sampling seed', '0')
    .option('--log-every <n>', 'steps per JSONL metrics line', '50')
    .option('--threads <n>', 'onnxruntime intra-op threads', '1')
    .option('--checkpoint-every <n>', 'steps between checkpoints (each one commit; Ctrl-C also writes one)', '500')
    .option(
      '--max-nonfinite <n>',
      'stop with an error after this many consecutive steps with a non-finite loss or gradient',
      String(DEFAULT_MAX_NONFINITE_STEPS),
    )
    .option('--run-dir <dir>', 'checkpoints and metrics.jsonl (default: runs/pretrain-<name>)')
    .option(
      '--resume',
      'continue from the checkpoint in the run folder (same options and data): ' +
        'the result is bit-identical to an uninterrupted run',
    )
    .option('--only-success', 'train only on demonstrations whose noisy execution succeeded')
    .option(
      '--no-counterfactual',
      'leave out the counterfactual-instruction rows (approach frames relabelled for the other objects)',
    )
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(PretrainOptions, raw);
      const result = await pretrainWithProgress(opts);
      if (opts.json) return printJson(result);
      console.log(
        `wrote ${opts.out}: ${result.steps} steps on ${result.samples} samples in ${result.seconds.toFixed(0)} s ` +
          `(metrics: ${result.runDir}/metrics.jsonl)`,
      );
    });
}
