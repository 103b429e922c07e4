import type { Command } from 'commander';
import { z } from 'zod';
import { createTabletopEnv } from '../../physics/index.ts';
import { splitSeed } from '../../task/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { loadEnsembleDynamics, runShadow, WorldModelEnv } from '../../worldmodel/index.ts';
import { intFlag, parseOptions, printJson, requireFile, seedFlag, splitFlag, UsageError } from '../options.ts';
import { PhysicsDynamics, policySource, writeShadowFolder } from '../../eval/index.ts';
import { progressBar } from '../progress.ts';
import { loadScene, resolveTasks } from '../scene.ts';
import { shadowVerdict } from './shadow-verdict.ts';

const ShadowOptions = z.object({
  policy: z.string(),
  task: z.string(),
  episodes: intFlag(1),
  model: z.string(),
  sampling: z.enum(['mean', 'member']),
  noise: z.coerce.number().min(0).max(1),
  seed: seedFlag,
  split: splitFlag,
  numEnvs: intFlag(1).max(256),
  out: z.string().optional(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
  verdict: z.boolean().optional(),
  horizon: intFlag(1).max(1000),
  every: intFlag(1).max(1000),
});
export type ShadowOpts = z.infer<typeof ShadowOptions>;

export function registerShadow(program: Command): void {
  program
    .command('shadow')
    .description(
      'step physics and the world model on the same actions; report per-step divergence and hallucinated success',
    )
    .option(
      '--policy <name>',
      'expert | random | a VLA model file (.onnx), acting on the physics observations',
      'expert',
    )
    .option('--task <id>', 'task id (tabletop/push, push, ...)', 'push')
    .option('--episodes <n>', 'episodes', '20')
    .option(
      '--model <file>',
      'world-model file, or "physics" (the physics itself: zero divergence)',
      'models/wm-base.onnx',
    )
    .option('--sampling <mode>', 'mean | member (one ensemble member per env and step)', 'mean')
    .option('--noise <p>', 'expert only: probability of replacing each token with a random one', '0')
    .option('--seed <n>', 'first episode index inside the split', '0')
    .option('--split <split>', 'train | validation | heldout', 'heldout')
    .option('--num-envs <n>', 'parallel envs', '8')
    .option('--out <dir>', 'write shadow.json and shadow.png (divergence per step) here')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .option(
      '--verdict',
      "the world model's success verdict per family (--task all allowed): physics rollouts, segments " +
        'branched from their states every --every steps for --horizon steps of their actions, precision and ' +
        'recall against physics at the same step (writes verdict.json and verdict.md under --out)',
    )
    .option('--horizon <n>', "--verdict: steps per segment (the trainer's horizon)", '10')
    .option('--every <n>', "--verdict: a segment every this many steps (the trainer's branchEvery)", '5')
    .action(async (raw) => {
      const o = parseOptions(ShadowOptions, raw);
      const scene = loadScene(o.scene);
      if (o.verdict) return shadowVerdict(o, scene);
      const [taskId] = resolveTasks(scene, o.task);
      if (o.task === 'all')
        throw new UsageError('--task: shadow mode runs one task; pick one of push, pick-place, stack, put-in-bin');
      if (o.model !== 'physics') requireFile('--model', o.model, 'world-model file');
      const run = async () => {
        const n = Math.min(o.numEnvs, o.episodes);
        const source = await policySource(o.policy, { noise: o.noise });
        const real = await createTabletopEnv({ scene, taskId, numEnvs: n, cameras: source.cameras });
        const dynamics =
          o.model === 'physics'
            ? await PhysicsDynamics.create(scene, taskId, n)
            : (await loadEnsembleDynamics(o.model, scene, real.spec)).dynamics;
        const wm = new WorldModelEnv({ scene, spec: real.spec, numEnvs: n, dynamics, sampling: o.sampling });
        const seeds = Array.from({ length: o.episodes }, (_, k) => splitSeed(scene, o.split, o.seed + k));
        const bar = progressBar('shadow', o.episodes);
        try {
          const report = await runShadow(real, wm, { seeds, policy: source.make(real), onEpisode: () => bar.tick() });
          const summary = {
            task: taskId,
            policy: o.policy,
            model: o.model,
            sampling: o.sampling,
            split: o.split,
            ...report,
          };
          return { report, summary, files: o.out ? writeShadowFolder(o.out, summary) : undefined };
        } finally {
          bar.stop();
          await source.close();
          real.close();
          wm.close();
        }
      };
      const { report, summary, files } = o.out ? await withFolderLock(o.out, '--out', run) : await run();
      if (o.json) return printJson({ ...summary, files });
      const mm = (x: number) => `${(1000 * x).toFixed(1)} mm`;
      console.log(`${taskId} ${o.policy} vs ${o.model}: ${report.episodes} episodes, ${report.steps} steps`);
      console.log(
        `mean divergence: ee ${mm(report.mean.ee_m)}  fingers ${mm(report.mean.fingers_m)}  ` +
          `objects ${mm(report.mean.objects_m)}  task object ${mm(report.mean.task_object_m)}  ` +
          `image MAE ${report.mean.image_mae.toFixed(2)}`,
      );
      console.log(
        `success: physics ${(100 * report.env_success_rate).toFixed(1)}%  ` +
          `world model ${(100 * report.wm_success_rate).toFixed(1)}%  ` +
          `hallucinated ${(100 * report.hallucinated_success_rate).toFixed(1)}% of episodes, ` +
          `${(100 * report.hallucinated_step_rate).toFixed(2)}% of steps`,
      );
      if (files) console.log(`wrote ${files.json} and ${files.png} (y axis 0..${files.png_y_max_m} m)`);
    });
}
