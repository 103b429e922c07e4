import type { Command } from 'commander';
import { z } from 'zod';
import { readInputJson } from '../../core/input-file.ts';
import { runMainJob } from '../../experiment/index.ts';
import { formatReport } from '../../eval/index.ts';
import { withFolderLock } from '../../store/index.ts';
import { MODES, PRESETS, resolveConfig } from '../../trainer/index.ts';
import { cooperate, interrupted } from '../interrupt.ts';
import { intFlag, parseOptions, printJson, requireFile, seedFlag } from '../options.ts';
import { ProgressFlags, addProgressFlags, budgetProgress } from '../progress.ts';
import { loadScene, resolveTasks } from '../scene.ts';
import { ServeFlags, addServeFlags, startViewer } from '../serve.ts';
import { dirname } from 'node:path';

const StartOptions = ServeFlags.extend(ProgressFlags.shape).extend({
  minutes: z.coerce.number().positive('must be > 0'),
  episodes: intFlag(1),
  mode: z.enum(MODES),
  seed: seedFlag,
  task: z.string(),
  preset: z.string(),
  config: z.string().optional(),
  out: z.string().optional(),
  policy: z.string(),
  worldModel: z.string(),
  scene: z.string().optional(),
  json: z.boolean().optional(),
});

/** npm start's held-out evaluation: short, often enough for a curve over its minutes. */
const START_EVALUATION = { evalEvery: 50, evalEpisodes: 8 };
const pct = (x: number) => (100 * x).toFixed(1);

export function registerStart(program: Command): void {
  const cmd = program
    .command('start')
    .description(
      'the main job (npm start): post-train the shipped base VLA with WMRL for a wall-clock budget, ' +
        'held-out evaluation before and after, the paired improvement',
    )
    .option('--minutes <m>', 'budget of the whole job, evaluations included', '10')
    .option('--episodes <n>', 'held-out episodes per task of each evaluation', '50')
    .option('--mode <m>', `trainer mode (${MODES.join(' | ')})`, 'wmrl')
    .option('--seed <n>', 'run seed', '0')
    .option('--task <ids>', 'tasks, comma-separated, or all', 'all')
    .option('--preset <p>', 'trainer preset: default (frontier starts) | smoke', 'default')
    .option('--config <file>', 'JSON file of trainer config fields')
    .option('--out <dir>', 'run folder (default runs/start-<time>)')
    .option('--policy <file>', 'the base policy', 'models/vla-base.onnx')
    .option('--world-model <file>', 'the world model', 'models/wm-base.onnx')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)')
    .option('--json', 'print one JSON object on stdout');
  addServeFlags(addProgressFlags(cmd), 'training', true).action(async (raw) => {
    const o = parseOptions(StartOptions, raw);
    requireFile('--policy', o.policy, 'policy file');
    const scene = loadScene(o.scene);
    const tasks = resolveTasks(scene, o.task);
    const file = o.config ? readInputJson(o.config, z.record(z.string(), z.unknown()), 'train config') : {};
    // the budget decides where training stops; the iteration bound is never the limit. A short held-out
    // evaluation every 50 iterations (unless the preset or the file sets evalEvery) gives the run a curve
    // and recorded episodes to replay
    const often = 'evalEvery' in file || PRESETS[o.preset]?.evalEvery !== undefined ? {} : START_EVALUATION;
    const cfg = resolveConfig(o.preset, often, file, { mode: o.mode, seed: o.seed, iterations: 1_000_000 });
    const out = o.out ?? `runs/start-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const say = (line: string) => {
      if (!o.json) console.error(line);
    };
    const viewer =
      o.serve !== false
        ? await startViewer({
            scene,
            runs: dirname(out),
            liveRun: out,
            worldModel: o.worldModel,
            host: o.host,
            port: o.port,
          })
        : null;
    if (viewer) console.error(`wmrl viewer (live training): ${viewer.url}`);
    say(`wmrl: ${cfg.mode} post-training of ${o.policy} on ${tasks.join(', ')} for at most ${o.minutes} minutes`);
    const release = cooperate();
    let bar: ReturnType<typeof budgetProgress> | null = null;
    try {
      const result = await withFolderLock(out, '--out', () =>
        runMainJob({
          scene,
          tasks,
          policy: o.policy,
          worldModel: o.worldModel,
          out,
          cfg,
          minutes: o.minutes,
          episodes: o.episodes,
          log: say,
          shouldStop: interrupted,
          live: viewer?.hub,
          configFlags: [
            ...(o.preset !== 'default' ? ['--preset', o.preset] : []),
            ...(o.config ? ['--config', o.config] : []),
            ...(o.scene ? ['--scene', o.scene] : []),
          ],
          onIteration: (m, elapsedS, budgetS) => {
            // the budget, not an iteration count, ends training: iterations done and time left
            bar ??= budgetProgress(budgetS, o);
            bar.tick(m, elapsedS);
          },
        }),
      );
      (bar as ReturnType<typeof budgetProgress> | null)?.stop();
      const d = result.report.paired!.overall;
      if (o.json)
        return printJson({
          out: result.out,
          iterations: result.iterations,
          seconds: result.seconds,
          paired: result.report.paired,
          reproduce: result.reproduce,
        });
      console.log(formatReport(result.report));
      console.log(
        `\nimprovement: ${d.diff >= 0 ? '+' : ''}${pct(d.diff)} points held-out success, ` +
          `paired 95% CI [${pct(d.ci_low)}, ${pct(d.ci_high)}], n=${d.episodes}`,
      );
      console.log(
        `${result.iterations} iterations in ${(result.seconds / 60).toFixed(1)} minutes; ` +
          `run folder ${result.out} (report ${result.files.html})`,
      );
      console.log(`reproduce the policy bit for bit: ${result.reproduce}`);
    } finally {
      (bar as ReturnType<typeof budgetProgress> | null)?.stop();
      release();
      await viewer?.close();
    }
  });
}
