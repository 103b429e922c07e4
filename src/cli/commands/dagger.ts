// `wmrl dagger`: flags to expert-corrected rounds (src/demos/dagger.ts), progress, and what it prints.
import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { type DaggerRound, dagger } from '../../demos/index.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';
import { intFlag, parseOptions, printJson } from '../options.ts';
import { ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { DEFAULT_SCENE_PATH, loadScene, resolveTasks } from '../scene.ts';
import { BcFlags, addBcFlags, bcTrainOptions } from '../bc-flags.ts';

const DaggerFlags = ProgressFlags.merge(BcFlags).extend({
  data: z.string().min(1),
  policy: z.string().endsWith('.onnx', 'must end in .onnx'),
  out: z.string().endsWith('.onnx', 'must end in .onnx'),
  dir: z.string().min(1),
  rounds: intFlag(1).max(100),
  episodes: intFlag(1),
  expertShare: z.coerce.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]'),
  decay: z.coerce.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]'),
  offset: intFlag(0).max(999_999),
  from: z.enum(['previous', 'scratch']),
  validationEpisodes: intFlag(1),
  numEnvs: intFlag(1).max(256),
  task: z.string(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

const pct = (x: number | null) => (x === null ? '-' : `${(100 * x).toFixed(1)}%`);

function roundLine(r: DaggerRound): string {
  const tasks = Object.entries(r.validation.tasks)
    .map(([t, s]) => `${t.replace(/^.*\//, '')} ${pct(s)}`)
    .join(', ');
  const what = r.round === 0 ? 'start' : `expert share ${r.expertShare}, ${r.labels} expert labels`;
  return (
    `round ${r.round} (${what}): validation ${pct(r.validation.overall)} [${tasks}; ` +
    `seen pairs ${pct(r.validation.seen)}, reserved ${pct(r.validation.reserved)}]`
  );
}

export function registerDagger(program: Command): void {
  const cmd = program
    .command('dagger')
    .description(
      'expert-corrected rounds (DAgger): the policy acts in physics on fresh train seeds (mixed with the expert), ' +
        'the scripted expert labels every visited state, the rows join the data and the policy is trained again; ' +
        'each round is scored on the validation split and the best round is written to --out',
    )
    .requiredOption('--data <dir>', 'expert demonstrations every round also trains on (wmrl collect)')
    .requiredOption('--policy <file.onnx>', "round 0's policy (e.g. wmrl pretrain on --data)")
    .requiredOption('--out <file.onnx>', 'the round with the best validation success is copied here')
    .option('--dir <dir>', 'rounds folder: rounds.json and round-K/{demos,pretrain,policy.onnx}', 'runs/dagger')
    .option('--rounds <n>', 'correction rounds (a re-run with more rounds continues)', '3')
    .option('--episodes <n>', 'learner episodes per task per round', '200')
    .option('--expert-share <p>', "probability that round 1 executes the expert's token instead", '0.5')
    .option('--decay <x>', 'the expert share is multiplied by this each round', '0.5')
    .option('--offset <n>', "train-split episode index of round 1's first episode (disjoint from --data's)", '100000')
    .option(
      '--from <previous|scratch>',
      "each round fine-tunes the previous round's policy, or trains anew",
      'previous',
    )
    .option('--validation-episodes <n>', 'validation episodes per task scoring each round', '100')
    .option('--num-envs <n>', 'parallel envs', '16')
    .option('--task <id>', 'task id or all', 'all')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)');
  addBcFlags(cmd, { steps: '4000' });
  addProgressFlags(cmd)
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const o = parseOptions(DaggerFlags, raw);
      const scene = loadScene(o.scene);
      const tasks = resolveTasks(scene, o.task);
      let bar: ReturnType<typeof progressBar> | undefined;
      const release = cooperate();
      try {
        const r = await dagger(
          {
            scene,
            scenePath: o.scene ?? DEFAULT_SCENE_PATH,
            tasks,
            data: o.data,
            policy: o.policy,
            dir: o.dir,
            rounds: o.rounds,
            episodes: o.episodes,
            expertShare: o.expertShare,
            decay: o.decay,
            seedOffset: o.offset,
            seed: o.seed,
            numEnvs: o.numEnvs,
            validationEpisodes: o.validationEpisodes,
            from: o.from,
            train: bcTrainOptions(o),
          },
          o.out,
          {
            shouldStop: interrupted,
            log: (line) => process.stderr.write(`${line}\n`),
            onStart: (done, total) => {
              bar = progressBar('train', total, { quiet: o.quiet, progressEvery: o.progressEvery });
              bar.tick(done);
              return () => bar?.stop();
            },
            onStep: (_s, loss) => bar?.tick(1, `loss ${loss.toFixed(3)}`),
            onRound: (round) => process.stderr.write(`${roundLine(round)}\n`),
          },
        );
        if (o.json) return printJson({ out: o.out, best: r.best.round, rounds: r.rounds });
        console.log(
          `wrote ${o.out}: round ${r.best.round} (validation ${pct(r.best.validation.overall)}; ` +
            `rounds in ${join(o.dir, 'rounds.json')})`,
        );
      } catch (err) {
        if (interrupted()) throw new InterruptedError(`interrupted: run again with the same flags to continue`);
        throw err;
      } finally {
        release();
      }
    });
}
