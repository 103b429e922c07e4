// `wmrl wm train`: flags to a world-model training run (src/worldmodel/train-run.ts), its progress bar and
// Ctrl-C, and what it prints.
import { basename, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_MAX_NONFINITE_STEPS } from '../../nn/train.ts';
import { trainWorldModel } from '../../worldmodel/index.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';
import { intFlag, parseOptions, printJson, seedFlag } from '../options.ts';
import { type ProgressBar, ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { physicsSpecs, printReport } from './wm.ts';

const list = (v: string, prev: string[] = []) => [...prev, v];

const TrainOptions = ProgressFlags.extend({
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

async function wmTrain({ json, quiet, progressEvery, ...o }: Opts): Promise<void> {
  const metrics = o.metrics ?? o.out.replace(/\.onnx$/, '.metrics.jsonl');
  const runDir = o.runDir ?? join('runs', `wm-train-${basename(o.out, '.onnx')}`);
  const command = `wmrl wm train ${process.argv
    .slice(4)
    .filter((a) => a !== '--resume')
    .join(' ')}`;
  let bar: ProgressBar | undefined;
  let last = 0;
  const r = await trainWorldModel(
    { ...o, metrics, runDir, specsFor: physicsSpecs, command },
    {
      shouldStop: interrupted,
      onStart: (done, total) => {
        const fit = progressBar('wm train', total, { quiet, progressEvery });
        fit.tick(done);
        [bar, last] = [fit, done];
        const release = cooperate();
        return () => {
          release();
          fit.stop();
        };
      },
      onMetrics: (m) => {
        bar?.tick(m.step - last, `loss ${m.loss.toFixed(3)} val ${m.valMse?.toFixed(4) ?? '-'}`);
        last = m.step;
      },
    },
  );
  if (r.stopped)
    throw new InterruptedError(`interrupted at step ${r.step}: checkpoint in ${runDir} (continue with --resume)`);
  const { summary, heldout, fit } = r;
  if (json) return printJson({ ...summary, elapsed_s: fit.elapsedMs / 1000, heldout, metrics, run_dir: runDir });
  console.log(
    `trained ${o.out}: ${fit.steps} steps (${(fit.elapsedMs / 1000).toFixed(0)} s in this process), ` +
      `best held-out 1-step MSE ${fit.bestValMse?.toFixed(4)} (normalised) at step ${fit.bestStep}`,
  );
  printReport(heldout);
}

export function registerWmTrain(wm: Command): void {
  addProgressFlags(wm.command('train'))
    .description('train the K-member ensemble on physics transitions from run folders (wmrl rollout writes them)')
    .option('--data <dir>', 'run folder with recorded states (repeatable)', list)
    .option('--val <dir>', 'held-out run folder (repeatable; default: every 10th episode of --data)', list)
    .requiredOption('--out <file>', 'model file, e.g. models/wm-base.onnx (sidecars NAME.json, NAME.wm.json)')
    .option('--members <k>', 'ensemble members', '5')
    .option('--hidden <widths>', 'hidden layer widths', '200,200,200')
    .option('--steps <n>', 'optimizer steps (at most, with --time-budget)', '8000')
    .option('--batch <n>', 'transitions per member per step', '256')
    .option('--lr <x>', 'peak learning rate (cosine decay to a tenth)', '0.001')
    .option(
      '--time-budget <s>',
      'choose the step count from a timed probe so training takes about this long ' +
        '(the count is recorded; --resume replays it)',
    )
    .option('--eval-every <n>', 'validate every n steps (the best model so far is written to --out)', '500')
    .option('--checkpoint-every <n>', 'steps between checkpoints in the run folder (Ctrl-C also writes one)', '500')
    .option(
      '--max-nonfinite <n>',
      'stop with an error after this many consecutive steps with a non-finite loss or gradient',
      String(DEFAULT_MAX_NONFINITE_STEPS),
    )
    .option('--seed <n>', 'init and batch seed', '0')
    .option('--metrics <file>', 'JSONL metrics (default: NAME.metrics.jsonl next to the model)')
    .option('--run-dir <dir>', 'checkpoints (default: runs/wm-train-<name>)')
    .option(
      '--resume',
      'continue from the checkpoint in the run folder (same options and data): ' +
        'the model is bit-identical to an uninterrupted run',
    )
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout (training summary and held-out report)')
    .action(async (raw) => wmTrain(parseOptions(TrainOptions, raw)));
}
