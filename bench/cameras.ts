// npm run bench:cameras [-- --quick] — one JSON object per line: what the wrist camera costs. Rendering: one
// 64x64 frame of each camera alone, and a full env step (physics, rendering, proprio, verifier, resets) of 16
// worlds observing front only against front+wrist; the policy: PolicySampler.act (feeds, forward, token
// picking) of a roles16 VLA reading the front camera only, front+wrist through the shared encoder, and
// front+wrist with the wrist through its own light encoder (--second-encoder light), at batch 8 and 16 on one
// onnxruntime thread, and the same three networks' PPO update step (PolicyTrainer.step, batch 64). Each set is
// timed in alternating batches, so machine load hits all alike, on the wall clock and in this process's CPU
// time.
import { loadavg } from 'node:os';
import { Rng } from '../src/core/rng.ts';
import { createTabletopEnv, imageName } from '../src/physics/index.ts';
import { loadPolicy } from '../src/policy/model.ts';
import { PRETRAIN_SIZES, type SecondEncoderName, withSecondEncoder } from '../src/policy/presets.ts';
import { PolicySampler } from '../src/policy/sampler.ts';
import { type VlaConfig, parseVlaConfig } from '../src/policy/vla.ts';
import { createRenderer } from '../src/render/index.ts';
import { type PolicySample, PolicyTrainer, obsRow } from '../src/trainer/policy-trainer.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { machine } from './machine.ts';
import { observations, paramsOf } from './vla-inputs.ts';
import { emit, round, stepper, timeAsync } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 600 : 3000;
const TASK = 'tabletop/pick-place';
const ONE = ['front'];
const TWO = ['front', 'wrist'];
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

type Clocks = { wall: number; cpu: number };

/** ms per call of each of `fns`, wall clock and this process's CPU time (user + system: what other
 *  processes on the shared machine disturb least), in alternating batches; medians over >= 9 rounds
 *  spanning at least minMs. */
async function interleavedMs(fns: (() => unknown)[], perBatch: number, minMs: number): Promise<Clocks[]> {
  const batch = async (fn: () => unknown): Promise<Clocks> => {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    for (let i = 0; i < perBatch; i++) await fn();
    const c = process.cpuUsage(c0);
    return { wall: (performance.now() - t0) / perBatch, cpu: (c.user + c.system) / 1000 / perBatch };
  };
  for (const fn of fns) await batch(fn);
  const times: Clocks[][] = fns.map(() => []);
  const until = performance.now() + minMs;
  while (times[0].length < 9 || performance.now() < until)
    for (const [k, fn] of fns.entries()) times[k].push(await batch(fn));
  const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  return times.map((t) => ({ wall: median(t.map((x) => x.wall)), cpu: median(t.map((x) => x.cpu)) }));
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
const [one, two] = await interleavedMs([stepper(envs[0], 1), stepper(envs[1], 1)], 2, 2 * MIN_MS);
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

/** roles16 on the shipped base's interface (tokenizer, proprio, heads), reading `cameras`, a second camera
 *  through the `second` encoder. */
function roles16(base: VlaConfig, cameras: readonly string[], second: SecondEncoderName = 'shared'): VlaConfig {
  const { proprioHidden, ...sizes } = withSecondEncoder(PRETRAIN_SIZES.roles16, second, base.imageSize);
  const proprio = base.proprio && { ...base.proprio, hidden: proprioHidden };
  return parseVlaConfig({ ...base, ...sizes, proprio, cameras: cameras.map(imageName) });
}

const base = (await loadPolicy('models/vla-base.onnx')).config;
const configs = [roles16(base, ONE), roles16(base, TWO), roles16(base, TWO, 'light')];
const params = configs.map(paramsOf);
emit({
  figure: 'policy_params',
  size: 'roles16',
  front: params[0].size,
  front_wrist_shared: params[1].size,
  front_wrist_light: params[2].size,
  light_wrist_encoder: configs[2].secondConv,
});
/** front only, front+wrist shared, front+wrist light: ms per call, their ratios to front only. */
const threeWay = (t: Clocks[], clock: keyof Clocks) => ({
  front_ms: round(t[0][clock], 3),
  front_wrist_shared_ms: round(t[1][clock], 3),
  front_wrist_light_ms: round(t[2][clock], 3),
  shared_ratio: round(t[1][clock] / t[0][clock], 3),
  light_ratio: round(t[2][clock] / t[0][clock], 3),
});
const samplers = await Promise.all(configs.map((c, k) => PolicySampler.create(c, params[k], { threads: 1 })));
for (const n of [8, 16]) {
  const obs = observations(configs[1], n);
  const draw = () => Array.from({ length: n }, (_, i) => new Rng([n, i], 2));
  const t = await interleavedMs(
    samplers.map((s) => () => s.act(obs, n, draw())),
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
      ...threeWay(t, clock),
      includes: 'observation feeds, forward pass, token picking (PolicySampler.act)',
    });
}
for (const s of samplers) await s.close();

// the PPO update on the trainer's default batch: forward, backward and AdamW in one session.run
const BATCH = 64;
const obs = observations(configs[1], BATCH);
const rows: PolicySample[] = Array.from({ length: BATCH }, (_, i) => ({
  obs: obsRow(obs, BATCH, i),
  tokens: Object.fromEntries(base.actions.map((a) => [a.name, i % a.n])),
  behaviourLogp: -8,
  refLogp: -8,
  advantage: i % 2 ? 1 : -1,
  weight: 1,
}));
const trainers = await Promise.all(
  configs.map((c, k) => PolicyTrainer.create(c, params[k], { batch: BATCH, lr: 1e-6, runtime: { threads: 1 } })),
);
const t = await interleavedMs(
  trainers.map((tr) => () => tr.step(rows)),
  1,
  2 * MIN_MS,
);
for (const clock of ['wall', 'cpu'] as const)
  emit({
    figure: 'policy_update_cameras',
    clock,
    size: 'roles16',
    batch: BATCH,
    threads: 1,
    ...threeWay(t, clock),
    includes: 'PPO feeds, forward, backward and AdamW (PolicyTrainer.step)',
  });
for (const tr of trainers) await tr.close();
emit({
  figure: 'machine_load',
  loadavg_1m: round(loadavg()[0], 2),
  note: 'other processes on this 2-core machine slow every figure above',
});
