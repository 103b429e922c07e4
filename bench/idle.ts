// npm run bench:idle [-- --quick] [-- --policy models/vla-base.onnx] [-- --model models/wm-base.onnx]
// One JSON object per line: what rollouts cost when some env slots have nothing to run, timed side by
// side in one run (alternating batches), through the collector training and evaluation use:
// (a) held-out evaluation: 8 against 16 episodes per task on 16 physics slots (target: 8 <= 0.6x 16);
// (b) world-model groups of 8 rollouts, horizon 10 (2 groups, then 7), on 16 against 64 world-model slots.
// --quick: one task and shorter timing.
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Env } from '../src/env/types.ts';
import { createTabletopEnv } from '../src/physics/index.ts';
import { loadPolicy, PolicySampler, samplerPolicy } from '../src/policy/index.ts';
import { collectEpisodes } from '../src/rollout/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { openWorldModelEnv } from '../src/worldmodel/index.ts';
import { emit, round, timePair } from './timing.ts';

const arg = (name: string, fallback: string) => {
  const k = process.argv.indexOf(name);
  return k >= 0 ? process.argv[k + 1] : fallback;
};
const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 2000 : 10000;
const POLICY = arg('--policy', 'models/vla-base.onnx');
const MODEL = arg('--model', 'models/wm-base.onnx');
const TASKS = quick
  ? ['tabletop/pick-place']
  : ['tabletop/push', 'tabletop/pick-place', 'tabletop/stack', 'tabletop/put-in-bin'];
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

const sampler = await (async () => {
  const p = await loadPolicy(POLICY);
  return PolicySampler.create(p.config, p.params, { threads: 1 });
})();
const policy = samplerPolicy(sampler, { seed: 0, temperature: 1 });

/** ms per call of a and b (alternating), as one figure with the ratio b / a. */
async function pair(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a_ms: number; b_ms: number; ratio: number }> {
  const [ta, tb] = await timePair(a, b, 1, MIN_MS);
  return { a_ms: round(ta, 1), b_ms: round(tb, 1), ratio: round(tb / ta, 3) };
}

async function evaluation(): Promise<void> {
  const envs: Env[] = [];
  for (const taskId of TASKS) envs.push(await createTabletopEnv({ scene, taskId, numEnvs: 16 }));
  const run = (episodes: number) => async () => {
    const seeds = Array.from({ length: episodes }, (_, k) => 900_000 + k);
    for (const env of envs) await collectEpisodes(env, policy, { seeds });
  };
  const t = await pair(run(16), run(8));
  emit({
    bench: 'idle-slots',
    figure: 'evaluation, 8 vs 16 episodes per task',
    slots: 16,
    tasks: TASKS.length,
    ms_16_episodes: t.a_ms,
    ms_8_episodes: t.b_ms,
    ratio_8_over_16: t.ratio,
    target_ratio: 0.6,
    target_met: t.ratio <= 0.6,
    load: round(loadavg()[0], 2),
  });
  for (const env of envs) env.close();
}

/** `groups` world-model groups of 8 rollouts, horizon 10, on 16 against 64 slots. */
async function worldModelGroups(groups: number): Promise<void> {
  const probe = await createTabletopEnv({ scene, taskId: 'tabletop/pick-place', numEnvs: 1, render: false });
  const open = (numEnvs: number) => openWorldModelEnv(MODEL, { scene, spec: probe.spec, numEnvs, threads: 1 });
  const [small, large] = [await open(16), await open(64)];
  const rollouts = 8 * groups;
  const seeds = Array.from({ length: rollouts }, (_, k) => 1000 + Math.floor(k / 8));
  const keys = Array.from({ length: rollouts }, (_, k) => 50_000 + k);
  const run = (env: Env) => async () => {
    await collectEpisodes(env, policy, { seeds, keys, horizons: seeds.map(() => 10) });
  };
  const t = await pair(run(small), run(large));
  emit({
    bench: 'idle-slots',
    figure: 'world-model groups, 64 vs 16 slots',
    groups,
    rollouts,
    horizon: 10,
    ms_16_slots: t.a_ms,
    ms_64_slots: t.b_ms,
    ratio_64_over_16: t.ratio,
    load: round(loadavg()[0], 2),
  });
  for (const env of [probe, small, large]) env.close();
}

if (!existsSync(MODEL)) throw new Error(`bench:idle needs a world model at ${MODEL}`);
await evaluation();
// 2 groups: one task's world-model share of a default iteration; 7: all of them on one engine
for (const groups of [2, 7]) await worldModelGroups(groups);
await sampler.close();
