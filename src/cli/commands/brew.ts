// `wmrl brew`: AgentBrew offline (src/experiment/brew.ts): flags, progress bar, what it prints.
import type { Command } from 'commander';
import { z } from 'zod';
import { BREW_METHODS, runBrew } from '../../experiment/index.ts';
import { checkOutputFile } from '../../store/index.ts';
import { intFlag, parseOptions, printJson, seedFlag } from '../options.ts';
import { progressBar } from '../progress.ts';
import { loadScene } from '../scene.ts';

const BrewFlags = z.object({
  data: z.string().min(1),
  policy: z.string().min(1),
  out: z.string().endsWith('.onnx', 'must end in .onnx'),
  method: z.enum(BREW_METHODS),
  pmi: z.boolean().optional(),
  steps: intFlag(1),
  batch: intFlag(1).max(4096),
  lr: z.coerce.number().positive('must be > 0'),
  seed: seedFlag,
  threads: intFlag(1).max(64),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

export function registerBrew(program: Command): void {
  program
    .command('brew')
    .description(
      'AgentBrew offline: fine-tune a policy by behaviour cloning on a stored batch of its rollouts ' +
        '(a wmrl rollout folder): rejection keeps the successes; agentbrew also keeps failures relabelled ' +
        'with an instruction their final state satisfies (never a held-out pair), --pmi weights steps by PMI',
    )
    .requiredOption('--data <dir>', 'rollout folder (wmrl rollout --split train, states recorded)')
    .requiredOption('--out <file.onnx>', 'policy file to write (plus its .json sidecar)')
    .option('--policy <file>', 'the policy fine-tuned (the one that made the rollouts)', 'models/vla-base.onnx')
    .option('--method <m>', `${BREW_METHODS.join(' | ')}`, 'agentbrew')
    .option('--pmi', "draw each episode's steps in proportion to their PMI with its instruction")
    .option('--steps <n>', 'optimizer steps', '1500')
    .option('--batch <n>', 'batch size', '64')
    .option('--lr <x>', 'peak learning rate (cosine decay to 10%)', '0.0003')
    .option('--seed <n>', 'batch-sampling seed', '0')
    .option('--threads <n>', 'onnxruntime intra-op threads', '1')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const o = parseOptions(BrewFlags, raw);
      checkOutputFile(o.out, '--out');
      const bar = progressBar('brew', o.steps);
      const summary = await runBrew(
        { ...o, pmi: o.pmi ?? false, scene: loadScene(o.scene) },
        {
          log: (line) => process.stderr.write(`${line}\n`),
          onStep: (_s, loss) => bar.tick(1, `loss ${loss.toFixed(3)}`),
        },
      ).finally(() => bar.stop());
      if (o.json) return printJson(summary);
      console.log(
        `wrote ${summary.out}: ${summary.kept} of ${summary.episodes} episodes (${summary.relabelled} relabelled), ` +
          `${summary.rows} rows, last loss ${summary.loss.toFixed(3)}`,
      );
    });
}
