import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { createTabletopEnv, ScriptedExpert } from '../../physics/index.ts';
import { writePng } from '../../render/png-file.ts';
import { parseOptions, printJson, seedFlag, intFlag, UsageError } from '../options.ts';
import { loadScene, resolveTasks } from '../scene.ts';

export function registerRender(program: Command): void {
  program
    .command('render')
    .description("write the policy's observation of an episode (first, or after the expert's --steps) as a PNG")
    .requiredOption('--task <id>', 'task id, e.g. tabletop/push or push')
    .option('--seed <n>', 'episode seed', '0')
    .requiredOption('--out <file.png>', 'output PNG path')
    .option('--camera <name>', 'camera, e.g. front or wrist (default: the first fixed camera)')
    .option('--steps <n>', 'the scripted expert acts this many steps first (e.g. to a grasp or a carry)', '0')
    .option('--scale <n>', 'nearest-neighbour upscale factor', '4')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(
        z.object({
          task: z.string(),
          seed: seedFlag,
          steps: intFlag(0).max(1000),
          out: z.string().endsWith('.png', 'must end in .png'),
          camera: z.string().optional(),
          scale: intFlag(1).max(16),
          scene: z.string().optional(),
          json: z.boolean().optional(),
        }),
        raw,
      );
      const scene = loadScene(opts.scene);
      const [taskId] = resolveTasks(scene, opts.task);
      const camera = opts.camera ?? scene.cameras.find((c) => c.mount === 'fixed')?.name ?? scene.cameras[0].name;
      const cam = scene.cameras.find((c) => c.name === camera);
      if (!cam)
        throw new UsageError(
          `--camera: unknown camera "${camera}"; scene has ${scene.cameras.map((c) => c.name).join(', ')}`,
        );
      const env = await createTabletopEnv({ scene, taskId, numEnvs: 1, cameras: [camera] });
      try {
        let { obs } = await env.reset({ seed: opts.seed });
        const instruction = env.task(0).instruction;
        const expert = new ScriptedExpert(env);
        let step = 0;
        for (; step < opts.steps; step++) {
          const r = await env.step(expert.act());
          obs = r.obs;
          if (r.terminated[0] || r.truncated[0]) {
            step++;
            break;
          }
        }
        mkdirSync(dirname(opts.out), { recursive: true });
        writePng(opts.out, obs[`image_${camera}`] as Uint8Array, cam.width, cam.height, opts.scale);
        const result = {
          out: opts.out,
          task: taskId,
          seed: opts.seed,
          camera,
          step,
          instruction,
          width: cam.width * opts.scale,
          height: cam.height * opts.scale,
        };
        if (opts.json) printJson(result);
        else console.log(`wrote ${opts.out} (${result.width}x${result.height}, step ${step}): "${result.instruction}"`);
      } finally {
        env.close();
      }
    });
}
