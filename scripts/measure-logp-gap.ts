// The train/inference log-prob gap and what closing it would cost: 768 rows of pick-place (12 steps of
// 64 envs) sampled by the policy sampler as training builds it (onnxruntime 'all': NCHWc convolutions
// with the weights baked in) and at 'extended' (no NCHWc), each row's log-prob then recomputed by the
// trainer's forward (weights fed). Prints ms per sampler call and the largest gap of each.
//   node bin/run-ts.mjs scripts/measure-logp-gap.ts
import { Rng } from '../src/core/rng.ts';
import { createTabletopEnv } from '../src/physics/index.ts';
import { loadPolicy, PolicySampler } from '../src/policy/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { obsRow, type PolicySample, PolicyTrainer } from '../src/trainer/policy-trainer.ts';

const N = 64;
const STEPS = 12;
const env = await createTabletopEnv({
  scene: loadSceneFile(DEFAULT_SCENE_PATH),
  taskId: 'tabletop/pick-place',
  numEnvs: N,
});
const m = await loadPolicy('models/vla-base.onnx');
const samplers = {
  all: await PolicySampler.create(m.config, m.params, { threads: 1 }),
  extended: await PolicySampler.create(m.config, m.params, { threads: 1, optimization: 'extended' }),
};
const trainer = await PolicyTrainer.create(m.config, m.params, {
  batch: N,
  lr: 0,
  weightDecay: 0,
  maxGradNorm: 1,
  runtime: { threads: 1 },
});
const rows = { all: [] as PolicySample[], extended: [] as PolicySample[] };
const ms = { all: 0, extended: 0 };
let obs = (await env.reset({ seed: 100 })).obs;
for (let step = 0; step < STEPS; step++) {
  let acted = null;
  for (const level of ['all', 'extended'] as const) {
    const t0 = performance.now();
    const a = await samplers[level].act(
      obs,
      N,
      Array.from({ length: N }, (_, i) => new Rng([step, i], 3)),
    );
    ms[level] += (performance.now() - t0) / STEPS;
    acted ??= a.actions;
    for (let i = 0; i < N; i++) {
      const tokens = Object.fromEntries(Object.entries(acted).map(([k, v]) => [k, v[i]]));
      rows[level].push({
        obs: obsRow(obs, N, i),
        tokens,
        behaviourLogp: a.logp[i],
        refLogp: 0,
        advantage: 0,
        weight: 1,
      });
    }
  }
  obs = (await env.step(acted!)).obs;
}
for (const level of ['all', 'extended'] as const) {
  let gap = 0;
  const t0 = performance.now();
  for (let k = 0; k < rows[level].length; k += N)
    gap = Math.max(gap, await trainer.logpGap(rows[level].slice(k, k + N)));
  const recompute = performance.now() - t0;
  console.log(
    JSON.stringify({
      sampler: level,
      msPerSamplerCall: ms[level],
      maxGap: gap,
      recomputeMs: recompute,
      rows: rows[level].length,
    }),
  );
}
env.close();
await Promise.all([samplers.all.close(), samplers.extended.close(), trainer.close()]);
