import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { readInputJson } from '../../core/input-file.ts';
import {
  ResearchSpeedupSchema,
  SpeedupConfigSchema,
  runResearchSpeedup,
  runSpeedup,
  writeResearchReport,
  writeSpeedupReport,
} from '../../experiment/index.ts';
import { MODES } from '../../trainer/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { UsageError, parseOptions, printJson, requireFile } from '../options.ts';
import { ExperimentFlags, SeedList, addExperimentFlags, experimentLog, experimentPaths } from '../experiment-flags.ts';
import { addProgressFlags } from '../progress.ts';
import { loadScene, resolveTasks } from '../scene.ts';
import { registerCorrections } from './corrections.ts';
import { registerResearchStudy } from './research-study.ts';

const commaList = z.string().transform((s) => s.split(',').filter(Boolean));

const SpeedupOptions = ExperimentFlags.extend({
  seeds: SeedList.optional(),
  modes: commaList.pipe(z.array(z.enum(MODES)).min(1)).optional(),
  task: z.string().optional(),
  config: z.string().optional(),
  jobs: z.coerce.number().int().min(1).optional(),
  suite: z.enum(['tabletop', 'autoresearch']),
});

/** The AutoResearch suite: real-execution GRPO vs WMRL on the research tasks, held-out tasks evaluated. */
async function researchSuite(o: z.infer<typeof SpeedupOptions>, raw: Record<string, unknown>): Promise<void> {
  const file = o.config ? readInputJson(o.config, z.record(z.string(), z.unknown()), 'experiment config') : {};
  const parsed = ResearchSpeedupSchema.safeParse({ ...file, ...(o.seeds ? { seed: o.seeds[0] } : {}) });
  if (!parsed.success)
    throw new UsageError(
      `experiment config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const runs = raw.runs === 'runs/speedup' ? 'runs/research-speedup' : o.runs;
  const reportDir = raw.report === 'docs/speedup' ? 'docs/autoresearch' : o.report;
  const log = experimentLog(o);
  const report = await withFolderLock(runs, '--runs', () => runResearchSpeedup(parsed.data, runs, log, o));
  const files = writeResearchReport(
    reportDir,
    report,
    `wmrl experiment speedup ${process.argv.slice(4).join(' ')}`.trim(),
  );
  if (o.json) return printJson(report);
  console.log(readFileSync(files.md!, 'utf8'));
}

export function registerExperiment(program: Command): void {
  const experiment = program.command('experiment').description('experiments over trainer runs');
  registerCorrections(experiment);
  registerResearchStudy(experiment);
  const speedup = addProgressFlags(experiment.command('speedup'))
    .description(
      'real vs wmrl (and the ablations) on the same seeds: held-out success vs wall-clock and physics steps, ' +
        "the speedup to real's final success; resumable (finished runs and evaluations are kept)",
    )
    .option('--seeds <list>', 'run seeds, comma-separated (default 0)')
    .option(
      '--modes <list>',
      'modes, comma-separated, must include real ' +
        `(default real,wmrl,mix,mix+denoise,mix+debias; valid: ${MODES.join(', ')})`,
    )
    .option('--task <ids>', 'tasks, comma-separated (default pick-place,put-in-bin)')
    .option(
      '--config <file>',
      'JSON file of experiment fields (iterations, evalEvery, evalEpisodes, finalEpisodes, jobs)',
    )
    .option('--jobs <n>', 'training runs at once (default 2: one per core)');
  addExperimentFlags(speedup, {
    runs: 'runs/speedup',
    report: 'docs/speedup',
    reportFiles: 'report.json, table.md and index.html',
  })
    .option(
      '--suite <s>',
      'tabletop (the VLA on the tabletop) | autoresearch (the research agent: real-execution GRPO vs wmrl, ' +
        'first of --seeds; --runs default runs/research-speedup, --report docs/autoresearch; --config fields below)',
      'tabletop',
    )
    .addHelpText(
      'after',
      `\nExperiment fields (--config file.json):\n${Object.entries(SpeedupConfigSchema.shape)
        .map(([k, v]) => `  ${k}: ${v.description ?? ''}`)
        .join('\n')}\n\n--suite autoresearch fields:\n${Object.entries(ResearchSpeedupSchema.shape)
        .map(([k, v]) => `  ${k}: ${v.description ?? ''}`)
        .join('\n')}`,
    )
    .action(async (raw) => {
      const o = parseOptions(SpeedupOptions, raw);
      if (o.suite === 'autoresearch') return researchSuite(o, raw);
      requireFile('--policy', o.policy, 'policy file');
      requireFile('--world-model', o.worldModel, 'world-model file');
      const scene = loadScene(o.scene);
      const file = o.config ? readInputJson(o.config, z.record(z.string(), z.unknown()), 'experiment config') : {};
      const flags = Object.fromEntries(
        Object.entries({
          seeds: o.seeds,
          modes: o.modes,
          jobs: o.jobs,
          tasks: o.task && resolveTasks(scene, o.task),
        }).filter(([, v]) => v !== undefined),
      );
      const parsed = SpeedupConfigSchema.safeParse({ ...file, ...flags });
      if (!parsed.success)
        throw new UsageError(
          `experiment config: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      const command = `wmrl experiment speedup ${process.argv.slice(4).join(' ')}`.trim();
      const log = experimentLog(o);
      const report = await withFolderLock(o.runs, '--runs', () =>
        runSpeedup(scene, parsed.data, experimentPaths(o), log),
      );
      const files = writeSpeedupReport(o.report, report, command);
      if (o.json) return printJson(report);
      for (const r of report.runs) {
        const f = r.final.overall;
        const x = (f: typeof r.speedup_wall, d: number) =>
          f?.estimate == null ? 'not reached' : `${f.estimate.toFixed(d)}x`;
        const speedup =
          r.mode === 'real' ? 'reference' : `${x(r.speedup_wall, 2)} wall / ${x(r.speedup_physics, 1)} physics`;
        console.log(
          `${r.mode.padEnd(12)} seed ${r.seed}: held-out ${(100 * f.success).toFixed(1)}% ` +
            `(vs base ${(100 * f.vs_base.diff).toFixed(1)} ` +
            `[${(100 * f.vs_base.ci_low).toFixed(1)}, ${(100 * f.vs_base.ci_high).toFixed(1)}]), ` +
            `${r.train_seconds.toFixed(0)} s, ${r.physics_steps} physics steps, speedup ${speedup}`,
        );
      }
      console.log(`report: ${files.json}, ${files.md}, ${files.html}`);
    });
}
