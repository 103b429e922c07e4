// node bin/run-ts.mjs scripts/replay-compare.ts RUN_A RUN_B [--from N] — two training runs of the same
// seed and config but for replayCapacity (e.g. the default against 0, unbounded), compared on what the
// replay decides: (1) each run's kept world-model weights scored on each run's final validation ring
// (the recent anchors of each; lower is better), (2) the trainer's fidelity metrics from iteration N on
// (default 100: after the default replay first fills), per run and as paired differences A - B at the
// same iterations, with t 95% intervals. One JSON object per line.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { tInterval } from '../src/core/stats.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { fixedCameras, tabletopSpec } from '../src/physics/index.ts';
import { loadCheckpoint } from '../src/trainer/checkpoint.ts';
import type { WorldModelNetConfig } from '../src/nn/nets/worldmodel.ts';
import { OnlineWorldModel, TransitionSet, validationMse } from '../src/worldmodel/index.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string', default: '100' } },
});
if (positionals.length !== 2) {
  console.error('usage: scripts/replay-compare.ts RUN_A RUN_B [--from N]');
  process.exit(2);
}
const from = Number(values.from);
const runs = positionals.map((p) => resolve(p));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const spec = tabletopSpec(scene, 'tabletop/pick-place', fixedCameras(scene));
const online = await OnlineWorldModel.open(resolve('models/wm-base.onnx'), scene, spec);
const config = online.snapshot().netConfig as WorldModelNetConfig & { members: number };
const { layout, coder } = online.dynamics;

const round = (x: number, d = 4) => Math.round(x * 10 ** d) / 10 ** d;
const loaded = runs.map((dir) => {
  const ck = loadCheckpoint(dir);
  const info = (ck.info as { refresh: { replay: Record<string, number> } }).refresh.replay;
  const store = ck.extra.replay;
  const val = new TransitionSet(layout, coder);
  const rows = (key: string) => store.get(`val/${key}`) as Float32Array;
  val.restore({
    feats: rows('feats'),
    acts: rows('acts'),
    deltas: rows('deltas'),
    written: rows('feats').length / layout.featureDim,
  });
  return { dir, step: ck.step, best: ck.extra.wmBest, val, replay: info };
});
for (const model of loaded)
  for (const data of loaded)
    console.log(
      JSON.stringify({
        figure: 'val_mse',
        weights: model.dir,
        validation_of: data.dir,
        iteration: model.step,
        transitions: data.val.count,
        mse: round(await validationMse(config, model.best, data.val), 5),
      }),
    );
await online.close();

const fidelity = runs.map((dir) => {
  const byIteration = new Map<number, Record<string, number>>();
  for (const line of readFileSync(join(dir, 'metrics.jsonl'), 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const row = JSON.parse(line) as Record<string, number>;
    if (row.iteration >= from && 'fidelity/h10/pairs' in row) byIteration.set(row.iteration, row);
  }
  return byIteration;
});
const shared = [...fidelity[0].keys()].filter((i) => fidelity[1].has(i));
for (const h of ['h5', 'h10', 'h20', 'whole'])
  for (const stat of ['gain_rank_corr', 'rank_corr', 'bias', 'sign_agreement']) {
    const key = `fidelity/${h}/${stat}`;
    // iterations where both runs measured it (a rank correlation is null where one side is constant)
    const both = shared.filter((i) => fidelity.every((f) => typeof f.get(i)![key] === 'number'));
    const [a, b] = fidelity.map((f) => both.map((i) => f.get(i)![key]));
    if (!both.length) continue;
    const interval = (xs: number[]) => Object.fromEntries(Object.entries(tInterval(xs)).map(([k, v]) => [k, round(v)]));
    console.log(
      JSON.stringify({
        figure: key,
        points: both.length,
        from,
        a: interval(a),
        b: interval(b),
        a_minus_b: interval(a.map((x, k) => x - b[k])),
      }),
    );
  }
