// npm run bench:scale [-- --quick] — one JSON object per line: anchor-group throughput and per-job
// overhead of the Redis transport, in one run, on the same jobs: in-process (the trainer's default,
// each task's groups in one batch), then 1 and 2 local `wmrl worker` processes on a Redis unix socket.
// A job is one group of G physics rollouts of pick-place with the base policy (default preset: G = 8,
// 12 samples kept per rollout). The overhead per job is the trainer's wall time per job with 1 worker
// minus the worker's own time in the group's rollouts (its --verbose lines); job_own_time is the same
// group run in this process for comparison. Every layout's rollouts are checked equal to the
// in-process ones, bit for bit.
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { tabletopTrainSetup } from '../src/experiment/index.ts';
import { loadPolicy } from '../src/policy/model.ts';
import { PolicySampler } from '../src/policy/sampler.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../src/scene/load-file.ts';
import { type GroupRequest, type GroupJob, InProcessTransport } from '../src/trainer/index.ts';
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
let round0 = 0;
/** A fresh set of jobs (new rollout keys, so no result is ever reused across layouts). */
const request = (): GroupRequest => {
  const first = (round0++) * JOBS * G;
  const jobs: GroupJob[] = Array.from({ length: JOBS }, (_, g) => ({ kind: 'anchor', task: 0, start: tasks[0].trainSeed(g), startIndex: g, keys: Array.from({ length: G }, (_, k) => first + g * G + k) }));
  return { run: '5ca1e0000000beef', engine: 'real', tasks, jobs, policy: { config: policy.config, params: policy.params }, seed: 0, samplesPerRollout: 12 };
};
const seconds = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t0 = performance.now();
  const out = await f();
  return [out, (performance.now() - t0) / 1000];
};

emit({ figure: 'machine', cpus: cpus().length, loadavg_1m: round(loadavg()[0], 2), jobs: JOBS, group_size: G, task: 'tabletop/pick-place', policy: 'models/vla-base.onnx' });
const sampler = await PolicySampler.create(policy.config, policy.params, { threads: 1 });
const batchEnv = await tasks[0].makeReal(16); // the default preset's numEnvs
const jobEnv = await tasks[0].makeReal(G);
const server = await startRedis();
const workers: ReturnType<typeof spawn>[] = [];
let workerLog = '';
try {
  // warm-up (sessions, env construction), then each layout on its own fresh jobs
  await new InProcessTransport([{ real: jobEnv, model: null }], sampler).run({ ...request(), jobs: request().jobs.slice(0, 1) });
  const inReq = request();
  const [inGroups, inS] = await seconds(() => new InProcessTransport([{ real: batchEnv, model: null }], sampler).run(inReq));
  const steps = inGroups.flat().reduce((n, r) => n + r.length, 0);
  const kb = inGroups.reduce((n, g) => n + encodeValue(g).length, 0) / JOBS / 1024;
  emit({ figure: 'in_process', groups_per_s: round(JOBS / inS), s: round(inS), env_steps: steps, result_kb_per_job: round(kb, 1), note: 'the trainer default: all groups of the task in one batch of 16 slots' });
  const ownReq = request();
  const [, ownS] = await seconds(async () => { for (const j of ownReq.jobs) await new InProcessTransport([{ real: jobEnv, model: null }], sampler).run({ ...ownReq, jobs: [j] }); });
  const jobS = ownS / JOBS;
  emit({ figure: 'job_own_time', ms: round(jobS * 1000, 1), note: `one group of ${G} rollouts in an env of ${G} slots, in this process (as a worker runs a job)` });

  const transport = await QueueTransport.open(server.url);
  const rate: number[] = [];
  for (const count of [1, 2]) {
    while (workers.length < count) {
      const w = spawn('node', [join(REPO, 'bin/wmrl.mjs'), 'worker', '--redis', server.url, '--verbose'], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
      w.stderr!.on('data', (d: Buffer) => (workerLog += d.toString()));
      workers.push(w);
    }
    await transport.run({ ...request(), jobs: request().jobs.slice(0, count * 2) }); // every worker loaded and warm
    const req = request();
    const logFrom = workerLog.length;
    const [groups, s] = await seconds(() => transport.run(req));
    // the workers' own time in the groups' rollouts, from their --verbose lines
    const own = [...workerLog.slice(logFrom).matchAll(/done \(([\d.]+) ms in the group/g)].map((m) => Number(m[1]) / 1000);
    const local = await new InProcessTransport([{ real: batchEnv, model: null }], sampler).run(req);
    const perJob = s / JOBS;
    rate[count] = JOBS / s;
    emit({ figure: `workers_${count}`, groups_per_s: round(JOBS / s), s: round(s), vs_in_process: round(inS / s, 2), identical_to_in_process: encodeValue(groups) === encodeValue(local) });
    if (count === 1) {
      const ownS = own.reduce((a, b) => a + b, 0) / own.length;
      emit({ figure: 'overhead_per_job', ms: round((perJob - ownS) * 1000, 1), share_of_job: round((perJob - ownS) / ownS, 3), worker_job_ms: round(ownS * 1000, 1), jobs_timed: own.length, note: '1 worker: the trainer\'s wall time per job minus the worker\'s own time in the group (submit, policy fetch, result encode/decode, Redis round trips)' });
    }
  }
  emit({ figure: 'scaling_2_over_1_worker', ratio: round(rate[2] / rate[1], 2), note: `${cpus().length} cores for the trainer, Redis and the workers together` });
  await transport.close();
} finally {
  for (const w of workers) w.kill('SIGKILL');
  batchEnv.close();
  jobEnv.close();
  await sampler.close();
  await server.stop();
}
