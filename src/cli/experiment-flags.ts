// The flags and log lines the tabletop experiment commands (`experiment speedup`, `experiment corrections`)
// share.
import type { Command } from 'commander';
import { z } from 'zod';
import { type SpeedupPaths, WMRL_BIN } from '../experiment/index.ts';
import { ProgressFlags } from './progress.ts';

/** "0,1,2" as run seeds. */
export const SeedList = z
  .string()
  .transform((s) => s.split(',').filter(Boolean).map(Number))
  .pipe(z.array(z.number().int().min(0)).min(1));

export const ExperimentFlags = ProgressFlags.extend({
  runs: z.string(),
  report: z.string(),
  policy: z.string(),
  worldModel: z.string(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

/** --runs, --report (their defaults), --policy, --world-model, --scene and --json. */
export function addExperimentFlags(cmd: Command, o: { runs: string; report: string; reportFiles: string }): Command {
  return cmd
    .option('--runs <dir>', 'folder of the run folders and cached evaluations', o.runs)
    .option('--report <dir>', `where ${o.reportFiles} go`, o.report)
    .option('--policy <file>', 'the base policy', 'models/vla-base.onnx')
    .option('--world-model <file>', 'the world model', 'models/wm-base.onnx')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print the report as one JSON object on stdout');
}

/** The experiment's log: lines on stderr with the time of day (none with --json or --quiet). */
export const experimentLog =
  (o: { json?: boolean; quiet?: boolean }) =>
  (line: string): void => {
    if (!o.json && !o.quiet) console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
  };

/** Where an experiment's runs, report and inputs are, and the flags its `wmrl train` children get. */
export const experimentPaths = (o: z.infer<typeof ExperimentFlags>): SpeedupPaths => ({
  runs: o.runs,
  report: o.report,
  policy: o.policy,
  worldModel: o.worldModel,
  scene: o.scene,
  bin: WMRL_BIN,
  trainArgs: o.progressEvery ? ['--progress-every', String(o.progressEvery)] : [],
});
