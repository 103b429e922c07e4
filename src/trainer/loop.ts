// The WMRL loop (docs/trainer.md), top to bottom like CleanRL's ppo.py. Per iteration: plan the groups
// (anchors in physics, the rest in the world model), roll them out, grade the anchors in the world model
// too, feed the debiaser and the denoiser, standardise rewards per group, and take PPO steps on the
// sampled tokens. Generic over envs: the tasks arrive as factories; nothing here knows the tabletop.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { hashOf } from '../core/hash.ts';
import { DRAW, Rng } from '../core/rng.ts';
import { InputError } from '../core/errors.ts';
import { canonicalJson, jsonLine } from '../core/spec.ts';
import type { Env } from '../env/types.ts';
import { loadTrainCheckpoint, saveTrainCheckpoint } from '../nn/checkpoint-file.ts';
import type { ParamStore } from '../nn/params.ts';
import { savePolicy } from '../policy/model.ts';
import { PolicySampler } from '../policy/sampler.ts';
import type { VlaConfig } from '../policy/vla.ts';
import { checkpointDue, commitFiles, resumeCheckpoint, startMetrics } from '../store/index.ts';
import { Advantages } from './advantages.ts';
import { modeFlags, type TrainConfig } from './config.ts';
import { debiasThenDenoise } from './calibrate.ts';
import { Debiaser } from './debias.ts';
import { Denoiser } from './denoise.ts';
import { PolicyTrainer, type PolicySample } from './policy-trainer.ts';
import { type BranchPoint, type Branching, type GradedSegment, type GroupJob, type Rollout, branchPoints, gradeSegments, jointLogp } from './rollouts.ts';
import { fidelity, evaluate } from './measure.ts';
import { StartSelector } from './starts.ts';
import { HybridWeights } from './hybrid.ts';
import { InProcessTransport, type RolloutTransport } from './transport.ts';
import { type RealEpisode, type RefreshableModel, packEpisodes, packModelState, unpackEpisodes, unpackModelState } from './refresh-state.ts';

/** One task the policy trains on: its engines and its seeds. */
export interface TrainTask {
  id: string;
  /** The exact engine (physics): anchors and evaluation. */
  makeReal(numEnvs: number): Promise<Env>;
  /** The learned engine with the same spec (world-model groups, grading of anchors). */
  makeModel?(numEnvs: number): Promise<Env>;
  /** Lets world-model groups start from real states visited by anchors (else whole episodes only). */
  branching?: Branching;
  /** Env seed of training start k (train split) and of evaluation episode k (held-out split). */
  trainSeed(k: number): number;
  evalSeed(k: number): number;
  /** What a worker process needs to build this task's real engine (JSON; src/experiment resolves it). */
  remote?: Record<string, unknown>;
}

export interface TrainSetup {
  tasks: TrainTask[];
  /** The policy to post-train; its initial parameters are also the KL reference. specHash: the env
   *  interface it was made for (copied into the trained policy file). */
  policy: { config: VlaConfig; params: ParamStore; specHash: string };
  /** The world model behind every task's makeModel, when it can be refreshed from anchors. */
  worldModel?: RefreshableModel;
}

export interface TrainHooks {
  /** Where anchor groups run (default: in this process). */
  transport?: RolloutTransport;
  /** Where world-model groups run (default: in this process; elsewhere needs the model's snapshot). */
  modelTransport?: RolloutTransport;
  onIteration?(metrics: Record<string, number>): void;
  /** The policy's parameters after an iteration's update (for evaluations outside the loop). */
  onPolicy?(iteration: number, params: ParamStore): void;
  /** Checked between iterations (Ctrl-C): true stops after writing a checkpoint. */
  shouldStop?(): boolean;
}

const CHECKPOINT_FORMAT = 'wmrl-train-checkpoint/2';
const START_RANGE = 1_000_000;

/** Trains in `runDir` (config.json, metrics.jsonl, checkpoint, and policy.onnx at the end); `resume`
 *  continues its checkpoint exactly. */
export async function train(setup: TrainSetup, cfg: TrainConfig, runDir: string, opts: { resume?: boolean } & TrainHooks = {}): Promise<{ iterations: number; params: ParamStore }> {
  const flags = modeFlags(cfg.mode);
  if (flags.model && setup.tasks.some((t) => !t.makeModel)) throw new InputError(`--mode ${cfg.mode}: every task needs a world model`);
  // what must match for a resume (the iteration count may grow; slots and threads decide no result)
  const { iterations: _i, numEnvs: _n, threads: _t, checkpointEvery: _c, ...key } = cfg;
  const run = { config: JSON.parse(canonicalJson(key)), tasks: setup.tasks.map((t) => t.id) };
  const metricsPath = join(runDir, 'metrics.jsonl');

  // state: policy, optimizer, reference, corrections; every random draw derives from (seed, iteration, ...)
  const ck = resumeCheckpoint(runDir, run, opts.resume, (dir) => loadTrainCheckpoint(dir, CHECKPOINT_FORMAT));
  const info = ck?.info as { debias: unknown; denoise: unknown; advantages: unknown; starts: unknown; hybrid: unknown; totals: { physicsSteps: number; modelSteps: number; refreshes: number }; pool: BranchPoint[];
    refresh: { episodes: Parameters<typeof unpackEpisodes>[1]; model: Parameters<typeof unpackModelState>[1] | null } } | undefined;
  const debiaser = info ? Debiaser.fromState(info.debias) : new Debiaser(cfg.debias);
  const denoiser = info ? Denoiser.fromState(info.denoise) : new Denoiser(cfg.denoise);
  const advantages = info ? Advantages.fromState(info.advantages) : new Advantages(cfg.advantages);
  const starts = info ? StartSelector.fromState(info.starts) : new StartSelector(cfg.starts, setup.tasks.length);
  const hybrid = info ? HybridWeights.fromState(info.hybrid) : new HybridWeights(cfg.hybrid);
  const totals = info ? { ...info.totals } : { physicsSteps: 0, modelSteps: 0, refreshes: 0 };
  const pool: BranchPoint[] = info ? info.pool : []; // FIFO of real states recent anchors visited
  const params = ck?.params ?? setup.policy.params;
  const reference = ck?.extra.reference ?? setup.policy.params;
  const start = ck?.step ?? 0;
  if (!ck) commitFiles([{ path: join(runDir, 'config.json'), data: `${JSON.stringify({ config: cfg, tasks: run.tasks }, null, 2)}\n` }]);
  startMetrics(metricsPath, ck ? start : null);
  const runId = hashOf(canonicalJson(run), resolve(runDir));
  const runtime = { threads: cfg.threads };
  const sampler = await PolicySampler.create(setup.policy.config, params, runtime);
  const refSampler = await PolicySampler.create(setup.policy.config, reference, runtime);
  const trainer = await PolicyTrainer.create(setup.policy.config, params, { batch: cfg.batch, lr: cfg.lr, weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm, coefficients: { clip: cfg.clip, klCoef: cfg.klCoef, entropyCoef: cfg.entropyCoef }, runtime });
  if (ck) trainer.importOptimizer(ck.optimizer);
  // anchors get as many physics slots as they have rollouts (idle slots would still step), evaluation its own
  const anchorCount = !flags.model ? cfg.groupsPerIteration : !flags.anchors ? 0 : Math.min(cfg.groupsPerIteration, Math.max(cfg.minAnchors, Math.round(cfg.anchorShare * cfg.groupsPerIteration)));
  const anchorSlots = Math.min(cfg.numEnvs, anchorCount * cfg.groupSize);
  const envs = await Promise.all(setup.tasks.map(async (t) => {
    const real = anchorCount > 0 && !opts.transport ? await t.makeReal(anchorSlots) : null; // remote anchors need none here
    const evalEnv = cfg.evalEvery > 0 ? (real && anchorSlots === cfg.numEnvs ? real : await t.makeReal(cfg.numEnvs)) : null;
    return { real, eval: evalEnv, model: flags.model ? await t.makeModel!(cfg.numEnvs) : null };
  }));
  const local = new InProcessTransport(envs, sampler);
  const transport = opts.transport ?? local;
  const modelTransport = opts.modelTransport ?? local;
  if (opts.modelTransport && !setup.worldModel?.snapshot) throw new InputError('world-model groups on workers: this world model has no snapshot to send');
  // the refresh buffer: every anchor episode since the start (a fifth held out to choose the weights kept)
  const refreshing = flags.model && flags.anchors && cfg.refreshEvery > 0 ? setup.worldModel : undefined;
  const buffer: (RealEpisode & { validation: boolean })[] = info && ck ? unpackEpisodes(ck.extra.refreshBuffer, info.refresh.episodes) : [];
  if (refreshing && buffer.length) {
    for (const validation of [false, true]) refreshing.addEpisodes(buffer.filter((e) => e.validation === validation), { validation });
    if (info!.refresh.model) await refreshing.restore(unpackModelState(ck!.extra, info!.refresh.model));
  }
  const save = (iteration: number) => {
    const episodes = packEpisodes(buffer);
    const model = refreshing && totals.refreshes > 0 ? packModelState(refreshing.exportState()) : null;
    saveTrainCheckpoint(runDir, CHECKPOINT_FORMAT, {
      step: iteration, run, params: trainer.params(), optimizer: trainer.exportOptimizer(), extra: { reference, refreshBuffer: episodes.store, ...model?.stores },
      info: { debias: debiaser.toState(), denoise: denoiser.toState(), advantages: advantages.toState(), starts: starts.toState(), hybrid: hybrid.toState(), totals, pool, refresh: { episodes: episodes.meta, model: model?.info ?? null } },
    });
  };

  let done = start;
  try {
    for (let it = start; it < cfg.iterations; it++) {
      const m: Record<string, number> = { iteration: it + 1 };
      const clock = { physics: 0, model: 0, training: 0, refresh: 0, eval: 0, fidelity: 0, policy: 0 };
      const timed = async <T>(key: keyof typeof clock, f: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        try { return await f(); } finally { clock[key] += (performance.now() - t0) / 1000; }
      };
      const groupKeys = (g: number) => Array.from({ length: cfg.groupSize }, (_, k) => (it * cfg.groupsPerIteration + g) * cfg.groupSize + k);
      const rollouts = new Map<GroupJob, Rollout[]>();
      const request = { run: runId, tasks: setup.tasks, policy: { config: setup.policy.config, params: trainer.params() }, worldModel: setup.worldModel, seed: cfg.seed, samplesPerRollout: cfg.samplesPerRollout, clock };
      const steps = (groups: Rollout[][]) => groups.flat().reduce((n, r) => n + r.length, 0);

      // 1. anchors in physics: whole episodes from train-split initial states, each task's groups in one batch
      const anchors: GroupJob[] = Array.from({ length: anchorCount }, (_, g) => {
        const rng = new Rng([cfg.seed, it, g], DRAW.groupStart);
        const task = rng.int(setup.tasks.length);
        const startIndex = starts.drawStart(rng, task, START_RANGE);
        return { kind: 'anchor', task, start: setup.tasks[task].trainSeed(startIndex), startIndex, keys: groupKeys(g) };
      });
      if (anchors.length) {
        const groups = await timed('physics', () => transport.run({ ...request, engine: 'real', jobs: anchors }));
        totals.physicsSteps += steps(groups);
        anchors.forEach((j, k) => rollouts.set(j, groups[k]));
      }
      for (const j of anchors) {
        const rs = rollouts.get(j)!;
        starts.observe(j.task, j.startIndex!, START_RANGE, rs.filter((r) => r.success).length, rs.length);
        const { branching } = setup.tasks[j.task];
        for (const r of rs) if (r.states && branching) pool.push(...branchPoints(j.task, r, cfg.branchEvery, { horizon: cfg.horizon, progress: branching.progress }));
      }
      pool.splice(0, Math.max(0, pool.length - cfg.branchPool));

      // 1b. the world-model refresh: anchor transitions in, retraining every refreshEvery physics steps
      let refreshed: Awaited<ReturnType<RefreshableModel['refresh']>> | null = null;
      if (refreshing) {
        const fresh = anchors.flatMap((j) => rollouts.get(j)!.map((r) => ({ taskId: setup.tasks[j.task].id, seed: r.seed, policy: 'anchor', length: r.length, states: r.states!, actions: r.actions, validation: r.key % 5 === 0 })));
        buffer.push(...fresh);
        for (const validation of [false, true]) refreshing.addEpisodes(fresh.filter((e) => e.validation === validation), { validation });
        const before = totals.physicsSteps - fresh.reduce((n, e) => n + e.length, 0);
        if (Math.floor(totals.physicsSteps / cfg.refreshEvery) > Math.floor(before / cfg.refreshEvery)) {
          refreshed = await timed('refresh', () => refreshing.refresh({ steps: cfg.refreshSteps, lr: cfg.refreshLr }));
          totals.refreshes++;
        }
      }

      // 2. anchors graded by the world model the way its groups run (segments from their states, their own
      //    actions; whole episodes for the initial-state share), then 3. debias, 4. denoise on f(r_wm)
      const graded = new Map<GroupJob, GradedSegment[]>();
      if (flags.model) {
        for (const j of anchors) {
          const { branching } = setup.tasks[j.task];
          const forms = [branching && cfg.branchShare > 0 ? { every: cfg.branchEvery, horizon: cfg.horizon } : null, !branching || cfg.branchShare < 1 ? { every: Infinity, horizon: Infinity } : null];
          const segs: GradedSegment[] = [];
          for (const form of forms) if (form) segs.push(...(await timed('model', () => gradeSegments(envs[j.task].model!, branching, rollouts.get(j)!, form))));
          totals.modelSteps += segs.reduce((n, sg) => n + sg.steps, 0);
          graded.set(j, segs);
        }
      }
      const f = debiasThenDenoise(debiaser, denoiser, [...graded.values()], flags.debias);
      if (flags.model && flags.anchors && cfg.fidelityEvery > 0 && (it + 1) % cfg.fidelityEvery === 0) {
        Object.assign(m, await timed('fidelity', () => fidelity(setup.tasks, envs.map((e) => e.model!), anchors.map((j) => ({ task: j.task, rollouts: rollouts.get(j)! })), cfg)));
      }

      // 5. world-model groups: G rollouts from a real state of a recent anchor (horizon H) or, for the
      //    rest, from a train-split initial state (whole episode)
      const models: GroupJob[] = Array.from({ length: cfg.groupsPerIteration - anchorCount }, (_, k) => {
        const g = anchorCount + k;
        const rng = new Rng([cfg.seed, it, g], DRAW.groupStart);
        const task = rng.int(setup.tasks.length);
        const startIndex = starts.drawStart(rng, task, START_RANGE);
        if (!(pool.length && rng.uniform() < cfg.branchShare)) return { kind: 'model', task, start: setup.tasks[task].trainSeed(startIndex), startIndex, keys: groupKeys(g) };
        const branch = starts.drawPoint(rng, pool);
        return { kind: 'model', task: branch.task, start: branch.seed, keys: groupKeys(g), branch, horizon: cfg.horizon };
      });
      if (models.length) {
        const groups = await timed('model', () => modelTransport.run({ ...request, engine: 'model', jobs: models }));
        totals.modelSteps += steps(groups);
        models.forEach((j, k) => rollouts.set(j, groups[k]));
      }
      const jobs = [...anchors, ...models];

      // 6. advantages per group: anchors on r_env (weighted by w), model groups on f(r_wm)
      const w = flags.denoise ? denoiser.weight : 1;
      const samples: PolicySample[] = [];
      const zeroVariance = { anchor: 0, model: 0 };
      let threeValued = 0; // world-model groups with >= 3 distinct rewards: the only ones a monotone map can change after z-scoring
      const rows = (kind: string) => jobs.filter((j) => j.kind === kind).reduce((n, j) => n + rollouts.get(j)!.reduce((s, r) => s + r.samples.length, 0), 0);
      const rowWeight = hybrid.weights(rows('anchor'), rows('model'));
      for (const j of jobs) {
        const rs = rollouts.get(j)!;
        const rewards = rs.map((r) => r.reward);
        const a = j.kind === 'anchor' ? advantages.group(rewards, { groupWeight: w }) : advantages.worldModelGroup(rewards, f, { rewardVars: rs.map((r) => r.rewardVar) });
        if (a.zeroVariance) zeroVariance[j.kind]++;
        if (j.kind === 'model' && new Set(rewards).size >= 3) threeValued++;
        rs.forEach((r, k) => { for (const s of r.samples) samples.push({ ...s, refLogp: 0, advantage: a.advantages[k], weight: rowWeight[j.kind] }); });
      }

      // 7. PPO on the sampled tokens (reference log-probs from the frozen base policy)
      const losses = await timed('training', async () => {
        const ref = samples.length ? await jointLogp(refSampler, samples) : [];
        samples.forEach((s, k) => (s.refLogp = ref[k]));
        const acc = { policy: 0, kl: 0, entropy: 0, clipFraction: 0, logpGap: 0, steps: 0 };
        for (let epoch = 0; epoch < cfg.epochs; epoch++) {
          const order = new Rng([cfg.seed, it, epoch], DRAW.groupStart + 1).shuffle(samples.map((_, k) => k));
          for (let at = 0; at < order.length; at += cfg.batch) {
            const r = await trainer.step(order.slice(at, at + cfg.batch).map((k) => samples[k]));
            acc.policy += r.policyLoss; acc.kl += r.kl; acc.entropy += r.entropy; acc.clipFraction += r.clipFraction; acc.steps++;
            if (epoch === 0 && at === 0) acc.logpGap = r.logpGap;
          }
        }
        await sampler.update(trainer.params());
        return acc;
      });

      // 8. held-out evaluation in physics, off the training clock (the first line also has the policy's before training)
      if (cfg.evalEvery > 0 && it === 0) {
        const before = await timed('eval', () => evaluate(setup.tasks, envs.map((e) => e.eval!), refSampler, cfg));
        for (const [k, v] of Object.entries(before)) m[k.replace('eval/', 'eval_initial/')] = v;
      }
      if (cfg.evalEvery > 0 && (it + 1) % cfg.evalEvery === 0) Object.assign(m, await timed('eval', () => evaluate(setup.tasks, envs.map((e) => e.eval!), sampler, cfg)));

      // 9. log (namespaced scalars) and checkpoint
      const all = [...rollouts.entries()];
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
      const of = (kind: string, v: (r: Rollout) => number) => all.filter(([j]) => j.kind === kind).flatMap(([, rs]) => rs.map(v));
      const dr = debiaser.report();
      const dn = denoiser.report();
      Object.assign(m, {
        'reward/anchor': mean(of('anchor', (r) => r.reward)), 'reward/wm': mean(of('model', (r) => r.reward)),
        'success/anchor': mean(of('anchor', (r) => +r.success)), 'success/wm': mean(of('model', (r) => +r.success)),
        'groups/anchor': anchors.length, 'groups/wm': jobs.length - anchors.length, 'groups/zero_variance': zeroVariance.anchor + zeroVariance.model,
        'groups/zero_variance_anchor': zeroVariance.anchor, 'groups/zero_variance_wm': zeroVariance.model, 'groups/wm_three_valued': threeValued, 'hybrid/anchor_weight': rowWeight.anchor, 'hybrid/wm_weight': rowWeight.model,
        'steps/physics': totals.physicsSteps, 'steps/world_model': totals.modelSteps,
        'debias/pairs': dr.pairs, 'debias/bias_before': dr.biasBefore ?? 0, 'debias/bias_after': dr.biasAfter ?? 0,
        'denoise/w': w, 'denoise/eta2': dn.eta2 ?? 0,
        'losses/policy': losses.policy / Math.max(1, losses.steps), 'losses/kl': losses.kl / Math.max(1, losses.steps),
        'losses/entropy': losses.entropy / Math.max(1, losses.steps), 'losses/clip_fraction': losses.clipFraction / Math.max(1, losses.steps),
        'losses/logp_gap': losses.logpGap, 'samples/rows': samples.length,
        'groups/branched': models.filter((j) => j.branch).length, 'branch/pool': pool.length,
        'refresh/count': totals.refreshes, 'refresh/transitions': refreshed?.transitions ?? 0, 'refresh/val_mse': refreshed?.bestValMse ?? 0,
        'time/physics_s': clock.physics, 'time/world_model_s': clock.model, 'time/training_s': clock.training, 'time/refresh_s': clock.refresh, 'time/eval_s': clock.eval, 'time/fidelity_s': clock.fidelity,
        'time/policy_inference_s': clock.policy, // part of the physics and world-model times
      });
      m.step = it + 1;
      writeFileSync(metricsPath, jsonLine(m), { flag: 'a' });
      opts.onIteration?.(m);
      opts.onPolicy?.(it + 1, trainer.params());
      done = it + 1;
      const stopping = opts.shouldStop?.() ?? false;
      if (checkpointDue(it + 1, cfg.checkpointEvery, cfg.iterations, stopping)) save(it + 1);
      if (stopping) break;
    }
    const final = trainer.params();
    await savePolicy(join(runDir, 'policy.onnx'), setup.policy.config, final, { provenance: { producer: 'wmrl train', seed: cfg.seed, steps: trainer.stepCount, notes: `${cfg.mode}, ${done} of ${cfg.iterations} iterations` }, specHash: setup.policy.specHash });
    return { iterations: done, params: final };
  } finally {
    for (const e of envs) { e.real?.close(); if (e.eval !== e.real) e.eval?.close(); e.model?.close(); }
    await Promise.all([sampler.close(), refSampler.close(), trainer.close()]);
  }
}
