// The run a WMRL training works with (src/trainer/loop.ts): its setup, the samplers, the policy trainer,
// each task's envs and the transports, opened once (or restored from a checkpoint, with the run folder's
// config.json and metrics file); and one iteration's clock and rollouts.
import { join, resolve } from 'node:path';
import { InputError } from '../core/errors.ts';
import { hashOf } from '../core/hash.ts';
import { canonicalJson } from '../core/spec.ts';
import type { Env } from '../env/types.ts';
import type { ParamStore } from '../nn/params.ts';
import type { OptimizerState } from '../nn/train.ts';
import { commitFiles, resumeCheckpoint, startMetrics } from '../store/index.ts';
import { PolicySampler } from '../policy/sampler.ts';
import { checkCheckpointPolicy, freshState, loadCheckpoint, restoreState, type TrainState } from './checkpoint.ts';
import { checkModelReward, modeFlags, type TrainConfig } from './config.ts';
import { PolicyTrainer } from './policy-trainer.ts';
import type { ModelTrainerState, RefreshableModel, Replay } from './refresh-state.ts';
import type { GroupJob, Rollout } from './rollouts.ts';
import { InProcessTransport } from './transport.ts';
import type { GroupRequest, RolloutTransport, TrainHooks, TrainSetup } from './types.ts';

/** What every iteration works with: the setup, the corrections and counters (checkpointed), the engines. */
export interface Run {
  setup: TrainSetup;
  cfg: TrainConfig;
  flags: ReturnType<typeof modeFlags>;
  /** The run's identity (job ids of remote transports). */
  id: string;
  state: TrainState;
  /** The policy being trained (sampler) and the frozen KL reference (refSampler). */
  sampler: PolicySampler;
  refSampler: PolicySampler;
  trainer: PolicyTrainer;
  /** Per task: anchor slots, evaluation slots, world-model slots (null where not used). */
  envs: { real: Env | null; eval: Env | null; model: Env | null }[];
  transport: RolloutTransport;
  modelTransport: RolloutTransport;
  /** The helper threads' transport, closed with the run. */
  split: ReturnType<NonNullable<TrainSetup['split']>> | null;
  /** The world model refreshed from anchor episodes (modes with both engines and refreshEvery > 0). */
  refreshing?: RefreshableModel;
  anchorCount: number;
}

/** Seconds per part of an iteration (policy: inference inside the physics and world-model parts). */
export type Clock = {
  physics: number;
  model: number;
  training: number;
  refresh: number;
  eval: number;
  fidelity: number;
  policy: number;
};

/** One iteration: its index, its clock, its groups' rollouts, and what the transports get. */
export interface Iteration {
  it: number;
  clock: Clock;
  rollouts: Map<GroupJob, Rollout[]>;
  request: Omit<GroupRequest, 'engine' | 'jobs'>;
}

/** The samplers, the policy trainer, each task's envs and the transports; a resumed run's optimizer
 *  and world-model state restored. */
export async function openRun(
  setup: TrainSetup,
  cfg: TrainConfig,
  o: {
    id: string;
    state: TrainState;
    params: ParamStore;
    reference: ParamStore;
    optimizer?: OptimizerState;
    replay: Replay | null;
    model: ModelTrainerState | null;
  },
  hooks: TrainHooks,
): Promise<Run> {
  const flags = modeFlags(cfg.mode);
  const runtime = { threads: cfg.threads };
  // with helper threads this process runs the first of helpers + 1 parts of every group; during the
  // update the helpers run slices of it (thread counts and placement decide no result)
  const parts = cfg.helpers > 0 && setup.split && !hooks.transport ? cfg.helpers + 1 : 1;
  const sampler = await PolicySampler.create(setup.policy.config, o.params, runtime);
  const refSampler = await PolicySampler.create(setup.policy.config, o.reference, runtime);
  const { anchorCount, envs } = await openEnvs(setup, cfg, flags, hooks, parts);
  const local = new InProcessTransport(envs, sampler);
  const split = parts > 1 ? setup.split!(local, cfg.helpers) : null;
  const hosts = split?.hosts ?? [];
  const trainer = await PolicyTrainer.create(setup.policy.config, o.params, {
    batch: cfg.batch,
    lr: cfg.lr,
    weightDecay: cfg.weightDecay,
    maxGradNorm: cfg.maxGradNorm,
    coefficients: { clip: cfg.clip, clipHigh: cfg.clipHigh, klCoef: cfg.klCoef, entropyCoef: cfg.entropyCoef },
    shards: cfg.updateShards,
    hosts,
    temperature: cfg.temperature,
    // slices on helpers keep their cores busy; otherwise the update takes them as intra-op threads
    runtime: { threads: cfg.updateShards > 1 && hosts.length ? cfg.threads : cfg.threads * parts },
  });
  if (o.optimizer) trainer.importOptimizer(o.optimizer);
  if (hooks.modelTransport && flags.model && !setup.worldModel?.snapshot)
    throw new InputError('world-model groups on workers: this world model has no snapshot to send');
  const refreshing = flags.model && flags.anchors && cfg.refreshEvery > 0 ? setup.worldModel : undefined;
  if (refreshing) {
    refreshing.bound(cfg.replayCapacity || Number.POSITIVE_INFINITY);
    if (o.replay) refreshing.importReplay(o.replay.store, o.replay.info);
    if (o.model) await refreshing.restore(o.model);
  }
  return {
    setup,
    cfg,
    flags,
    id: o.id,
    state: o.state,
    sampler,
    refSampler,
    trainer,
    envs,
    transport: hooks.transport ?? split ?? local,
    modelTransport: hooks.modelTransport ?? split ?? local,
    split,
    refreshing,
    anchorCount,
  };
}

/** Each task's envs: anchor slots, evaluation slots (the anchor slots where they are as many), world-model slots. */
async function openEnvs(setup: TrainSetup, cfg: TrainConfig, flags: Run['flags'], hooks: TrainHooks, parts: number) {
  // anchors get as many physics slots as they have rollouts (idle slots would still step), evaluation its own
  const mixed = (flags.model && flags.anchors) || flags.branchPhysics;
  const anchorCount = mixed
    ? Math.min(cfg.groupsPerIteration, Math.max(cfg.minAnchors, Math.round(cfg.anchorShare * cfg.groupsPerIteration)))
    : flags.anchors
      ? cfg.groupsPerIteration
      : 0;
  // real-branch runs its branched groups (and the replays to their branch points) in these slots too
  const anchorSlots = flags.branchPhysics
    ? cfg.numEnvs
    : Math.min(cfg.numEnvs, anchorCount * Math.ceil(cfg.groupSize / parts));
  const envs = await Promise.all(
    setup.tasks.map(async (t) => {
      // remote anchors need none here, but real-branch replays anchors here to its branch points
      const real = anchorCount > 0 && (!hooks.transport || flags.branchPhysics) ? await t.makeReal(anchorSlots) : null;
      const evalEnv =
        cfg.evalEvery > 0 ? (real && anchorSlots === cfg.numEnvs ? real : await t.makeReal(cfg.numEnvs)) : null;
      return { real, eval: evalEnv, model: flags.model ? await t.makeModel!(cfg.numEnvs) : null };
    }),
  );
  return { anchorCount, envs };
}

/** Closes each task's envs (the evaluation slots once where they are the anchor slots), the samplers and the trainer. */
export async function closeRun(r: Run): Promise<void> {
  for (const e of r.envs) {
    e.real?.close();
    if (e.eval !== e.real) e.eval?.close();
    e.model?.close();
  }
  await Promise.all([r.sampler.close(), r.refSampler.close(), r.trainer.close()]);
  await r.split?.close(); // after the trainer, whose update slices live on the helpers
}

export function newIteration(r: Run, it: number): Iteration {
  const clock = { physics: 0, model: 0, training: 0, refresh: 0, eval: 0, fidelity: 0, policy: 0 };
  const { setup, cfg } = r;
  const request = {
    run: r.id,
    tasks: setup.tasks,
    policy: { config: setup.policy.config, params: r.trainer.params() },
    worldModel: setup.worldModel,
    seed: cfg.seed,
    samplesPerRollout: cfg.samplesPerRollout,
    temperature: cfg.temperature,
    clock,
  };
  return { it, clock, rollouts: new Map(), request };
}

export async function timed<T>(i: Iteration, key: keyof Clock, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  try {
    return await f();
  } finally {
    i.clock[key] += (performance.now() - t0) / 1000;
  }
}

/** The run's config.json and metrics file (a resume keeps the lines up to its checkpoint), then the run
 *  opened from the checkpoint or fresh. */
export async function openOrResume(
  setup: TrainSetup,
  cfg: TrainConfig,
  runDir: string,
  opts: { resume?: boolean } & TrainHooks,
) {
  if (modeFlags(cfg.mode).model && setup.tasks.some((t) => !t.makeModel))
    throw new InputError(`--mode ${cfg.mode}: every task needs a world model`);
  checkModelReward(cfg, setup.tasks);
  // what must match for a resume (the iteration count may grow; slots and threads decide no result)
  const { iterations: _i, numEnvs: _n, threads: _t, helpers: _h, checkpointEvery: _c, ...key } = cfg;
  const runKey = { config: JSON.parse(canonicalJson(key)), tasks: setup.tasks.map((t) => t.id) };
  const metricsPath = join(runDir, 'metrics.jsonl');
  // every random draw derives from (seed, iteration, ...): the state below is all a resume needs
  const ck = resumeCheckpoint(runDir, runKey, opts.resume, loadCheckpoint);
  if (ck) checkCheckpointPolicy(runDir, ck, setup.policy.config);
  const resumed = ck ? restoreState(runDir, ck) : null;
  const reference = ck?.extra.reference ?? setup.policy.params;
  const start = ck?.step ?? 0;
  if (!ck)
    commitFiles([
      { path: join(runDir, 'config.json'), data: `${JSON.stringify({ config: cfg, tasks: runKey.tasks }, null, 2)}\n` },
    ]);
  startMetrics(metricsPath, ck ? start : null);
  const r = await openRun(
    setup,
    cfg,
    {
      id: hashOf(canonicalJson(runKey), resolve(runDir)),
      state: resumed?.state ?? freshState(cfg, setup.tasks.length),
      params: ck?.params ?? setup.policy.params,
      reference,
      optimizer: ck?.optimizer,
      replay: resumed?.replay ?? null,
      model: resumed?.model ?? null,
    },
    opts,
  );
  return { r, runKey, reference, start, metricsPath };
}
