import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { jsonLine, writeJsonAtomic } from '../../core/node-files.ts';
import type { EnvSpec } from '../../core/spec.ts';
import { fixedCameras, tabletopSpec } from '../../physics/index.ts';
import type { Scene } from '../../scene/index.ts';
import { taskIds } from '../../task/index.ts';
import { ActionCoder, EnsembleDynamics, evaluateDynamics, limitsFromScene, loadEnsembleDynamics, loadWmModel, metaPath, readEpisodeData, saveWmModel, stateLayout, TransitionSet, WorldModelTrainer, type EpisodeData, type FitMetrics } from '../../worldmodel/index.ts';
import { intFlag, parseOptions, printJson, seedFlag, UsageError } from '../options.ts';
import { progressBar } from '../progress.ts';
import { loadScene } from '../scene.ts';

/** The physics spec of every task of the scene (the world model is trained for all of them). */
export function physicsSpecs(scene: Scene): Record<string, EnvSpec> {
  return Object.fromEntries(taskIds(scene).map((id) => [id, tabletopSpec(scene, id, fixedCameras(scene))]));
}

const list = (v: string, prev: string[] = []) => [...prev, v];

const TrainOptions = z.object({
  data: z.array(z.string()).min(1, 'give at least one run folder'),
  val: z.array(z.string()).optional(),
  out: z.string().regex(/\.onnx$/, 'must end in .onnx'),
  members: intFlag(1).max(32),
  hidden: z.string().regex(/^\d+(,\d+)*$/, 'must be comma-separated widths, e.g. 200,200,200'),
  steps: intFlag(1),
  batch: intFlag(8).max(4096),
  lr: z.coerce.number().positive(),
  timeBudget: z.coerce.number().positive().optional(),
  evalEvery: intFlag(1),
  seed: seedFlag,
  metrics: z.string().optional(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

const EvalOptions = z.object({ model: z.string(), data: z.array(z.string()).min(1), saveReport: z.boolean().optional(), scene: z.string().optional(), json: z.boolean().optional() });

/** Every 10th episode (at least the last one) goes to validation when no --val folders are given. */
function splitEpisodes(all: EpisodeData[], val: EpisodeData[] | null): { train: EpisodeData[]; val: EpisodeData[] } {
  if (val) return { train: all, val };
  const held = (i: number) => i % 10 === 9 || (all.length < 10 && i === all.length - 1);
  if (all.length < 2) throw new UsageError(`--data: ${all.length} episode(s); need at least 2 (or give --val folders)`);
  return { train: all.filter((_, i) => !held(i)), val: all.filter((_, i) => held(i)) };
}

export function registerWm(program: Command): void {
  const wm = program.command('wm').description('world model: train and evaluate the dynamics ensemble');
  wm.command('train')
    .description('train the K-member ensemble on physics transitions from run folders (wmrl rollout writes them)')
    .option('--data <dir>', 'run folder with recorded states (repeatable)', list)
    .option('--val <dir>', 'held-out run folder (repeatable; default: every 10th episode of --data)', list)
    .requiredOption('--out <file>', 'model file, e.g. models/wm-base.onnx (sidecars NAME.json, NAME.wm.json)')
    .option('--members <k>', 'ensemble members', '5')
    .option('--hidden <widths>', 'hidden layer widths', '200,200,200')
    .option('--steps <n>', 'optimizer steps', '8000')
    .option('--batch <n>', 'transitions per member per step', '256')
    .option('--lr <x>', 'peak learning rate (cosine decay to a tenth)', '0.001')
    .option('--time-budget <s>', 'stop after this many seconds')
    .option('--eval-every <n>', 'validate and checkpoint every n steps', '500')
    .option('--seed <n>', 'init and batch seed', '0')
    .option('--metrics <file>', 'JSONL metrics (default: NAME.metrics.jsonl next to the model)')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout (training summary and held-out report)')
    .action(async (raw) => {
      const o = parseOptions(TrainOptions, raw);
      const scene = loadScene(o.scene);
      const specs = physicsSpecs(scene);
      const spec = Object.values(specs)[0];
      const coder = new ActionCoder(spec);
      const layout = stateLayout(scene.objects);
      const all = readEpisodeData(o.data, scene, coder.names);
      const split = splitEpisodes(all, o.val ? readEpisodeData(o.val, scene, coder.names) : null);
      if (split.val.length === 0) throw new UsageError('--val: no held-out episodes');
      const train = TransitionSet.fromEpisodes(layout, coder, split.train);
      const val = TransitionSet.fromEpisodes(layout, coder, split.val);
      const metricsPath = o.metrics ?? o.out.replace(/\.onnx$/, '.metrics.jsonl');
      mkdirSync(dirname(metricsPath), { recursive: true });
      writeFileSync(metricsPath, '');
      const command = `wmrl wm train ${process.argv.slice(4).join(' ')}`;
      const trainer = await WorldModelTrainer.create(train, val, { net: { members: o.members, hidden: o.hidden.split(',').map(Number) }, batch: o.batch, seed: o.seed });
      const bar = progressBar('wm train', o.steps);
      let last = 0;
      const meta = { objects: scene.objects.map((x) => x.name), specs, command };
      const fit = await trainer.fit({
        steps: o.steps, lr: o.lr, evalEvery: o.evalEvery, timeBudgetMs: o.timeBudget ? o.timeBudget * 1000 : undefined,
        onMetrics: (m: FitMetrics) => {
          appendFileSync(metricsPath, jsonLine({ kind: 'train', ...m }));
          bar.tick(m.step - last, `loss ${m.loss.toFixed(3)} val ${m.valMse?.toFixed(4) ?? '-'}`);
          last = m.step;
        },
        onCheckpoint: (params, m) => saveWmModel(o.out, trainer.config, params, { ...meta, report: { checkpoint_step: m.step, val_mse: m.valMse } }, o.seed, m.step),
      });
      bar.stop();
      const params = trainer.params();
      await trainer.close();
      const dyn = await EnsembleDynamics.create(trainer.config, params, layout, limitsFromScene(scene), spec);
      const report = await evaluateDynamics(dyn, scene, coder.names, split.val);
      await dyn.close();
      const summary = {
        out: o.out, train_transitions: train.count, train_episodes: split.train.length, val_transitions: val.count, val_episodes: split.val.length,
        members: o.members, hidden: o.hidden, steps: fit.steps, best_step: fit.bestStep, best_val_mse: fit.bestValMse, elapsed_s: fit.elapsedMs / 1000, skipped_steps: fit.skipped,
      };
      await saveWmModel(o.out, trainer.config, params, { ...meta, report: { ...summary, heldout: report } }, o.seed, fit.bestStep);
      appendFileSync(metricsPath, jsonLine({ kind: 'heldout', ...report }));
      if (o.json) return printJson({ ...summary, heldout: report, metrics: metricsPath });
      console.log(`trained ${o.out}: ${fit.steps} steps in ${(fit.elapsedMs / 1000).toFixed(0)} s, best held-out 1-step MSE ${fit.bestValMse?.toFixed(4)} (normalised) at step ${fit.bestStep}`);
      printReport(report);
    });

  wm.command('eval')
    .description('evaluate a world model on recorded physics episodes (1-step, open-loop, reward calibration)')
    .requiredOption('--model <file>', 'world-model file (.onnx)')
    .option('--data <dir>', 'run folder with recorded states (repeatable)', list)
    .option('--save-report', 'also store the report in the model\'s NAME.wm.json (under report.eval)')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const o = parseOptions(EvalOptions, raw);
      const scene = loadScene(o.scene);
      const spec = Object.values(physicsSpecs(scene))[0];
      const { dynamics } = await loadEnsembleDynamics(o.model, scene, spec);
      const episodes = readEpisodeData(o.data, scene, dynamics.coder.names);
      const report = await evaluateDynamics(dynamics, scene, dynamics.coder.names, episodes);
      await dynamics.close();
      if (o.saveReport) {
        const { meta } = await loadWmModel(o.model);
        const previous = (meta.report ?? {}) as Record<string, unknown>;
        writeJsonAtomic(metaPath(o.model), { ...meta, report: { ...previous, eval: { command: `wmrl wm eval ${process.argv.slice(4).join(' ')}`, data: o.data, ...report } } });
      }
      if (o.json) return printJson({ model: o.model, ...report });
      printReport(report);
    });
}

function printReport(r: Awaited<ReturnType<typeof evaluateDynamics>>): void {
  const mm = (x: number) => `${(1000 * x).toFixed(2)} mm`;
  const g = (name: string, e: { ee_m: number; fingers_m: number; objects_m: number; task_object_m: number; n: number }) =>
    console.log(`${name.padEnd(14)} ee ${mm(e.ee_m)}  fingers ${mm(e.fingers_m)}  objects ${mm(e.objects_m)}  task object ${mm(e.task_object_m)}  (n=${e.n})`);
  console.log(`held-out: ${r.episodes} episodes, ${r.transitions} transitions`);
  g('1-step', r.one_step);
  g('copy baseline', r.one_step.copy_baseline);
  for (const [h, e] of Object.entries(r.open_loop)) g(`open-loop ${h}`, e);
  const w = r.reward;
  console.log(`reward: bias ${w.bias.toFixed(4)}  rank corr ${w.rank_corr.toFixed(3)}  progress bias ${w.progress_bias.toFixed(3)}  progress rank corr ${w.progress_rank_corr.toFixed(3)}`);
  console.log(`hallucinated success: ${(100 * w.hallucinated_success_rate).toFixed(2)}% of non-success steps; missed ${(100 * w.missed_success_rate).toFixed(1)}% of ${w.env_successes} successes`);
  console.log(`episode replay: hallucinated ${(100 * r.replay.hallucinated_success_rate).toFixed(1)}%  wm success ${(100 * r.replay.wm_success_rate).toFixed(1)}%  physics ${(100 * r.replay.env_success_rate).toFixed(1)}%  agreement ${(100 * r.replay.agreement).toFixed(1)}%`);
}
