import type { Command } from 'commander';
import { z } from 'zod';
import { ACTION_NAMES } from '../../physics/index.ts';
import { writeEpisodeFolder, type StoredEpisode } from '../../rollout/index.ts';
import { stateNames } from '../../task/index.ts';
import { policySource } from '../../eval/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { intFlag, parseOptions, printJson, seedFlag, splitFlag } from '../options.ts';
import { progressBar } from '../progress.ts';
import { defaultRunDir } from '../run-dir.ts';
import { runEpisodes } from '../../physics/index.ts';
import { formatSummary, summarise, type SuccessSummary } from '../../eval/index.ts';
import { loadScene, resolveTasks } from '../scene.ts';
import { ServeFlags, addServeFlags, startViewer } from '../serve.ts';
import { dirname } from 'node:path';

const RolloutOptions = ServeFlags.extend({
  task: z.string(),
  policy: z.string(),
  episodes: intFlag(1),
  seed: seedFlag,
  split: splitFlag,
  out: z.string().optional(),
  numEnvs: intFlag(1).max(256),
  noise: z.coerce.number().min(0).max(1),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

export function registerRollout(program: Command): void {
  const cmd = program
    .command('rollout')
    .description('run a policy in physics, print the success rate (Wilson 95% CI) and save the episodes')
    .option('--task <id>', 'task id (tabletop/push, push, ...) or all', 'all')
    .option('--policy <name>', 'expert | random | a model file (.onnx)', 'expert')
    .option('--episodes <n>', 'episodes per task', '20')
    .option('--seed <n>', 'first episode index inside the split', '0')
    .option('--split <split>', 'train | validation (model selection) | heldout (reported evaluation)', 'train')
    .option('--out <dir>', 'run folder for the episodes (default: runs/rollout-<time>)')
    .option('--num-envs <n>', 'parallel envs', '4')
    .option('--noise <p>', 'expert only: probability of replacing each token with a random one', '0')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout (keys success_rate, ci_low, ci_high, episodes, tasks)');
  addServeFlags(cmd, 'rolling out').action(async (raw) => {
    const opts = parseOptions(RolloutOptions, raw);
    const scene = loadScene(opts.scene);
    const taskIds = resolveTasks(scene, opts.task);
    const out = opts.out ?? defaultRunDir('rollout');
    const all: StoredEpisode[] = [];
    const tasks: Record<string, SuccessSummary> = {};
    await withFolderLock(out, '--out', async () => {
      const source = await policySource(opts.policy, { noise: opts.noise });
      const viewer = opts.serve
        ? await startViewer({
            scene,
            runs: dirname(out),
            liveRun: out,
            liveKind: 'rollout',
            host: opts.host,
            port: opts.port,
          })
        : null;
      if (viewer) console.error(`wmrl viewer: ${viewer.url}`);
      const bar = progressBar('rollout', taskIds.length * opts.episodes);
      try {
        for (const taskId of taskIds) {
          const episodes = await runEpisodes({
            scene,
            taskId,
            policyName: opts.policy,
            episodes: opts.episodes,
            split: opts.split,
            seedOffset: opts.seed,
            numEnvs: opts.numEnvs,
            cameras: source.cameras,
            recordStates: true,
            makePolicy: (env) => source.make(env),
            onEpisode: (e) => bar.tick(1, `${taskId} ${e.success ? 'ok' : 'fail'}`),
            live: viewer?.hub,
          });
          tasks[taskId] = summarise(episodes);
          all.push(...episodes);
        }
      } finally {
        bar.stop();
        await source.close();
        await viewer?.close();
      }
      writeEpisodeFolder(
        out,
        {
          command: `wmrl rollout ${process.argv.slice(3).join(' ')}`,
          actionNames: [...ACTION_NAMES],
          stateNames: stateNames(scene.objects.map((o) => o.name)),
        },
        all,
      );
    });
    const overall = summarise(all);
    if (opts.json)
      return printJson({ task: opts.task, policy: opts.policy, split: opts.split, ...overall, tasks, out });
    for (const [id, s] of Object.entries(tasks)) console.log(formatSummary(id, s));
    if (taskIds.length > 1) console.log(formatSummary('overall', overall));
    console.log(`episodes written to ${out}`);
  });
}
