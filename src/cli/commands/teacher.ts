import type { Command } from 'commander';
import { z } from 'zod';
import { teacherReport, type TeacherRow } from '../../eval/index.ts';
import { intFlag, parseOptions, printJson, seedFlag, splitFlag } from '../options.ts';
import { ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { loadScene, resolveTasks } from '../scene.ts';

const TeacherFlags = ProgressFlags.extend({
  split: splitFlag,
  episodes: intFlag(1),
  seed: seedFlag,
  task: z.string(),
  numEnvs: intFlag(1).max(256),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

function formatRows(rows: TeacherRow[]): string {
  const dims = Object.keys(rows[0]?.agreementPerDim ?? {});
  const head = `| task | with memory | without memory | tokens agreeing | ${dims.join(' | ')} | steps |`;
  const lines = rows.map((r) => {
    const rate = (x: TeacherRow['withMemory']) =>
      `${pct(x.rate)} [${(100 * x.ci95[0]).toFixed(1)}, ${(100 * x.ci95[1]).toFixed(1)}]`;
    const per = dims.map((d) => pct(r.agreementPerDim[d]));
    return `| ${r.task} | ${rate(r.withMemory)} | ${rate(r.withoutMemory)} | ${pct(r.agreement)} | ${per.join(' | ')} | ${r.steps} |`;
  });
  return [head, `|${'---|'.repeat(5 + dims.length)}`, ...lines].join('\n');
}

export function registerTeacher(program: Command): void {
  addProgressFlags(program.command('teacher'))
    .description(
      'how learnable the scripted expert is from what a policy sees: its success with memory between steps ' +
        'and without (a function of the state alone), and how often the memoryless expert gives the same ' +
        'tokens along the path of the one with memory',
    )
    .option('--split <split>', 'train | validation | heldout', 'heldout')
    .option('--episodes <n>', 'episodes per task family', '100')
    .option('--seed <n>', 'first episode index inside the split', '0')
    .option('--task <id>', 'task id or all', 'all')
    .option('--num-envs <n>', 'parallel envs', '16')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(TeacherFlags, raw);
      const scene = loadScene(opts.scene);
      const tasks = resolveTasks(scene, opts.task);
      const bar = progressBar('teacher', 2 * tasks.length * opts.episodes, opts);
      const rows = await teacherReport({ ...opts, scene, tasks, onEpisode: () => bar.tick() });
      bar.stop();
      if (opts.json) return printJson({ split: opts.split, seed: opts.seed, rows });
      console.log(
        `The scripted expert on ${opts.episodes} ${opts.split} episodes per family (95% Wilson intervals); ` +
          'agreement counts the steps of the expert with memory.\n',
      );
      console.log(formatRows(rows));
    });
}
