// npm run bench:cameras [-- --quick] — one JSON object per line: what the wrist camera costs. Rendering: one
// 64x64 frame of each camera alone, and a full env step (physics, rendering, proprio, verifier, resets) of 16
// worlds observing front only against front+wrist; the policy: PolicySampler.act (feeds, forward, token
// picking) of a roles16 VLA reading 1 camera against the same network reading 2, at batch 8 and 16 on one
// onnxruntime thread. Each pair is timed in alternating batches, so machine load hits both alike, on the wall
// clock and in this process's CPU time.
import { loadavg } from 'node:os';
import { Rng } from '../src/core/rng.ts';
import type { BatchObs } from '../src/env/types.ts';
import { Graph } from '../src/nn/ir.ts';
import { ParamStore } from '../src/nn/params.ts';
import { createTabletopEnv, imageName } from '../src/physics/index.ts';
import { loadPolicy } from '../src/policy/model.ts';
import { PRETRAIN_SIZES } from '../src/policy/presets.ts';
import { PolicySampler } from '../src/policy/sampler.ts';
import { type VlaConfig, parseVlaConfig, vlaForwardBuilder } from '../src/policy/vla.ts';
import { createRenderer } from '../src/render/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { machine } from './machine.ts';
import { emit, round, stepper, timeAsync } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 600 : 3000;
const TASK = 'tabletop/pick-place';
const ONE = ['front'];
const TWO = ['front', 'wrist'];
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

/** ms per call of a and of b, wall clock and this process's CPU time (user + system: what other processes
 *  on the shared machine disturb least), in alternating batches; medians over >= 9 batch pairs spanning
 *  at least minMs. */
async function pairMs(a: () => unknown, b: () => unknown, perBatch: number, minMs: number) {
  const batch = async (fn: () => unknown) => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < perBatch; i++) await fn();
    const c = process.cpuUsage(c0);
    return { wall: (performance.now() - t0) / perBatch, cpu: (c.user + c.system) / 1000 / perBatch };
  };
  await batch(a);
  await batch(b);
  const ta: { wall: number; cpu: number }[] = [];
  const tb: { wall: number; cpu: number }[] = [];
  const until = performance.now() + minMs;
  while (ta.length < 9 || performance.now() < until) {
    ta.push(await batch(a));
    tb.push(await batch(b));
  }
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const of = (t: typeof ta) => ({ wall: median(t.map((x) => x.wall)), cpu: median(t.map((x) => x.cpu)) });
  return [of(ta), of(tb)];
}

const M = machine();
emit({ figure: 'machine', model: M.model, cores: M.cores, node: process.version, quick });

// ---- rendering ----------------------------------------------------------------------------------
const posed = await createTabletopEnv({ scene, taskId: TASK, numEnvs: 1, render: false });
await posed.reset({ seed: 0 });
const poses = posed.frame(0);
const frame = new Uint8Array(64 * 64 * 3);
for (const camera of TWO) {
  const renderer = createRenderer(scene, camera);
  const ms = await timeAsync(() => renderer.render(poses, frame), 500, MIN_MS);
  emit({
    figure: 'camera_render_ms',
    camera,
    mount: scene.cameras.find((c) => c.name === camera)?.mount,
    ms: round(ms, 4),
    frames_per_s: round(1000 / ms, 0),
    note: 'a fixed camera draws static bodies once; a wrist camera redraws the whole scene each frame',
  });
}
posed.close();

const worlds = 16;
const envs = await Promise.all(
  [ONE, TWO].map((cameras) => createTabletopEnv({ scene, taskId: TASK, numEnvs: worlds, cameras })),
);
for (const env of envs) await env.reset({ seed: 0 });
const [one, two] = await pairMs(stepper(envs[0], 1), stepper(envs[1], 1), 2, 2 * MIN_MS);
for (const clock of ['wall', 'cpu'] as const)
  emit({
    figure: 'env_step_cameras',
    clock,
    worlds,
    front_ms_per_env_step: round(one[clock] / worlds, 4),
    front_wrist_ms_per_env_step: round(two[clock] / worlds, 4),
    wrist_added_ms_per_env_step: round((two[clock] - one[clock]) / worlds, 4),
    ratio: round(two[clock] / one[clock], 3),
    includes: 'physics, rendering, proprio, verifier, resets (the same actions and states in both)',
  });
for (const env of envs) env.close();

// ---- the policy ---------------------------------------------------------------------------------
const INSTRUCTIONS = ['push the red cube to the orange zone', 'put the yellow cube in the bin'];

/** roles16 on the shipped base's interface (tokenizer, proprio, heads), reading `cameras`. */
function roles16(base: VlaConfig, cameras: readonly string[]): VlaConfig {
  const { proprioHidden, ...sizes } = PRETRAIN_SIZES.roles16;
  const proprio = base.proprio && { ...base.proprio, hidden: proprioHidden };
  return parseVlaConfig({ ...base, ...sizes, proprio, cameras: cameras.map(imageName) });
}

function paramsOf(config: VlaConfig): ParamStore {
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  return ParamStore.init(g.params, 0);
}

function observations(config: VlaConfig, n: number): BatchObs {
  const rng = new Rng(n, 1);
  const [h, w] = config.imageSize;
  const obs: BatchObs = {};
  for (const cam of config.cameras) obs[cam] = Uint8Array.from({ length: n * h * w * 3 }, () => rng.int(256));
  obs[config.instruction] = Array.from({ length: n }, (_, i) => INSTRUCTIONS[i % INSTRUCTIONS.length]);
  if (config.proprio)
    obs[config.proprio.name] = Float32Array.from({ length: n * config.proprio.dim }, () => rng.normal());
  return obs;
}

const base = (await loadPolicy('models/vla-base.onnx')).config;
const configs = [roles16(base, ONE), roles16(base, TWO)];
const params = configs.map(paramsOf);
emit({ figure: 'policy_params', size: 'roles16', one_camera: params[0].size, two_cameras: params[1].size });
const samplers = await Promise.all(configs.map((c, k) => PolicySampler.create(c, params[k], { threads: 1 })));
for (const n of [8, 16]) {
  const obs = observations(configs[1], n);
  const draw = () => Array.from({ length: n }, (_, i) => new Rng([n, i], 2));
  const [one, two] = await pairMs(
    () => samplers[0].act(obs, n, draw()),
    () => samplers[1].act(obs, n, draw()),
    5,
    MIN_MS,
  );
  for (const clock of ['wall', 'cpu'] as const)
    emit({
      figure: 'policy_act_cameras',
      clock,
      size: 'roles16',
      batch: n,
      threads: 1,
      one_camera_ms: round(one[clock], 3),
      two_cameras_ms: round(two[clock], 3),
      ratio: round(two[clock] / one[clock], 3),
      includes: 'observation feeds, forward pass, token picking (PolicySampler.act)',
    });
}
for (const s of samplers) await s.close();
emit({
  figure: 'machine_load',
  loadavg_1m: round(loadavg()[0], 2),
  note: 'other processes on this 2-core machine slow every figure above',
});
