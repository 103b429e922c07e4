// npm run bench:scale [-- --quick] — one JSON object per line: rollout-group throughput and per-job
// overhead of the Redis transport, in one run, on the same jobs: in-process (the trainer's default,
// each task's groups in one batch), then 1 and 2 local `wmrl worker` processes on a Redis unix socket.
// A job is one group of G = 8 rollouts of pick-place with the base policy and 12 samples kept per
// rollout (the default preset): physics anchors (whole episodes, states recorded), and world-model
// groups (H = 10 steps in models/wm-base.onnx). The overhead per job is the trainer's wall time per
// job with 1 worker minus the worker's own time in the group's rollouts (its --verbose lines);
// job_own_time is the same group in this process for comparison. Every layout's rollouts are checked
// equal to the in-process ones, bit for bit.
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { tabletopTrainSetup } from '../src/experiment/index.ts';
import { loadPolicy } from '../src/policy/model.ts';
import { PolicySampler } from '../src/policy/sampler.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../src/scene/load-file.ts';
import type { Env } from '../src/env/types.ts';
import { fixedCameras, tabletopSpec } from '../src/physics/index.ts';
import { type GroupRequest, type GroupJob, InProcessTransport, type RefreshableModel } from '../src/trainer/index.ts';
import { OnlineWorldModel } from '../src/worldmodel/index.ts';
import { QueueTransport, encodeValue } from '../src/transport/index.ts';
import { startRedis } from '../test/transport/redis-server.ts';
import { emit, round } from './timing.ts';

const quick = process.argv.includes('--quick');
const REPO = resolve(import.meta.dirname, '..');
const JOBS = quick ? 8 : 24;
const G = 8;

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const policy = await loadPolicy(join(REPO, 'models/vla-base.onnx'));
const { tasks } = await tabletopTrainSetup(scene, ['tabletop/pick-place'], { mode: 'real', worldModel: '', seed: 0 });
const spec = tabletopSpec(scene, 'tabletop/pick-place', fixedCameras(scene));
const online = await OnlineWorldModel.open(join(REPO, 'models/wm-base.onnx'), scene, spec);
type Engine = 'real' | 'model';
let round0 = 0;
/** Fresh jobs (new rollout keys, so no result is ever reused across layouts); world-model groups run
 *  H = 10 steps as the trainer's branched ones do (here from initial states). */
const request = (engine: Engine): GroupRequest => {
  const first = round0++ * JOBS * G;
  const jobs: GroupJob[] = Array.from({ length: JOBS }, (_, g) => ({
    kind: engine === 'real' ? 'anchor' : 'model',
    task: 0,
    start: tasks[0].trainSeed(g),
    startIndex: g,
    keys: Array.from({ length: G }, (_, k) => first + g * G + k),
    horizon: engine === 'model' ? 10 : undefined,
  }));
  return {
    run: '5ca1e0000000beef',
    engine,
    tasks,
    jobs,
    worldModel: online as unknown as RefreshableModel,
    policy: { config: policy.config, params: policy.params },
    seed: 0,
    samplesPerRollout: 12,
  };
};
const seconds = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const out = await f();
  return [out, (performance.now() - t0) / 1000];
};

emit({
  figure: 'machine',
  cpus: cpus().length,
  loadavg_1m: round(loadavg()[0], 2),
  jobs: JOBS,
  group_size: G,
  task: 'tabletop/pick-place',
  policy: 'models/vla-base.onnx',
  world_model: 'models/wm-base.onnx',
});
const sampler = await PolicySampler.create(policy.config, policy.params, { threads: 1 });
const envs = {
  real: { batch: await tasks[0].makeReal(16), job: await tasks[0].makeReal(G) }, // 16: the default preset's numEnvs
  model: { batch: online.envFor(scene, spec, 16), job: online.envFor(scene, spec, G) },
};
const here = (engine: Engine, env: Env) =>
  new InProcessTransport([{ real: engine === 'real' ? env : null, model: engine === 'model' ? env : null }], sampler);
const server = await startRedis();
const workers: ReturnType<typeof spawn>[] = [];
let workerLog = '';
const inProcessS: Record<Engine, number> = { real: 0, model: 0 };
const rate: Record<Engine, number[]> = { real: [], model: [] };
try {
  for (const engine of ['real', 'model'] as const) {
    const e = envs[engine];
    await here(engine, e.job).run({ ...request(engine), jobs: request(engine).jobs.slice(0, 1) }); // warm-up
    const inReq = request(engine);
    const [inGroups, inS] = await seconds(() => here(engine, e.batch).run(inReq));
    inProcessS[engine] = inS;
    const steps = inGroups.flat().reduce((n, r) => n + r.length, 0);
    const kb = inGroups.reduce((n, g) => n + encodeValue(g).length, 0) / JOBS / 1024;
    emit({
      figure: `${engine}/in_process`,
      groups_per_s: round(JOBS / inS),
      s: round(inS),
      env_steps: steps,
      result_kb_per_job: round(kb, 1),
      note: 'the trainer default: all groups of the task in one batch of 16 slots',
    });
    const ownReq = request(engine);
    const [, ownS] = await seconds(async () => {
      for (const j of ownReq.jobs) await here(engine, e.job).run({ ...ownReq, jobs: [j] });
    });
    emit({
      figure: `${engine}/job_own_time`,
      ms: round((ownS / JOBS) * 1000, 1),
      note: `one group of ${G} rollouts in an env of ${G} slots, in this process (as a worker runs a job)`,
    });
  }

  const transport = await QueueTransport.open(server.url);
  for (const count of [1, 2]) {
    while (workers.length < count) {
      const w = spawn('node', [join(REPO, 'bin/wmrl.mjs'), 'worker', '--redis', server.url, '--verbose'], {
        cwd: REPO,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      w.stderr!.on('data', (d: Buffer) => (workerLog += d.toString()));
      workers.push(w);
    }
    for (const engine of ['real', 'model'] as const) {
      // every worker loaded and warm
      await transport.run({ ...request(engine), jobs: request(engine).jobs.slice(0, count * 2) });
      const req = request(engine);
      const logFrom = workerLog.length;
      const [groups, s] = await seconds(() => transport.run(req));
      // the workers' own time in the groups' rollouts, from their --verbose lines
      const own = [...workerLog.slice(logFrom).matchAll(/done \(([\d.]+) ms in the group/g)].map(
        (m) => Number(m[1]) / 1000,
      );
      const local = await here(engine, envs[engine].batch).run(req);
      rate[engine][count] = JOBS / s;
      emit({
        figure: `${engine}/workers_${count}`,
        groups_per_s: round(JOBS / s),
        s: round(s),
        vs_in_process: round(inProcessS[engine] / s, 2),
        identical_to_in_process: encodeValue(groups).equals(encodeValue(local)),
      });
      if (count === 1) {
        const perJob = s / JOBS;
        const ownS = own.reduce((a, b) => a + b, 0) / own.length;
        emit({
          figure: `${engine}/overhead_per_job`,
          ms: round((perJob - ownS) * 1000, 1),
          share_of_job: round((perJob - ownS) / ownS, 3),
          worker_job_ms: round(ownS * 1000, 1),
          jobs_timed: own.length,
          note:
            "1 worker: the trainer's wall time per job minus the worker's own time in the group " +
            '(submit, policy fetch, result encode/decode, Redis round trips)',
        });
      }
    }
  }
  for (const engine of ['real', 'model'] as const)
    emit({
      figure: `${engine}/scaling_2_over_1_worker`,
      ratio: round(rate[engine][2] / rate[engine][1], 2),
      note: `${cpus().length} cores for the trainer, Redis and the workers together`,
    });
  await transport.close();
} finally {
  for (const w of workers) w.kill('SIGKILL');
  for (const e of Object.values(envs)) {
    e.batch.close();
    e.job.close();
  }
  await sampler.close();
  await online.close();
  await server.stop();
}
