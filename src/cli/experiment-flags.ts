// The flags, files and log lines the experiment commands (`experiment speedup`, `corrections`, `research`)
// share.
import type { Command } from 'commander';
import { z } from 'zod';
import { type SpeedupPaths, WMRL_BIN } from '../experiment/index.ts';
import { readInputJson } from '../core/input-file.ts';
import { UsageError } from './options.ts';
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
  allowCodeChange: z.boolean().optional(),
});

/** What --allow-code-change says in every study's help. */
export const ALLOW_CODE_CHANGE_HELP =
  'keep (and resume) runs that other code made (the source hash in their stamps differs from this ' +
  "code's, see wmrl version); without it such a run is refused, naming both versions";

/** --runs, --report (their defaults), --policy, --world-model, --scene, --json and --allow-code-change. */
export function addExperimentFlags(cmd: Command, o: { runs: string; report: string; reportFiles: string }): Command {
  return cmd
    .option('--runs <dir>', 'folder of the run folders and cached evaluations', o.runs)
    .option('--report <dir>', `where ${o.reportFiles} go`, o.report)
    .option('--policy <file>', 'the base policy', 'models/vla-base.onnx')
    .option('--world-model <file>', 'the world model', 'models/wm-base.onnx')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print the report as one JSON object on stdout')
    .option('--allow-code-change', ALLOW_CODE_CHANGE_HELP);
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
  allowCodeChange: o.allowCodeChange,
});

/** The flags of a study of rows on seeds (`experiment corrections`, `experiment research`). */
export const StudyFlags = z.object({
  config: z.string(),
  rows: z
    .string()
    .transform((s) => s.split(',').filter(Boolean))
    .optional(),
  seeds: SeedList.optional(),
  train: z.boolean(),
});

/** --config, --rows, --seeds and --no-train, and the study file's fields in the help. */
export function addStudyFlags(
  cmd: Command,
  o: { example: string; fields: Record<string, { description?: string }>; row: string },
): Command {
  const fields = Object.entries(o.fields).map(([k, v]) => `  ${k}: ${v.description ?? ''}`);
  return cmd
    .requiredOption('--config <file>', `JSON file of the study (fields below; ${o.example})`)
    .option('--rows <names>', 'train only these rows, comma-separated (the report covers every row)')
    .option(
      '--seeds <list>',
      'train only these seeds, comma-separated (default: the file’s; the report covers the file’s)',
    )
    .option('--no-train', 'train nothing: report the runs already finished')
    .addHelpText('after', `\nStudy fields (--config file.json):\n${fields.join('\n')}\nA row: ${o.row}`);
}

/** The study file, parsed by `schema`; a field it refuses, or a --rows name it lacks, is a UsageError. */
export function readStudy<S extends z.ZodType<{ rows: { name: string }[] }>>(
  o: z.infer<typeof StudyFlags>,
  schema: S,
): z.output<S> {
  const parsed = schema.safeParse(readInputJson(o.config, z.record(z.string(), z.unknown()), 'study config'));
  if (!parsed.success)
    throw new UsageError(
      `${o.config}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const unknown = o.rows?.filter((r) => !parsed.data.rows.some((x) => x.name === r));
  if (unknown?.length) throw new UsageError(`--rows: no row ${unknown.join(', ')} in ${o.config}`);
  return parsed.data;
}
