import type { Command } from 'commander';
import { z } from 'zod';
import { collectDemos, writeDemoFolder, DEMOS_FORMAT, type Demo } from '../../demos/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { intFlag, parseOptions, printJson, seedFlag } from '../options.ts';
import { ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { formatSummary, summarise, type SuccessSummary } from '../../eval/index.ts';
import { DEFAULT_SCENE_PATH, loadScene, resolveTasks } from '../scene.ts';

const CollectOptions = ProgressFlags.extend({
  task: z.string(),
  episodes: intFlag(1),
  out: z.string().min(1, 'must name a folder'),
  noise: z.coerce.number().min(0, 'must be in [0, 1]').max(1, 'must be in [0, 1]'),
  seed: seedFlag,
  offset: intFlag(0).max(999_999),
  numEnvs: intFlag(1).max(256),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

export function registerCollect(program: Command): void {
  addProgressFlags(program.command('collect'))
    .description(
      'record scripted-expert demonstrations (train split) for behaviour cloning: noisy execution, ' +
        'clean expert labels (DART)',
    )
    .option('--task <id>', 'task id (tabletop/push, push, ...) or all', 'all')
    .option('--episodes <n>', 'demonstrations per task (400: the recipe of models/vla-base.onnx)', '400')
    .requiredOption('--out <dir>', 'output folder (episodes.bin + index.json + labels.bin + demos.json)')
    .option(
      '--noise <p>',
      'probability of replacing each executed token by a random one (the label stays the expert token)',
      '0.05',
    )
    .option('--seed <n>', 'seed of the noise stream', '0')
    .option('--offset <n>', 'first train-split episode index', '0')
    .option('--num-envs <n>', 'parallel envs', '8')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(CollectOptions, raw);
      const scene = loadScene(opts.scene);
      const taskIds = resolveTasks(scene, opts.task);
      const started = performance.now();
      const demos: Demo[] = [];
      const tasks: Record<string, SuccessSummary> = {};
      await withFolderLock(opts.out, '--out', async () => {
        const bar = progressBar('collect', taskIds.length * opts.episodes, opts);
        for (const taskId of taskIds) {
          const got = await collectDemos(scene, taskId, {
            episodes: opts.episodes,
            noise: opts.noise,
            seed: opts.seed,
            seedOffset: opts.offset,
            numEnvs: opts.numEnvs,
            onEpisode: (e) => bar.tick(1, `${taskId} ${e.success ? 'ok' : 'fail'}`),
          });
          tasks[taskId] = summarise(got);
          demos.push(...got);
        }
        bar.stop();
        const meta = {
          format: DEMOS_FORMAT,
          scene: opts.scene ?? DEFAULT_SCENE_PATH,
          noise: opts.noise,
          seed: opts.seed,
          labels: 'expert',
          observations: 're-simulate',
        } as const;
        writeDemoFolder(opts.out, meta, `wmrl collect ${process.argv.slice(3).join(' ')}`, scene, demos);
      });
      const steps = demos.reduce((s, d) => s + d.length, 0);
      const seconds = (performance.now() - started) / 1000;
      if (opts.json)
        return printJson({ out: opts.out, episodes: demos.length, steps, seconds, noise: opts.noise, tasks });
      for (const [id, s] of Object.entries(tasks)) console.log(formatSummary(id, s));
      console.log(`${demos.length} demonstrations, ${steps} labelled steps in ${seconds.toFixed(1)} s -> ${opts.out}`);
    });
}
