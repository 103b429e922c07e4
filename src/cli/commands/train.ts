import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { InputError } from '../../core/errors.ts';
import { readInputJson } from '../../core/input-file.ts';
import type { TrainMetrics } from '../../core/metrics.ts';
import { camerasOf } from '../../physics/index.ts';
import { loadPolicy } from '../../policy/model.ts';
import {
  CodeVersionSchema,
  codeMismatch,
  codeVersion,
  commitFiles,
  sameCode,
  withFolderLock,
} from '../../store/index.ts';
import { MODES, PRESETS, TrainConfigSchema, resolveConfig, train, type TrainConfig } from '../../trainer/index.ts';
import { tabletopTrainSetup } from '../../experiment/index.ts';
import { QueueTransport } from '../../transport/index.ts';
import { InterruptedError, cooperate, interrupted } from '../interrupt.ts';
import { REDIS_URL_HELP, UsageError, intFlag, parseOptions, printJson, requireFile, seedFlag } from '../options.ts';
import { ProgressFlags, addProgressFlags, progressBar, trainProgressText } from '../progress.ts';
import { loadScene, resolveTasks } from '../scene.ts';
import { ServeFlags, addServeFlags, startViewer } from '../serve.ts';

const TrainOptions = ServeFlags.extend(ProgressFlags.shape).extend({
  mode: z.enum(MODES).optional(),
  iterations: intFlag(1).optional(),
  seed: seedFlag.optional(),
  out: z.string().min(1).optional(),
  preset: z.string(),
  config: z.string().optional(),
  resume: z.string().optional(),
  task: z.string(),
  policy: z.string(),
  worldModel: z.string(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
  redis: z.string().min(1).optional(),
  remote: z.enum(['anchors', 'all']),
  allowCodeChange: z.boolean().optional(),
});
type Opts = z.infer<typeof TrainOptions>;

/** What the run folder needs besides the trainer config to be resumed: the files and tasks it trains on,
 *  and the code version it was started by (and, per allowed resume with other code, that code's). */
const SetupFileSchema = z.object({
  policy: z.string(),
  worldModel: z.string(),
  task: z.string(),
  scene: z.string().optional(),
  code: CodeVersionSchema.optional(),
  resumedWith: z.array(CodeVersionSchema).optional(),
});
type SetupFile = z.infer<typeof SetupFileSchema>;

/** A resume by other code than the run's last: refused (exit 2, naming setup.json's $.code and both
 *  versions) unless allowed, then recorded in setup.json's resumedWith. */
function checkResumeCode(dir: string, setup: SetupFile, allow: boolean): { setup: SetupFile; changed: boolean } {
  const last = setup.resumedWith?.at(-1) ?? setup.code;
  if (sameCode(last, codeVersion())) return { setup, changed: false };
  if (!allow)
    throw new InputError(
      codeMismatch(
        `${join(dir, 'setup.json')}: $.code: the run`,
        last,
        '--resume refuses to continue it (its results would mix two versions of the code); ' +
          'pass --allow-code-change to continue anyway (setup.json records the change)',
      ),
    );
  return { setup: { ...setup, resumedWith: [...(setup.resumedWith ?? []), codeVersion()] }, changed: true };
}

/** Iterations between held-out evaluations for about 15 of them in a run of `iterations`. */
const evalEveryFor = (iterations: number): number => Math.max(1, Math.round(iterations / 15));

/** A new run: preset, then --config file, then flags. A resumed one: its own config, --iterations may grow. */
function runPlan(o: Opts): { dir: string; cfg: TrainConfig; setup: SetupFile; resume: boolean; writeSetup: boolean } {
  if (o.resume) {
    const dir = o.resume;
    const saved = readInputJson(
      join(dir, 'config.json'),
      z.object({ config: TrainConfigSchema }),
      'train config (is --resume a run folder of wmrl train?)',
    );
    const onDisk = readInputJson(join(dir, 'setup.json'), SetupFileSchema, 'train setup');
    const { setup, changed } = checkResumeCode(dir, onDisk, !!o.allowCodeChange);
    const cfg = { ...saved.config, iterations: o.iterations ?? saved.config.iterations };
    return { dir, cfg, setup, resume: true, writeSetup: changed };
  }
  if (!o.out) throw new UsageError('--out: required (or --resume DIR)');
  const file = o.config ? readInputJson(o.config, z.record(z.string(), z.unknown()), 'train config') : {};
  const flags = Object.fromEntries(
    Object.entries({ mode: o.mode, iterations: o.iterations, seed: o.seed }).filter(([, v]) => v !== undefined),
  );
  requireFile('--policy', o.policy, 'policy file');
  const cfg = resolveConfig(o.preset, file, flags);
  // held-out evaluation about 15 times a run, unless the preset or the file sets evalEvery
  const heldout =
    'evalEvery' in file || PRESETS[o.preset]?.evalEvery !== undefined
      ? {}
      : { evalEvery: evalEveryFor(cfg.iterations) };
  return {
    dir: o.out,
    cfg: resolveConfig(o.preset, file, { ...flags, ...heldout }),
    setup: { policy: o.policy, worldModel: o.worldModel, task: o.task, scene: o.scene, code: codeVersion() },
    resume: false,
    writeSetup: true,
  };
}

export function registerTrain(program: Command): void {
  const cmd = program
    .command('train')
    .description(
      'post-train the VLA with the WMRL loop: GRPO groups in physics (anchors) and in the world model, ' +
        'Online Debiasing, Inverse-Variance Denoising',
    )
    .option('--mode <m>', `${MODES.join(' | ')} (default wmrl)`)
    .option('--iterations <n>', 'policy updates (with --resume: the new total)')
    .option('--seed <n>', 'run seed')
    .option('--out <dir>', 'run folder: config.json, setup.json, metrics.jsonl, checkpoint')
    .option(
      '--preset <p>',
      'default (frontier starts moved by anchors and world-model groups) | smoke (seconds per iteration, what tests use)',
      'default',
    )
    .option('--config <file>', 'JSON file of config fields (flags override it)')
    .option(
      '--resume <dir>',
      'continue a run folder exactly where its checkpoint stopped (refused when the code differs from the ' +
        "code that made the run: setup.json's source hash, see wmrl version)",
    )
    .option(
      '--allow-code-change',
      'with --resume: continue a run that other code made (setup.json records each version it ran under)',
    )
    .option('--task <id>', 'task id or all', 'all')
    .option('--policy <file>', 'the policy to post-train (also the KL reference)', 'models/vla-base.onnx')
    .option('--world-model <file>', 'world-model file (modes other than real)', 'models/wm-base.onnx')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout (the last metrics line)')
    .option(
      '--redis <url>',
      `run rollout groups on \`wmrl worker\` processes through this Redis (${REDIS_URL_HELP}); results are the same`,
    )
    .option(
      '--remote <groups>',
      'with --redis: anchors (physics groups on workers) | all (world-model groups too)',
      'anchors',
    )
    .addHelpText(
      'after',
      `\nPresets (--preset; --config and flags override their fields):\n${Object.entries(PRESETS)
        .map(([name, fields]) => `  ${name}: ${JSON.stringify(fields)}`)
        .join('\n')}\n` +
        `\nConfig fields (--config file.json):\n${Object.entries(TrainConfigSchema.shape)
          .map(([k, v]) => `  ${k}: ${v.description ?? ''}`)
          .join('\n')}`,
    );
  addServeFlags(addProgressFlags(cmd), 'training').action(async (raw) => {
    const opts = parseOptions(TrainOptions, raw);
    const plan = runPlan(opts);
    if (raw.remote !== 'anchors' && !opts.redis) throw new UsageError('--remote: needs --redis');
    const model = await loadPolicy(plan.setup.policy);
    const scene = loadScene(plan.setup.scene);
    const viewer = opts.serve
      ? await startViewer({
          scene,
          runs: dirname(plan.dir),
          liveRun: plan.dir,
          worldModel: plan.setup.worldModel,
          host: opts.host,
          port: opts.port,
        })
      : null;
    if (viewer) console.error(`wmrl viewer: ${viewer.url}`);
    const { tasks, worldModel, split } = await tabletopTrainSetup(scene, resolveTasks(scene, plan.setup.task), {
      mode: plan.cfg.mode,
      worldModel: plan.setup.worldModel,
      seed: plan.cfg.seed,
      modelReward: plan.cfg.modelReward,
      live: viewer?.hub,
      cameras: camerasOf(model.config.cameras),
    });
    const setup = {
      tasks,
      worldModel,
      split,
      policy: { config: model.config, params: model.params, specHash: model.sidecar.specHash },
    };
    let last: Partial<TrainMetrics> = {};
    let shown = 0;
    await withFolderLock(plan.dir, plan.resume ? '--resume' : '--out', async () => {
      const transport = opts.redis
        ? await QueueTransport.open(opts.redis, { log: (line) => console.error(`wmrl train: ${line}`) })
        : undefined;
      if (plan.writeSetup)
        commitFiles([{ path: join(plan.dir, 'setup.json'), data: `${JSON.stringify(plan.setup, null, 2)}\n` }]);
      const bar = progressBar('train', plan.cfg.iterations, opts);
      const progress = trainProgressText();
      const release = cooperate();
      try {
        await train(setup, plan.cfg, plan.dir, {
          resume: plan.resume,
          transport,
          modelTransport: opts.remote === 'all' ? transport : undefined,
          shouldStop: interrupted,
          onIteration: (m) => {
            last = m;
            const p = progress(m);
            bar.tick(m.iteration - shown, p.text, p.mark);
            shown = m.iteration;
          },
        });
      } finally {
        release();
        bar.stop();
        await worldModel?.close();
        await transport?.close();
        await viewer?.close();
      }
      if (interrupted())
        throw new InterruptedError(
          `interrupted after iteration ${last.iteration ?? 0}: checkpoint in ${plan.dir} ` +
            `(continue with --resume ${plan.dir})`,
        );
    });
    if (raw.json) return printJson({ out: plan.dir, ...last });
    console.log(
      `trained ${plan.cfg.iterations} iterations (${plan.cfg.mode}) in ${plan.dir}: ` +
        'policy.onnx, metrics.jsonl, checkpoint',
    );
  });
}
