import type { Command } from 'commander';
import { z } from 'zod';
import type { EnvSpec } from '../../core/spec.ts';
import { fixedCameras, tabletopSpec } from '../../physics/index.ts';
import type { Scene } from '../../scene/index.ts';
import { taskIds } from '../../task/index.ts';
import {
  evaluateDynamics,
  loadEnsembleDynamics,
  loadWmModel,
  readEpisodeData,
  updateWmMeta,
} from '../../worldmodel/index.ts';
import { parseOptions, printJson, requireFile } from '../options.ts';
import { loadScene } from '../scene.ts';
import { registerWmTrain } from './wm-train.ts';

/** The physics spec of every task of the scene (the world model is trained for all of them). */
export function physicsSpecs(scene: Scene): Record<string, EnvSpec> {
  return Object.fromEntries(taskIds(scene).map((id) => [id, tabletopSpec(scene, id, fixedCameras(scene))]));
}

const list = (v: string, prev: string[] = []) => [...prev, v];

const EvalOptions = z.object({
  model: z.string(),
  data: z.array(z.string()).min(1),
  saveReport: z.boolean().optional(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

export function registerWm(program: Command): void {
  const wm = program.command('wm').description('world model: train and evaluate the dynamics ensemble');
  registerWmTrain(wm);

  wm.command('eval')
    .description('evaluate a world model on recorded physics episodes (1-step, open-loop, reward calibration)')
    .requiredOption('--model <file>', 'world-model file (.onnx)')
    .option('--data <dir>', 'run folder with recorded states (repeatable)', list)
    .option('--save-report', "also store the report in the model's NAME.wm.json (under report.eval)")
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout')
    .action(async (raw) => {
      const o = parseOptions(EvalOptions, raw);
      requireFile('--model', o.model, 'world-model file');
      const scene = loadScene(o.scene);
      const spec = Object.values(physicsSpecs(scene))[0];
      const { dynamics } = await loadEnsembleDynamics(o.model, scene, spec);
      const episodes = readEpisodeData(o.data, scene, spec);
      const report = await evaluateDynamics(dynamics, scene, dynamics.coder.names, episodes);
      await dynamics.close();
      if (o.saveReport) {
        const { meta } = await loadWmModel(o.model);
        const previous = (meta.report ?? {}) as Record<string, unknown>;
        await updateWmMeta(o.model, {
          ...meta,
          report: {
            ...previous,
            eval: { command: `wmrl wm eval ${process.argv.slice(4).join(' ')}`, data: o.data, ...report },
          },
        });
      }
      if (o.json) return printJson({ model: o.model, ...report });
      printReport(report);
    });
}

export function printReport(r: Awaited<ReturnType<typeof evaluateDynamics>>): void {
  const mm = (x: number) => `${(1000 * x).toFixed(2)} mm`;
  const g = (
    name: string,
    e: { ee_m: number; fingers_m: number; objects_m: number; task_object_m: number; n: number },
  ) =>
    console.log(
      `${name.padEnd(14)} ee ${mm(e.ee_m)}  fingers ${mm(e.fingers_m)}  objects ${mm(e.objects_m)}  ` +
        `task object ${mm(e.task_object_m)}  (n=${e.n})`,
    );
  const off = r.excluded_off_table;
  const offList = off.map((e) => `${e.task} seed ${e.seed}`).join(', ');
  const offNote = off.length ? ` (${off.length} left out: an object fell off the table in ${offList})` : '';
  console.log(`held-out: ${r.episodes} episodes, ${r.transitions} transitions${offNote}`);
  g('1-step', r.one_step);
  g('copy baseline', r.one_step.copy_baseline);
  for (const [h, e] of Object.entries(r.open_loop)) g(`open-loop ${h}`, e);
  const w = r.reward;
  // a rank correlation is null where one side is constant
  const corr = (x: number | null) => (x === null ? 'undefined' : x.toFixed(3));
  console.log(
    `reward: bias ${w.bias.toFixed(4)}  rank corr ${corr(w.rank_corr)}  ` +
      `progress bias ${w.progress_bias.toFixed(3)}  progress rank corr ${corr(w.progress_rank_corr)}`,
  );
  console.log(
    `hallucinated success: ${(100 * w.hallucinated_success_rate).toFixed(2)}% of non-success steps; ` +
      `missed ${(100 * w.missed_success_rate).toFixed(1)}% of ${w.env_successes} successes`,
  );
  console.log(
    `episode replay: hallucinated ${(100 * r.replay.hallucinated_success_rate).toFixed(1)}%  ` +
      `wm success ${(100 * r.replay.wm_success_rate).toFixed(1)}%  ` +
      `physics ${(100 * r.replay.env_success_rate).toFixed(1)}%  agreement ${(100 * r.replay.agreement).toFixed(1)}%`,
  );
}
