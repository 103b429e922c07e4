// `wmrl experiment research`: the AutoResearch study (src/experiment/research-study.ts) from a JSON file
// of rows, resumable, into a runs folder and a report folder.
import type { Command } from 'commander';
import { z } from 'zod';
import { Executor } from '../../autoresearch/index.ts';
import { readInputJson } from '../../core/input-file.ts';
import {
  ResearchStudySchema,
  researchStudyTable,
  runResearchStudy,
  writeResearchStudyReport,
} from '../../experiment/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { SeedList, experimentLog } from '../experiment-flags.ts';
import { UsageError, parseOptions, printJson, requireFile } from '../options.ts';
import { ProgressFlags, addProgressFlags } from '../progress.ts';

const Options = ProgressFlags.extend({
  config: z.string(),
  rows: z
    .string()
    .transform((s) => s.split(',').filter(Boolean))
    .optional(),
  seeds: SeedList.optional(),
  train: z.boolean(),
  runs: z.string(),
  report: z.string(),
  json: z.boolean().optional(),
});

export function registerResearchStudy(experiment: Command): void {
  addProgressFlags(experiment.command('research'))
    .description(
      'AutoResearch: rows (a mode, its iterations, trainer fields) trained from one base agent on several seeds, ' +
        'each run evaluated on the held-out tasks in real execution; between-seed means with 95% intervals, ' +
        'per-seed paired differences and execution ratios against other rows; resumable (finished runs are kept)',
    )
    .requiredOption('--config <file>', 'JSON file of the study (fields below; scripts/research/study.json)')
    .option('--rows <names>', 'train only these rows, comma-separated (the report covers every row)')
    .option(
      '--seeds <list>',
      'train only these seeds, comma-separated (default: the file’s; the report covers the file’s)',
    )
    .option('--no-train', 'train nothing: report the runs already finished')
    .option('--runs <dir>', 'folder of the run folders and cached evaluations', 'runs/research')
    .option('--report <dir>', 'where report.json, table.md and index.html go', 'docs/autoresearch/study')
    .option('--json', 'print the report as one JSON object on stdout')
    .addHelpText(
      'after',
      `\nStudy fields (--config file.json):\n${Object.entries(ResearchStudySchema.shape)
        .map(([k, v]) => `  ${k}: ${v.description ?? ''}`)
        .join(
          '\n',
        )}\nA row: { name, mode, iterations, config: trainer fields, versus: names of rows it is paired against }`,
    )
    .action(async (raw) => {
      const o = parseOptions(Options, raw);
      const file = readInputJson(o.config, z.record(z.string(), z.unknown()), 'study config');
      const parsed = ResearchStudySchema.safeParse(file);
      if (!parsed.success)
        throw new UsageError(
          `${o.config}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
        );
      const study = parsed.data;
      requireFile('base', study.base, 'agent policy file');
      const unknown = o.rows?.filter((r) => !study.rows.some((x) => x.name === r));
      if (unknown?.length) throw new UsageError(`--rows: no row ${unknown.join(', ')} in ${o.config}`);
      const report = await withFolderLock(o.runs, '--runs', () =>
        runResearchStudy(study, o.runs, new Executor({ concurrency: 2 }), {
          only: o.rows,
          seeds: o.seeds,
          train: o.train,
          log: experimentLog(o),
        }),
      );
      const command = `wmrl experiment research ${process.argv.slice(4).join(' ')}`.trim();
      const files = writeResearchStudyReport(o.report, report, command);
      if (o.json) return printJson(report);
      console.log(researchStudyTable(report));
      console.log(`report: ${files.json}, ${files.md}, ${files.html}`);
    });
}
