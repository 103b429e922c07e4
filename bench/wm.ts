// npm run bench:wm [-- --quick] [-- --model models/wm-base.onnx] [-- --policy models/vla-base.onnx]
// [-- --threads 1,2] — one JSON object per line: world-model env vs physics env steps/s at batch 64 with
// the same actions, in one run; (a) dynamics only: rendering off, precomputed random tokens (policy
// excluded); (b) full loop: rendering on and the same VLA policy sampling from each env's observations;
// (c) policy sampling alone at batch 16, 64, 128 and 256 (microseconds per env).
// Ratios are WM / physics cost per step (targets: (b) <= 1/5, (a) <= 1/20). Each figure is measured
// per onnxruntime intra-op thread count (policy and ensemble sessions alike; Rapier is single-threaded).
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Rng } from '../src/core/rng.ts';
import { randomAction } from '../src/env/index.ts';
import type { BatchAction, Env } from '../src/env/types.ts';
import { createTabletopEnv } from '../src/physics/index.ts';
import { loadPolicy, PolicySampler } from '../src/policy/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { openWorldModelEnv } from '../src/worldmodel/index.ts';
import { emit, round, timeAsync, timePair } from './timing.ts';

const arg = (name: string, fallback: string) => {
  const k = process.argv.indexOf(name);
  return k >= 0 ? process.argv[k + 1] : fallback;
};
const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 500 : 3000;
const N = 64;
const TASK = 'tabletop/pick-place';
const MODEL = arg('--model', 'models/wm-base.onnx');
const THREADS = arg('--threads', '1,2').split(',').map(Number);
const POLICY = arg('--policy', existsSync('models/vla-base.onnx') ? 'models/vla-base.onnx' : 'models/tiny-policy.onnx');
const scene = loadSceneFile(DEFAULT_SCENE_PATH);
/** One control step of all N envs with `act` choosing the tokens; finished envs are reset (masked). */
function loop(
  env: Env,
  act: (obs: Record<string, unknown>) => Promise<BatchAction> | BatchAction,
): { step: () => Promise<void>; start: () => Promise<void> } {
  let obs: Record<string, unknown> = {};
  let nextSeed = 5000;
  return {
    start: async () => {
      obs = (await env.reset({ seed: 1000 })).obs;
    },
    step: async () => {
      const r = await env.step(await act(obs));
      obs = r.obs;
      const mask = Array.from({ length: N }, (_, i) => r.terminated[i] === 1 || r.truncated[i] === 1);
      if (mask.some(Boolean)) {
        obs = (await env.reset({ seed: nextSeed, mask })).obs;
        nextSeed += N;
      }
    },
  };
}

async function measure(render: boolean, policy: PolicySampler | null, threads: number): Promise<void> {
  const physics = await createTabletopEnv({ scene, taskId: TASK, numEnvs: N, render });
  const wm = await openWorldModelEnv(MODEL, { scene, spec: physics.spec, numEnvs: N, render, threads });
  const rng = new Rng(7);
  const tokens: BatchAction[] = Array.from({ length: 64 }, () => randomAction(physics.spec, N, rng));
  const make = (env: Env) => {
    let t = 0;
    const prng = new Rng(11);
    return loop(
      env,
      policy ? async (obs) => (await policy.act(obs as never, N, prng)).actions : () => tokens[t++ % tokens.length],
    );
  };
  const p = make(physics),
    w = make(wm);
  await p.start();
  await w.start();
  const per = quick ? 2 : 4;
  const [physMs, wmMs] = await timePair(p.step, w.step, per, MIN_MS);
  const mode = policy
    ? 'full loop (policy inference + rendering included)'
    : 'dynamics only (policy inference + rendering excluded)';
  const target = policy ? 1 / 5 : 1 / 20;
  emit({
    bench: 'wm-vs-physics',
    mode,
    ort_threads: threads,
    task: TASK,
    batch: N,
    render,
    policy: policy ? POLICY : 'precomputed random tokens',
    model: MODEL,
    physics_ms_per_step: round(physMs),
    wm_ms_per_step: round(wmMs),
    physics_env_steps_per_s: round((1000 * N) / physMs, 0),
    wm_env_steps_per_s: round((1000 * N) / wmMs, 0),
    physics_us_per_env_step: round((1000 * physMs) / N, 1),
    wm_us_per_env_step: round((1000 * wmMs) / N, 1),
    ratio_wm_over_physics: round(wmMs / physMs, 4),
    target_ratio: target,
    target_met: wmMs / physMs <= target,
    load: round(loadavg()[0], 2),
  });
  physics.close();
  wm.close();
}

/** Policy sampling alone at `batch` rows: whether batching more envs into one call (groups or tasks
 *  together) would make a row cheaper. */
async function policyOnly(policy: PolicySampler, threads: number, batch: number): Promise<void> {
  const physics = await createTabletopEnv({ scene, taskId: TASK, numEnvs: batch });
  const { obs } = await physics.reset({ seed: 3 });
  const rng = new Rng(1);
  const ms = await timeAsync(
    async () => {
      await policy.act(obs, batch, rng);
    },
    4,
    MIN_MS,
  );
  emit({
    bench: 'policy-inference',
    policy: POLICY,
    ort_threads: threads,
    batch,
    ms_per_batch: round(ms),
    us_per_env: round((1000 * ms) / batch, 1),
  });
  physics.close();
}

if (!existsSync(MODEL)) throw new Error(`bench:wm needs a world model at ${MODEL} (wmrl wm train ... --out ${MODEL})`);
const loaded = await loadPolicy(POLICY);
for (const threads of THREADS) {
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`--threads: expected positive integers like 1,2, got ${THREADS.join(',')}`);
  const policy = await PolicySampler.create(loaded.config, loaded.params, { threads });
  await measure(false, null, threads);
  await measure(true, policy, threads);
  for (const batch of [16, N, 2 * N, 4 * N]) await policyOnly(policy, threads, batch);
  await policy.close();
}
