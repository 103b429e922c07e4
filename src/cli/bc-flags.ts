// The behaviour-cloning flags `wmrl pretrain` and `wmrl dagger` share: defaults are the recipe of
// models/vla-base.onnx.
import type { Command } from 'commander';
import { z } from 'zod';
import type { PretrainOptions } from '../demos/index.ts';
import { DEFAULT_MAX_NONFINITE_STEPS } from '../nn/train.ts';
import { HEAD_NAMES, PRESET_NAMES } from '../policy/presets.ts';
import { intFlag, seedFlag } from './options.ts';

export const BcFlags = z.object({
  steps: intFlag(1),
  batch: intFlag(1).max(4096),
  lr: z.coerce.number().positive('must be > 0'),
  weightDecay: z.coerce.number().min(0, 'must be >= 0'),
  shift: intFlag(0).max(16),
  wordDropout: z.coerce.number().min(0, 'must be >= 0').max(0.9, 'must be <= 0.9'),
  size: z.enum(PRESET_NAMES),
  head: z.enum(HEAD_NAMES),
  seed: seedFlag,
  logEvery: intFlag(1),
  threads: intFlag(1).max(64),
  checkpointEvery: intFlag(1),
  maxNonfinite: intFlag(1),
  onlySuccess: z.boolean().optional(),
  counterfactual: z.boolean(),
  selectEvery: intFlag(0),
  selectEpisodes: intFlag(1),
});
export type BcFlagValues = z.infer<typeof BcFlags>;

export function addBcFlags(cmd: Command, defaults: { steps: string } = { steps: '12000' }): Command {
  return cmd
    .option('--steps <n>', 'optimizer steps', defaults.steps)
    .option('--batch <n>', 'batch size', '64')
    .option('--lr <x>', 'peak learning rate (cosine decay to 10%)', '0.002')
    .option('--weight-decay <x>', 'AdamW decoupled weight decay', '0.0001')
    .option('--shift <px>', 'random-shift image augmentation (pixels, 0 = off)', '0')
    .option('--word-dropout <p>', 'probability that an instruction word is replaced by <unk> (0 = off)', '0.1')
    .option('--size <preset>', `network size: ${PRESET_NAMES.join(' | ')}`, 'keypoints16')
    .option(
      '--head <kind>',
      `action head: ${HEAD_NAMES.join(' | ')} (autoregressive: each dimension given the tokens chosen before it)`,
      'independent',
    )
    .option('--seed <n>', 'initialisation, batch-sampling and rollout seed', '0')
    .option('--log-every <n>', 'steps per JSONL metrics line', '50')
    .option('--threads <n>', 'onnxruntime intra-op threads', '1')
    .option('--checkpoint-every <n>', 'steps between checkpoints (each one commit; Ctrl-C also writes one)', '500')
    .option(
      '--max-nonfinite <n>',
      'stop with an error after this many consecutive steps with a non-finite loss or gradient',
      String(DEFAULT_MAX_NONFINITE_STEPS),
    )
    .option('--only-success', 'train only on demonstrations whose execution succeeded')
    .option(
      '--no-counterfactual',
      'leave out the counterfactual-instruction rows (approach frames relabelled for the other objects)',
    )
    .option(
      '--select-every <n>',
      'score the policy on the validation split every n steps and keep the best (0: keep the last weights)',
      '0',
    )
    .option('--select-episodes <n>', 'validation episodes per task of each score', '50');
}

/** The training part of PretrainOptions from parsed flags. */
export function bcTrainOptions(
  f: BcFlagValues,
): Omit<PretrainOptions, 'data' | 'out' | 'runDir' | 'rowsDir' | 'init' | 'resume'> {
  return {
    steps: f.steps,
    batch: f.batch,
    lr: f.lr,
    weightDecay: f.weightDecay,
    shift: f.shift,
    wordDropout: f.wordDropout,
    size: f.size,
    // absent for independent heads: the keys of earlier pretrain and dagger runs stay the same
    ...(f.head !== 'independent' ? { head: f.head } : {}),
    seed: f.seed,
    logEvery: f.logEvery,
    threads: f.threads,
    checkpointEvery: f.checkpointEvery,
    maxNonfinite: f.maxNonfinite,
    onlySuccess: f.onlySuccess,
    counterfactual: f.counterfactual,
    selectEvery: f.selectEvery,
    selectEpisodes: f.selectEpisodes,
  };
}
