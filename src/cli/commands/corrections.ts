// `wmrl experiment corrections`: the corrections study (src/experiment/corrections.ts) from a JSON file
// of rows, resumable, into a runs folder and a report folder.
import type { Command } from 'commander';
import { z } from 'zod';
import { readInputJson } from '../../core/input-file.ts';
import {
  CorrectionStudySchema,
  correctionTable,
  runCorrectionStudy,
  writeCorrectionReport,
} from '../../experiment/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { UsageError, parseOptions, printJson, requireFile } from '../options.ts';
import { ExperimentFlags, SeedList, addExperimentFlags, experimentLog, experimentPaths } from '../experiment-flags.ts';
import { addProgressFlags } from '../progress.ts';
import { loadScene } from '../scene.ts';

const Options = ExperimentFlags.extend({
  config: z.string(),
  rows: z
    .string()
    .transform((s) => s.split(',').filter(Boolean))
    .optional(),
  seeds: SeedList.optional(),
  train: z.boolean(),
});

export function registerCorrections(experiment: Command): void {
  const command = addProgressFlags(experiment.command('corrections'))
    .description(
      'what the world model and each correction add: rows (a mode and trainer fields) on several seeds, each run ' +
        'evaluated on the held-out split; between-seed means with 95% intervals and per-seed paired ' +
        'differences against other rows; resumable (finished runs and evaluations are kept)',
    )
    .requiredOption('--config <file>', 'JSON file of the study (fields below; scripts/corrections/study.json)')
    .option('--rows <names>', 'train only these rows, comma-separated (the report covers every row)')
    .option(
      '--seeds <list>',
      'train only these seeds, comma-separated (default: the file’s; the report covers the file’s)',
    )
    .option('--no-train', 'train nothing: report the runs already finished and evaluated');
  addExperimentFlags(command, {
    runs: 'runs/corrections',
    report: 'docs/corrections',
    reportFiles: 'report.json, table.md and index.html',
  })
    .addHelpText(
      'after',
      `\nStudy fields (--config file.json):\n${Object.entries(CorrectionStudySchema.shape)
        .map(([k, v]) => `  ${k}: ${v.description ?? ''}`)
        .join(
          '\n',
        )}\nA row: { name, mode, config: trainer fields over the study's, versus: names of rows it is paired against }`,
    )
    .action(async (raw) => {
      const o = parseOptions(Options, raw);
      requireFile('--policy', o.policy, 'policy file');
      requireFile('--world-model', o.worldModel, 'world-model file');
      const scene = loadScene(o.scene);
      const file = readInputJson(o.config, z.record(z.string(), z.unknown()), 'study config');
      const parsed = CorrectionStudySchema.safeParse(file);
      if (!parsed.success)
        throw new UsageError(
          `${o.config}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      const study = parsed.data;
      const unknown = o.rows?.filter((r) => !study.rows.some((x) => x.name === r));
      if (unknown?.length) throw new UsageError(`--rows: no row ${unknown.join(', ')} in ${o.config}`);
      const log = experimentLog(o);
      const paths = experimentPaths(o);
      const report = await withFolderLock(o.runs, '--runs', () =>
        runCorrectionStudy(scene, study, paths, {
          only: o.rows,
          seeds: o.seeds,
          train: o.train,
          log,
        }),
      );
      const command = `wmrl experiment corrections ${process.argv.slice(4).join(' ')}`.trim();
      const files = writeCorrectionReport(o.report, report, command);
      if (o.json) return printJson(report);
      console.log(correctionTable(report));
      console.log(`report: ${files.json}, ${files.md}, ${files.html}`);
    });
}
