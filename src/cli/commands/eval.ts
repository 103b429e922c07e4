import { join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  type EvalOptions,
  type EvalReport,
  type HandoverPoint,
  type PolicyResult,
  formatReport,
  handoverTable,
  runEval,
  runHandoverSweep,
  stagesTable,
  writeEvalFolder,
} from '../../eval/index.ts';
import { commitFiles, withFolderLock } from '../../store/index.ts';
import { WORDINGS } from '../../task/index.ts';
import { UsageError, intFlag, parseOptions, printJson, seedFlag, splitFlag } from '../options.ts';
import { ProgressFlags, addProgressFlags, progressBar } from '../progress.ts';
import { loadScene, resolveTasks } from '../scene.ts';
import { defaultRunDir } from '../run-dir.ts';

export const DEFAULT_EVAL_TEMPERATURE = 1;

/** --handover K, or a list K1,K2,... of distinct steps (the sweep). */
const handoverFlag = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'must be K or a comma-separated list of integers >= 0, e.g. 0,10,20')
  .transform((s) => s.split(',').map(Number))
  .refine((ks) => ks.every((k) => k <= 1000), 'every K must be <= 1000')
  .refine((ks) => new Set(ks).size === ks.length, 'the steps of the list must differ');

const EvalFlags = ProgressFlags.extend({
  policy: z.string().min(1).optional(),
  compare: z.array(z.string().min(1)).length(2, 'takes exactly two policies: --compare A B').optional(),
  split: splitFlag,
  episodes: intFlag(1),
  seed: seedFlag,
  temperature: z.coerce.number().min(0, 'must be >= 0 (0 = greedy)').max(100, 'must be <= 100'),
  wording: z.enum(WORDINGS),
  handover: handoverFlag,
  task: z.string(),
  numEnvs: intFlag(1).max(256),
  out: z.string().optional(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});
export type EvalOpts = z.infer<typeof EvalFlags>;

/** The flags as the library's options: the scene loaded, tasks resolved, one or two policies. */
export function evalOptions(opts: EvalOpts, onEpisode?: () => void): EvalOptions {
  const policies = opts.compare ?? (opts.policy ? [opts.policy] : []);
  if (policies.length === 0) throw new UsageError('--policy: required (or --compare A B)');
  if (opts.policy && opts.compare) throw new UsageError('--compare: use either --policy P or --compare A B, not both');
  const scene = loadScene(opts.scene);
  return {
    ...opts,
    handover: opts.handover[0],
    scene,
    tasks: resolveTasks(scene, opts.task),
    policies,
    flag: opts.compare ? '--compare' : '--policy',
    onEpisode,
  };
}

export function registerEval(program: Command): void {
  addProgressFlags(program.command('eval'))
    .description(
      'evaluate a policy in physics: success per task family with Wilson 95% CIs; ' +
        '--compare A B gives the paired difference',
    )
    .option('--policy <p>', 'model file (.onnx), expert or random')
    .option('--compare <policies...>', 'two policies run on the same seeds: --compare A B')
    .option(
      '--split <split>',
      'train | validation (model selection only) | heldout (held-out seeds and object-target pairs)',
      'heldout',
    )
    .option('--episodes <n>', 'episodes per task family', '100')
    .option(
      '--seed <n>',
      'first episode index inside the split (the random draws of an episode depend only on its seed and step)',
      '0',
    )
    .option(
      '--temperature <t>',
      'model policies: sampling temperature (0 = greedy argmax)',
      String(DEFAULT_EVAL_TEMPERATURE),
    )
    .option(
      '--wording <w>',
      "scene: the scene's instructions | unseen: the same episodes worded by a template set never trained on",
      'scene',
    )
    .option(
      '--handover <k>',
      'the scripted expert acts for the first K steps of every episode, then the policy (0: none); ' +
        'a list 0,10,20 runs each on the same seeds, into <out>/handover-K, and prints one table',
      '0',
    )
    .option('--task <id>', 'task id or all', 'all')
    .option('--num-envs <n>', 'parallel envs', '8')
    .option('--out <dir>', 'run folder for report.json, success.png, index.html (default: runs/eval-<time>)')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const opts = parseOptions(EvalFlags, raw);
      const eo = evalOptions(opts);
      const out = opts.out ?? defaultRunDir('eval');
      if (opts.handover.length > 1) return handoverSweep(opts, eo, out);
      const { report, files } = await withFolderLock(out, '--out', async () => {
        const bar = progressBar('eval', eo.policies.length * eo.tasks.length * opts.episodes, opts);
        let report: EvalReport;
        try {
          report = await runEval({ ...eo, onEpisode: () => bar.tick() });
        } finally {
          bar.stop();
        }
        return { report, files: writeEvalFolder(out, report) };
      });
      if (opts.json) {
        const strip = (p: PolicyResult) => ({
          policy: p.policy,
          results: p.results,
          pairs: p.pairs,
          failed_stages: p.failed_stages,
        });
        const head = {
          split: report.split,
          episodes_per_task: report.episodes_per_task,
          seed: report.seed,
          temperature: report.temperature,
          wording: opts.wording,
          handover: opts.handover[0],
          out,
          report: files.json,
        };
        return printJson(
          report.paired
            ? { ...head, policies: report.policies.map(strip), paired: report.paired }
            : { ...head, ...strip(report.policies[0]) },
        );
      }
      console.log(formatReport(report));
      console.log(`report: ${files.json}  chart: ${files.html}`);
    });
}

/** The sweep's table, then each K's failed episodes by the last stage reached. */
function handoverMarkdown(points: readonly HandoverPoint[]): string {
  const stages = points.map(({ k, report }) => `### K = ${k}\n\n${stagesTable(report.policies)}`);
  return [handoverTable(points), ...stages].join('\n\n');
}

/** --handover K1,K2,...: one evaluation per K (report folders <out>/handover-K), one table. */
async function handoverSweep(opts: EvalOpts, eo: EvalOptions, out: string): Promise<void> {
  const table = join(out, 'handover.md');
  const points = await withFolderLock(out, '--out', async () => {
    const total = opts.handover.length * eo.policies.length * eo.tasks.length * opts.episodes;
    const bar = progressBar('eval', total, opts);
    try {
      const points = await runHandoverSweep({ ...eo, onEpisode: () => bar.tick() }, opts.handover, (p) =>
        writeEvalFolder(join(out, `handover-${p.k}`), p.report),
      );
      commitFiles([{ path: table, data: `${handoverMarkdown(points)}\n` }]);
      return points;
    } finally {
      bar.stop();
    }
  });
  if (!opts.json) {
    console.log(handoverMarkdown(points));
    console.log(`table: ${table}`);
    return;
  }
  const point = ({ k, report }: (typeof points)[number]) => ({
    handover: k,
    policies: report.policies.map((p) => ({ policy: p.policy, results: p.results, failed_stages: p.failed_stages })),
    ...(report.paired && { paired: report.paired }),
    report: join(out, `handover-${k}`, 'report.json'),
  });
  printJson({
    split: opts.split,
    episodes_per_task: opts.episodes,
    seed: opts.seed,
    out,
    table,
    points: points.map(point),
  });
}
