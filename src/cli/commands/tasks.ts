import type { Command } from 'commander';
import { z } from 'zod';
import { findTask, taskIds } from '../../task/index.ts';
import { parseOptions, printJson } from '../options.ts';
import { loadScene } from '../scene.ts';

export function registerTasks(program: Command): void {
  program
    .command('tasks')
    .description('list the task families of the scene with their env ids')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action((raw) => {
      const opts = parseOptions(z.object({ scene: z.string().optional(), json: z.boolean().optional() }), raw);
      const scene = loadScene(opts.scene);
      const tasks = taskIds(scene).map((id) => {
        const t = findTask(scene, id);
        return {
          id,
          family: t.family,
          objects: t.objects,
          targets: t.targets,
          heldoutPairs: t.heldoutPairs,
          maxEpisodeSteps: t.maxEpisodeSteps,
          example: t.templates[0],
        };
      });
      if (opts.json) return printJson({ scene: scene.name, tasks });
      for (const t of tasks)
        console.log(
          `${t.id.padEnd(22)} ${t.family.padEnd(11)} ${t.objects.length} objects x ${t.targets.length} targets, ` +
            `${t.maxEpisodeSteps} steps  e.g. "${t.example}"`,
        );
    });
}
