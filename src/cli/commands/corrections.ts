// `wmrl experiment corrections`: the corrections study (src/experiment/corrections.ts) from a JSON file
// of rows, resumable, into a runs folder and a report folder.
import type { Command } from 'commander';
import {
  CorrectionStudySchema,
  correctionTable,
  runCorrectionStudy,
  writeCorrectionReport,
} from '../../experiment/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { parseOptions, printJson, requireFile } from '../options.ts';
import {
  ExperimentFlags,
  StudyFlags,
  addExperimentFlags,
  addStudyFlags,
  experimentLog,
  experimentPaths,
  readStudy,
} from '../experiment-flags.ts';
import { addProgressFlags } from '../progress.ts';
import { loadScene } from '../scene.ts';

const Options = ExperimentFlags.merge(StudyFlags);

export function registerCorrections(experiment: Command): void {
  const command = addStudyFlags(
    addProgressFlags(experiment.command('corrections')).description(
      'what the world model and each correction add: rows (a mode and trainer fields) on several seeds, each run ' +
        'evaluated on the held-out split; between-seed means with 95% intervals and per-seed paired ' +
        'differences against other rows; resumable (finished runs and evaluations are kept)',
    ),
    {
      example: 'scripts/corrections/study.json',
      fields: CorrectionStudySchema.shape,
      row: "{ name, mode, config: trainer fields over the study's, versus: names of rows it is paired against }",
    },
  );
  addExperimentFlags(command, {
    runs: 'runs/corrections',
    report: 'docs/corrections',
    reportFiles: 'report.json, table.md and index.html',
  }).action(async (raw) => {
    const o = parseOptions(Options, raw);
    requireFile('--policy', o.policy, 'policy file');
    requireFile('--world-model', o.worldModel, 'world-model file');
    const scene = loadScene(o.scene);
    const study = readStudy(o, CorrectionStudySchema);
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
