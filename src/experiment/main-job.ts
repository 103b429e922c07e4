// The main job (`npm start`): the shipped base VLA post-trained with WMRL on the default task suite for a
// wall-clock budget, held-out evaluation in physics before and after on the same seeds, and the paired
// improvement. The budget only decides where training stops; the run is an ordinary `wmrl train` run
// folder, and the printed command with that iteration count reproduces the policy bit for bit.
import { join } from 'node:path';
import type { TrainMetrics } from '../core/metrics.ts';
import type { FrameSink } from '../env/index.ts';
import {
  EVAL_FORMAT,
  type EvalReport,
  type PolicyResult,
  comparePolicies,
  validateReport,
  writeEvalFolder,
} from '../eval/index.ts';
import { camerasOf } from '../physics/index.ts';
import { loadPolicy } from '../policy/model.ts';
import type { Scene } from '../scene/index.ts';
import { codeVersion, commitFiles } from '../store/index.ts';
import { type TrainConfig, train } from '../trainer/index.ts';
import { heldoutResult, tabletopTrainSetup } from './tabletop.ts';

export interface MainJobOptions {
  scene: Scene;
  tasks: string[];
  policy: string;
  worldModel: string;
  out: string;
  cfg: TrainConfig;
  /** Wall-clock budget of the whole job (evaluations included). */
  minutes: number;
  /** Held-out episodes per task of each evaluation. */
  episodes: number;
  /** Flags that made `cfg` besides mode and seed (e.g. --preset smoke), for the reproduce line. */
  configFlags?: string[];
  log?: (line: string) => void;
  onIteration?: (m: TrainMetrics, elapsedS: number, trainBudgetS: number) => void;
  shouldStop?: () => boolean;
  /** Streams the training envs to a live viewer. */
  live?: FrameSink;
}

export interface MainJobResult {
  out: string;
  iterations: number;
  seconds: number;
  report: EvalReport;
  files: { json: string; png: string; html: string };
  reproduce: string;
}

export async function runMainJob(o: MainJobOptions): Promise<MainJobResult> {
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  const log = o.log ?? (() => {});
  const evaluate = async (policy: string, name: string): Promise<PolicyResult> => ({
    ...(await heldoutResult(o.scene, o.tasks, policy, o.episodes)),
    policy: name,
  });

  log(`held-out evaluation of the base policy (${o.episodes} episodes per task)`);
  const before = await evaluate(o.policy, `${o.policy} (before)`);
  log(`base: ${(100 * before.results.overall.success_rate).toFixed(1)}% held-out success`);

  // training gets what is left after the base evaluation, less the time the final one will take
  const evalS = elapsed();
  const trainBudgetS = Math.max(0, 60 * o.minutes - 2.5 * evalS);
  const model = await loadPolicy(o.policy);
  const { tasks, worldModel, split } = await tabletopTrainSetup(o.scene, o.tasks, {
    mode: o.cfg.mode,
    worldModel: o.worldModel,
    seed: o.cfg.seed,
    modelReward: o.cfg.modelReward,
    live: o.live,
    cameras: camerasOf(model.config.cameras),
  });
  commitFiles([
    {
      path: join(o.out, 'setup.json'),
      data: `${JSON.stringify({ policy: o.policy, worldModel: o.worldModel, task: o.tasks.join(','), trainBudgetS, code: codeVersion() }, null, 2)}\n`,
    },
  ]);
  log(`${o.cfg.mode} post-training for ${(trainBudgetS / 60).toFixed(1)} minutes in ${o.out}`);
  const trainStart = elapsed();
  let done = 0;
  try {
    const r = await train(
      {
        tasks,
        worldModel,
        split,
        policy: { config: model.config, params: model.params, specHash: model.sidecar.specHash },
      },
      o.cfg,
      o.out,
      {
        shouldStop: () => elapsed() - trainStart >= trainBudgetS || (o.shouldStop?.() ?? false),
        onIteration: (m) => o.onIteration?.(m, elapsed() - trainStart, trainBudgetS),
      },
    );
    done = r.iterations;
  } finally {
    await worldModel?.close();
  }

  log(`held-out evaluation of the post-trained policy after ${done} iterations`);
  const after = await evaluate(join(o.out, 'policy.onnx'), `${join(o.out, 'policy.onnx')} (after)`);
  const report = validateReport({
    format: EVAL_FORMAT,
    split: 'heldout',
    episodes_per_task: o.episodes,
    seed: 0,
    temperature: 1,
    seeds: { first_index: 0, count: o.episodes },
    tasks: o.tasks,
    policies: [after, before],
    paired: comparePolicies(after, before),
  });
  const files = writeEvalFolder(join(o.out, 'eval'), report);
  const flags = [
    ...(o.configFlags ?? []),
    '--task',
    o.tasks.map((t) => t.split('/')[1]).join(','),
    '--policy',
    o.policy,
    '--world-model',
    o.worldModel,
  ];
  const reproduce =
    `wmrl train --mode ${o.cfg.mode} --seed ${o.cfg.seed} --iterations ${done} ` + `${flags.join(' ')} --out <dir>`;
  return { out: o.out, iterations: done, seconds: elapsed(), report, files, reproduce };
}
