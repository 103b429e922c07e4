// npm run bench:env [-- --quick] — one JSON object per line: raw Rapier world.step() cost, physics-only
// control steps/s, render-only frames/s, full env steps/s (1 and 16 worlds, rendering included), and
// snapshot take/restore microseconds, each with its ratio to the raw world.step() cost of the same run;
// and full env steps/s with one and two worker threads stepping envs at once (bench/env-worker.ts).
import { loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { createTabletopEnv } from '../src/physics/index.ts';
import { createRenderer } from '../src/render/index.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../src/scene/load-file.ts';
import { emit, round, stepper, timeAsync } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 300 : 2000;
const TASK = 'tabletop/pick-place';
const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const substeps = scene.control.substeps;
const rawEnv = await createTabletopEnv({ scene, taskId: TASK, numEnvs: 1, render: false });
await rawEnv.reset({ seed: 0 });
const rawStepMs = await timeAsync(() => rawEnv.world(0).step(), 200, MIN_MS);
const rawControlMs = rawStepMs * substeps;
emit({
  figure: 'raw_world_step',
  ms: round(rawStepMs, 4),
  per_control_step_ms: round(rawControlMs),
  substeps,
  note: `Rapier world.step() on a fresh ${TASK} world with no commanded motion; a control step is ${substeps} of them`,
});

const physicsOnly = await createTabletopEnv({ scene, taskId: TASK, numEnvs: 1, render: false });
await physicsOnly.reset({ seed: 0 });
const physicsMs = await timeAsync(stepper(physicsOnly, 1), 100, MIN_MS);
emit({
  figure: 'physics_only_control_steps_per_s',
  worlds: 1,
  steps_per_s: round(1000 / physicsMs, 1),
  ms: round(physicsMs),
  ratio_to_raw: round(physicsMs / rawControlMs),
});

const renderer = createRenderer(scene, 'front');
const out = new Uint8Array(64 * 64 * 3);
const poses = physicsOnly.frame(0);
const renderMs = await timeAsync(() => renderer.render(poses, out), 500, MIN_MS);
emit({
  figure: 'render_only_frames_per_s',
  camera: 'front',
  frames_per_s: round(1000 / renderMs, 0),
  ms: round(renderMs, 4),
  ratio_to_raw: round(renderMs / rawControlMs),
});

for (const worlds of [1, 16]) {
  const env = await createTabletopEnv({ scene, taskId: TASK, numEnvs: worlds });
  await env.reset({ seed: 0 });
  const ms = await timeAsync(stepper(env, 1), worlds === 1 ? 100 : 10, MIN_MS);
  emit({
    figure: 'full_env_steps_per_s',
    worlds,
    env_steps_per_s: round((1000 * worlds) / ms, 1),
    ms_per_batch_step: round(ms),
    ratio_to_raw: round(ms / worlds / rawControlMs),
    includes: 'physics, 64x64 render, proprio, verifier, resets',
  });
  env.close();
}

// Both cores: each thread steps its own 16-world env (as rollout helper threads do) for the same time
for (const threads of [1, 2]) {
  const code =
    "import('tsx/esm/api').then((m) => { m.register(); return import(require('node:worker_threads').workerData.entry); })";
  const entry = new URL('./env-worker.ts', import.meta.url).href;
  const ms = quick ? 1500 : 5000;
  const workers = Array.from(
    { length: threads },
    (_, k) => new Worker(code, { eval: true, workerData: { entry, worlds: 16, ms, seed: k, task: TASK } }),
  );
  const next = (w: Worker) =>
    new Promise<unknown>((resolve, reject) => w.once('message', resolve).once('error', reject));
  await Promise.all(workers.map(next));
  const counts = workers.map(next);
  for (const w of workers) w.postMessage('go');
  const steps = (await Promise.all(counts)).reduce<number>((a, b) => a + Number(b), 0);
  await Promise.all(workers.map((w) => w.terminate()));
  emit({
    figure: 'full_env_steps_per_s_threads',
    threads,
    worlds_per_thread: 16,
    env_steps_per_s: round((1000 * steps) / ms, 1),
    target: threads === 2 ? 3000 : undefined,
    includes: 'physics, 64x64 render, proprio, verifier, resets; one env per worker thread',
  });
}

const snapEnv = await createTabletopEnv({ scene, taskId: TASK, numEnvs: 1 });
await snapEnv.reset({ seed: 0 });
const step = stepper(snapEnv, 3);
for (let i = 0; i < 10; i++) await step();
const snap = snapEnv.snapshot();
const takeMs = await timeAsync(() => snapEnv.snapshot(), 200, MIN_MS);
const restoreMs = await timeAsync(() => snapEnv.restore(snap), 200, MIN_MS);
emit({ figure: 'snapshot_take_us', us: round(takeMs * 1000, 1), ratio_to_raw: round(takeMs / rawControlMs) });
emit({ figure: 'snapshot_restore_us', us: round(restoreMs * 1000, 1), ratio_to_raw: round(restoreMs / rawControlMs) });
emit({
  figure: 'machine_load',
  loadavg_1m: round(loadavg()[0], 2),
  note: 'other processes on this 2-core machine slow every figure above',
});
for (const e of [rawEnv, physicsOnly, snapEnv]) e.close();
