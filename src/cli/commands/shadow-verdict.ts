// wmrl shadow --verdict: the world model's success verdict per family against physics (wiring only).
import { join } from 'node:path';
import { policySource, runVerdict, verdictTable } from '../../eval/index.ts';
import type { Scene } from '../../scene/index.ts';
import { commitFiles, withFolderLock } from '../../store/index.ts';
import { loadEnsembleDynamics } from '../../worldmodel/index.ts';
import { printJson, requireFile, UsageError } from '../options.ts';
import { progressBar } from '../progress.ts';
import { resolveTasks } from '../scene.ts';
import type { ShadowOpts } from './shadow.ts';

export async function shadowVerdict(o: ShadowOpts, scene: Scene): Promise<void> {
  if (o.model === 'physics')
    throw new UsageError('--model: --verdict branches from mid-episode states, which the physics twin cannot start at');
  if (o.sampling !== 'mean')
    throw new UsageError("--sampling: --verdict grades the ensemble mean, as the trainer does (leave it 'mean')");
  requireFile('--model', o.model, 'world-model file');
  const tasks = resolveTasks(scene, o.task);
  const run = async () => {
    const source = await policySource(o.policy, { noise: o.noise });
    const bar = progressBar('verdict', tasks.length * o.episodes);
    try {
      const report = await runVerdict({
        scene,
        tasks,
        source,
        split: o.split,
        episodes: o.episodes,
        seed: o.seed,
        every: o.every,
        horizon: o.horizon,
        numEnvs: o.numEnvs,
        dynamics: async (spec) => (await loadEnsembleDynamics(o.model, scene, spec)).dynamics,
        onEpisode: () => bar.tick(),
      });
      const summary = { policy: o.policy, model: o.model, ...report };
      const table = verdictTable(report);
      const files = o.out ? { json: join(o.out, 'verdict.json'), md: join(o.out, 'verdict.md') } : undefined;
      if (files)
        commitFiles([
          { path: files.json, data: `${JSON.stringify(summary, null, 2)}\n` },
          { path: files.md, data: `${table}\n` },
        ]);
      return { summary, table, files };
    } finally {
      bar.stop();
      await source.close();
    }
  };
  const { summary, table, files } = o.out ? await withFolderLock(o.out, '--out', run) : await run();
  if (o.json) return printJson({ ...summary, files });
  console.log(`${o.policy} vs ${o.model}`);
  console.log(table);
  if (files) console.log(`wrote ${files.json} and ${files.md}`);
}
