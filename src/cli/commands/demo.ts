import type { Command } from 'commander';
import { z } from 'zod';
import { intFlag, parseOptions, printJson } from '../options.ts';
import { progressBar } from '../progress.ts';
import { runEpisodes } from '../../physics/index.ts';
import { expertPolicy, formatSummary, summarise } from '../../eval/index.ts';
import { randomPolicy } from '../../rollout/index.ts';
import { loadScene, resolveTasks } from '../scene.ts';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('physics demo: the scripted expert and a random policy on every task family')
    .option('--episodes <n>', 'episodes per family and policy', '25')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(
        z.object({ episodes: intFlag(1), scene: z.string().optional(), json: z.boolean().optional() }),
        raw,
      );
      const scene = loadScene(opts.scene);
      const taskIds = resolveTasks(scene, 'all');
      const results: Record<string, Record<string, ReturnType<typeof summarise>>> = { expert: {}, random: {} };
      if (!opts.json)
        console.log(
          `wmrl physics demo: ${opts.episodes} held-out episodes per family (Rapier, 20 Hz control, 64x64 camera)\n`,
        );
      const bar = progressBar('demo', 2 * taskIds.length * opts.episodes);
      const start = performance.now();
      let steps = 0;
      for (const policyName of ['expert', 'random']) {
        for (const taskId of taskIds) {
          const episodes = await runEpisodes({
            scene,
            taskId,
            policyName,
            episodes: opts.episodes,
            split: 'heldout',
            seedOffset: 0,
            numEnvs: 4,
            makePolicy: (env) => (policyName === 'expert' ? expertPolicy(env) : randomPolicy(env.spec, 0)),
            onEpisode: () => bar.tick(),
          });
          steps += episodes.reduce((s, e) => s + e.length, 0);
          results[policyName][taskId] = summarise(episodes);
        }
      }
      bar.stop();
      const seconds = (performance.now() - start) / 1000;
      if (opts.json) return printJson({ ...results, steps, seconds });
      for (const [policyName, tasks] of Object.entries(results)) {
        console.log(`${policyName} policy`);
        for (const [id, s] of Object.entries(tasks)) console.log(`  ${formatSummary(id, s)}`);
      }
      console.log(
        `\n${steps} env steps in ${seconds.toFixed(1)} s ` +
          `(${(steps / seconds).toFixed(0)} steps/s including rendering and policy)`,
      );
      console.log('Next: npx wmrl --help');
    });
}
