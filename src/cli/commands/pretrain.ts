// `wmrl pretrain`: flags to a BC pretraining run (src/demos/pretrain.ts), its progress bar and Ctrl-C, and
// what it prints.
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { pretrain, type PretrainSummary } from '../../demos/index.ts';
import { SECOND_ENCODER_NAMES } from '../../policy/presets.ts';
import { BcFlags, addBcFlags } from '../bc-flags.ts';
import { parseOptions, printJson } from '../options.ts';
import { type ProgressBar, ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';

const PretrainOptions = ProgressFlags.merge(BcFlags).extend({
  data: z.array(z.string().min(1, 'a folder name is empty')).min(1),
  out: z.string().endsWith('.onnx', 'must end in .onnx'),
  init: z.string().endsWith('.onnx', 'must end in .onnx').optional(),
  runDir: z.string().optional(),
  rowsDir: z.string().optional(),
  resume: z.boolean().optional(),
  cameras: z
    .string()
    .transform((v) => v.split(',').map((c) => c.trim()))
    .pipe(
      z
        .array(z.string().regex(/^[A-Za-z0-9_-]+$/, 'camera names are letters, digits, _ and -'))
        .min(1, 'name at least one camera')
        .max(2, 'a policy reads at most 2 cameras'),
    )
    .optional(),
  secondEncoder: z.enum(SECOND_ENCODER_NAMES),
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
  const cmd = addProgressFlags(program.command('pretrain'))
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
    .option('--init <file.onnx>', 'start from this policy (the same network) instead of a seeded initialisation')
    .option('--run-dir <dir>', 'checkpoints and metrics.jsonl (default: runs/pretrain-<name>)')
    .option(
      '--rows-dir <dir>',
      're-simulated rows of each --data folder, cached (default: RUN_DIR/rows); a folder runs may share',
    )
    .option(
      '--resume',
      'continue from the checkpoint in the run folder (same options and data): ' +
        'the result is bit-identical to an uninterrupted run',
    )
    .option(
      '--cameras <names>',
      "scene cameras the new policy reads, comma-separated, at most 2 (e.g. front,wrist; default: the scene's " +
        'fixed cameras, front on scenes/tabletop.json)',
    )
    .option(
      '--second-encoder <kind>',
      `the second camera's encoder: ${SECOND_ENCODER_NAMES.join(' | ')} (shared: the first camera's, twice its ` +
        'cost; light: its own 16-channel patch-embedding encoder, about a third of the cost; needs 2 cameras)',
      'shared',
    )
    .option('--json', 'print one JSON object on stdout');
  addBcFlags(cmd).action(async (raw) => {
    const opts = parseOptions(PretrainOptions, raw);
    const result = await pretrainWithProgress(opts);
    if (opts.json) return printJson(result);
    console.log(
      `wrote ${opts.out}: ${result.steps} steps on ${result.samples} samples in ${result.seconds.toFixed(0)} s ` +
        `(metrics: ${result.runDir}/metrics.jsonl)`,
    );
  });
}
