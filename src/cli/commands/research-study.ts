// `wmrl experiment research`: the AutoResearch study (src/experiment/research-study.ts) from a JSON file
// of rows, resumable, into a runs folder and a report folder.
import type { Command } from 'commander';
import { z } from 'zod';
import { Executor } from '../../autoresearch/index.ts';
import {
  ResearchStudySchema,
  researchStudyTable,
  runResearchStudy,
  writeResearchStudyReport,
} from '../../experiment/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { ALLOW_CODE_CHANGE_HELP, StudyFlags, addStudyFlags, experimentLog, readStudy } from '../experiment-flags.ts';
import { parseOptions, printJson, requireFile } from '../options.ts';
import { ProgressFlags, addProgressFlags } from '../progress.ts';

const Options = ProgressFlags.merge(StudyFlags).extend({
  runs: z.string(),
  report: z.string(),
  json: z.boolean().optional(),
  allowCodeChange: z.boolean().optional(),
});

export function registerResearchStudy(experiment: Command): void {
  addStudyFlags(addProgressFlags(experiment.command('research')), {
    example: 'scripts/research/study.json',
    fields: ResearchStudySchema.shape,
    row: '{ name, mode, iterations, config: trainer fields, versus: names of rows it is paired against }',
  })
    .description(
      'AutoResearch: rows (a mode, its iterations, trainer fields) trained from one base agent on several seeds, ' +
        'each run evaluated on the held-out tasks in real execution; between-seed means with 95% intervals, ' +
        'per-seed paired differences and execution ratios against other rows; resumable (finished runs are kept)',
    )
    .option('--runs <dir>', 'folder of the run folders and cached evaluations', 'runs/research')
    .option('--report <dir>', 'where report.json, table.md and index.html go', 'docs/autoresearch/study')
    .option('--json', 'print the report as one JSON object on stdout')
    .option('--allow-code-change', ALLOW_CODE_CHANGE_HELP)
    .action(async (raw) => {
      const o = parseOptions(Options, raw);
      const study = readStudy(o, ResearchStudySchema);
      requireFile('base', study.base, 'agent policy file');
      const report = await withFolderLock(o.runs, '--runs', () =>
        runResearchStudy(study, o.runs, new Executor({ concurrency: 2 }), {
          only: o.rows,
          seeds: o.seeds,
          train: o.train,
          log: experimentLog(o),
          allowCodeChange: o.allowCodeChange,
        }),
      );
      const command = `wmrl experiment research ${process.argv.slice(4).join(' ')}`.trim();
      const files = writeResearchStudyReport(o.report, report, command);
      if (o.json) return printJson(report);
      console.log(researchStudyTable(report));
      console.log(`report: ${files.json}, ${files.md}, ${files.html}`);
    });
}
