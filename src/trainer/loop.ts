// The WMRL loop, top to bottom like CleanRL's ppo.py: open the run (or resume it), then per iteration
// the steps of docs/trainer.md: 1-2. anchor groups in physics and their branch points, 3. the
// world-model refresh, 4. the anchors graded by the world model (debias, then denoise), 5. world-model
// groups, 6. advantages per group, 7. PPO steps on the sampled tokens, 8. measurements off the training
// clock; then the metrics line and the checkpoint. Generic over envs: the tasks arrive as factories;
// nothing here knows the tabletop. The run (samplers, envs, transports) and an iteration's clock are
// opened (or resumed) in run.ts; the metrics line is assembled in metrics-row.ts.
import { join } from 'node:path';
import { type EvalMetrics, type FidelityMetrics, type InitialEvalMetrics, initialEval } from '../core/metrics.ts';
import { DRAW, Rng } from '../core/rng.ts';
import type { ParamStore } from '../nn/params.ts';
import { savePolicy } from '../policy/model.ts';
import type { PolicySampler } from '../policy/sampler.ts';
import { appendMetrics, checkpointDue } from '../store/index.ts';
import { applyPmi, relabelSamples } from './agentbrew.ts';
import { changesAdvantages, standardise } from './advantages.ts';
import { debiasThenDenoise } from './calibrate.ts';
import type { Debiaser } from './debias.ts';
import { saveCheckpoint } from './checkpoint.ts';
import type { TrainConfig } from './config.ts';
import { fidelity, evaluate } from './measure.ts';
import { type Batch, type Losses, metricsRow } from './metrics-row.ts';
import type { PolicySample } from './policy-trainer.ts';
import type { RefreshableModel } from './refresh-state.ts';
import { repeatPenalty } from './repeat.ts';
import { recordSamples, recordsSamples } from './samples.ts';
import { drawStart, exactBranches, expertBranch, groupKeys, startCurriculum } from './group-start.ts';
import { type GradedSegment, type GroupJob, type Rollout, branchPoints, gradeSegments, jointLogp } from './rollouts.ts';
import { type Iteration, type Run, closeRun, newIteration, openOrResume, timed } from './run.ts';
import type { TrainHooks, TrainSetup } from './types.ts';

/** Trains in `runDir` (config.json, metrics.jsonl, checkpoint, and policy.onnx at the end); `resume`
 *  continues its checkpoint exactly. */
export async function train(
  setup: TrainSetup,
  cfg: TrainConfig,
  runDir: string,
  opts: { resume?: boolean } & TrainHooks = {},
): Promise<{ iterations: number; params: ParamStore }> {
  const { r, runKey, reference, start, metricsPath } = await openOrResume(setup, cfg, runDir, opts);
  let done = start;
  try {
    for (let it = start; it < cfg.iterations; it++) {
      const i = newIteration(r, it);
      const anchors = await anchorGroups(r, i);
      const refreshed = await refresh(r, i, anchors);
      const f = await gradeAnchors(r, i, anchors);
      const measured = await measureFidelity(r, i, anchors);
      const models = await worldModelGroups(r, i, range(r.anchorCount, cfg.groupsPerIteration));
      models.push(...(await refill(r, i, [...anchors, ...models], f)));
      const batch = groupAdvantages(r, i, [...anchors, ...models], f);
      const relabelled = await agentBrew(r, i, anchors, batch);
      const losses = await update(r, i, batch.samples);
      const evals = await evaluation(r, i, runDir);
      const row = metricsRow(r, i, { anchors, models, batch, relabelled, losses, refreshed, measured, evals });
      appendMetrics(metricsPath, row);
      opts.onIteration?.(row);
      opts.onPolicy?.(it + 1, r.trainer.params());
      done = it + 1;
      const stopping = opts.shouldStop?.() ?? false;
      if (checkpointDue(it + 1, cfg.checkpointEvery, cfg.iterations, stopping)) {
        const t0 = performance.now();
        saveCheckpoint(runDir, {
          step: it + 1,
          run: runKey,
          trainer: r.trainer,
          reference,
          state: r.state,
          refreshing: r.refreshing,
        });
        opts.onCheckpoint?.(it + 1, (performance.now() - t0) / 1000);
      }
      if (stopping) break;
    }
    const final = r.trainer.params();
    await savePolicy(join(runDir, 'policy.onnx'), setup.policy.config, final, {
      provenance: {
        producer: 'wmrl train',
        seed: cfg.seed,
        steps: r.trainer.stepCount,
        notes: `${cfg.mode}, ${done} of ${cfg.iterations} iterations`,
      },
      specHash: setup.policy.specHash,
    });
    return { iterations: done, params: final };
  } finally {
    await closeRun(r);
  }
}

const steps = (groups: Rollout[][]) => groups.flat().reduce((n, x) => n + x.length, 0);

/** 1-2. Anchors in physics: whole episodes from train-split initial states, each task's groups in one
 *  batch; their outcomes go to start selection and their visited states to the branch pool. */
async function anchorGroups(r: Run, i: Iteration): Promise<GroupJob[]> {
  const { cfg, setup, state } = r;
  const anchors: GroupJob[] = [];
  for (let g = 0; g < r.anchorCount; g++) {
    const { task, startIndex, level } = drawStart(r, i, g);
    const start = setup.tasks[task].trainSeed(startIndex);
    const job: GroupJob = { kind: 'anchor', task, start, startIndex, keys: groupKeys(r, i, g) };
    if (level !== null) {
      job.level = level;
      job.branch = await expertBranch(r, i, task, start, level, true);
    }
    anchors.push(job);
  }
  if (anchors.length) {
    const groups = await timed(i, 'physics', () => r.transport.run({ ...i.request, engine: 'real', jobs: anchors }));
    state.totals.physicsSteps += steps(groups);
    state.totals.anchorSteps += steps(groups);
    anchors.forEach((j, k) => i.rollouts.set(j, groups[k]));
  }
  for (const j of anchors) {
    const rs = i.rollouts.get(j)!;
    const task = setup.tasks[j.task];
    if (j.level === undefined)
      state.starts.observe(j.task, j.startIndex!, task.trainStarts, rs.filter((x) => x.success).length, rs.length);
    const successes = rs.map((x) => x.success);
    startCurriculum(state).observe(j.task, j.level ?? null, successes);
    if (!task.branching) continue;
    const moved = { horizon: cfg.horizon, progress: task.branching.progress };
    // real-branch replays the anchor to its points, from its own start
    const origin = r.flags.branchPhysics ? { exact: j.branch?.exact } : undefined;
    for (const x of rs) if (x.states) state.pool.push(...branchPoints(j.task, x, cfg.branchEvery, moved, origin));
  }
  state.pool.splice(0, Math.max(0, state.pool.length - cfg.branchPool));
  return anchors;
}

/** 3. The world-model refresh: anchor episodes into its replay, retraining every refreshEvery new transitions. */
async function refresh(
  r: Run,
  i: Iteration,
  anchors: readonly GroupJob[],
): Promise<Awaited<ReturnType<RefreshableModel['refresh']>> | null> {
  const { refreshing, cfg, state } = r;
  if (!refreshing) return null;
  const fresh = anchors.flatMap((j) =>
    i.rollouts.get(j)!.map((x) => ({
      taskId: r.setup.tasks[j.task].id,
      seed: x.seed,
      policy: 'anchor',
      length: x.length,
      states: x.states!,
      actions: x.actions,
      validation: x.key % 5 === 0,
    })),
  );
  for (const validation of [false, true])
    refreshing.addEpisodes(
      fresh.filter((e) => e.validation === validation),
      { validation },
    );
  const before = state.totals.anchorSteps - fresh.reduce((n, e) => n + e.length, 0);
  if (Math.floor(state.totals.anchorSteps / cfg.refreshEvery) <= Math.floor(before / cfg.refreshEvery)) return null;
  const refreshed = await timed(i, 'refresh', () => refreshing.refresh({ steps: cfg.refreshSteps, lr: cfg.refreshLr }));
  state.totals.refreshes++;
  return refreshed;
}

/** 4. Anchors graded by the world model the way its groups run (segments from their states, their own
 *  actions; whole episodes for the initial-state share), then debias and denoise on them. Returns the
 *  map f applied to a task's world-model rewards. */
async function gradeAnchors(r: Run, i: Iteration, anchors: readonly GroupJob[]): Promise<WorldModelMap> {
  const { cfg, state } = r;
  const debiaser = (task: number) => state.debiasers[cfg.debias.perTask ? task : 0];
  const graded: { debiaser: Debiaser; pairs: GradedSegment[] }[] = [];
  if (r.flags.model) {
    for (const j of anchors) {
      const { branching } = r.setup.tasks[j.task];
      const forms = [
        branching && cfg.branchShare > 0 ? { every: cfg.branchEvery, horizon: cfg.horizon } : null,
        !branching || cfg.branchShare < 1 ? { every: Infinity, horizon: Infinity } : null,
      ];
      const [model, rs, segs] = [r.envs[j.task].model!, i.rollouts.get(j)!, [] as GradedSegment[]];
      for (const form of forms)
        if (form) segs.push(...(await timed(i, 'model', () => gradeSegments(model, branching, rs, form))));
      state.totals.modelSteps += segs.reduce((n, sg) => n + sg.steps, 0);
      graded.push({ debiaser: debiaser(j.task), pairs: segs });
    }
  }
  debiasThenDenoise(state.denoiser, graded, r.flags.debias);
  return (task, x) => (r.flags.debias ? debiaser(task).map(x) : x);
}

/** The map of a task's world-model rewards (debiasing's f, or the identity). */
type WorldModelMap = (task: number, x: number) => number;

/** 8, on this iteration's anchors: the world model's reward fidelity every fidelityEvery iterations
 *  (off the training clock). */
async function measureFidelity(r: Run, i: Iteration, anchors: readonly GroupJob[]): Promise<FidelityMetrics> {
  const { cfg } = r;
  if (!(r.flags.model && r.flags.anchors && cfg.fidelityEvery > 0 && (i.it + 1) % cfg.fidelityEvery === 0)) return {};
  return timed(i, 'fidelity', () =>
    fidelity(
      r.setup.tasks,
      r.envs.map((e) => e.model!),
      anchors.map((j) => ({ task: j.task, rollouts: i.rollouts.get(j)! })),
      cfg,
    ),
  );
}

/** 5. World-model groups `indices` of the iteration: G rollouts from a real state of a recent anchor
 *  (horizon H) or, for the rest, from a train-split initial state (whole episode). real-branch runs these
 *  same groups in physics. */
async function worldModelGroups(r: Run, i: Iteration, indices: readonly number[]): Promise<GroupJob[]> {
  const { cfg, setup, state } = r;
  const physics = r.flags.branchPhysics;
  const clock = physics ? 'physics' : 'model';
  const models: GroupJob[] = [];
  for (const g of indices) {
    const { rng, task, startIndex, level } = drawStart(r, i, g);
    const keys = groupKeys(r, i, g);
    if (state.pool.length && rng.uniform() < cfg.branchShare) {
      const branch = state.starts.drawPoint(rng, state.pool);
      models.push({ kind: 'model', task: branch.task, start: branch.seed, keys, branch, horizon: cfg.horizon });
      continue;
    }
    const start = setup.tasks[task].trainSeed(startIndex);
    const job: GroupJob = { kind: 'model', task, start, startIndex, keys };
    if (level !== null) {
      job.level = level;
      job.branch = await expertBranch(r, i, task, start, level, physics);
    }
    models.push(job);
  }
  if (models.length) {
    if (physics) await exactBranches(r, i, models);
    const engine = physics ? ('real' as const) : ('model' as const);
    const request = { ...i.request, engine, jobs: models, recordStates: cfg.repeat.coef > 0 };
    const groups = await timed(i, clock, () => (physics ? r.transport : r.modelTransport).run(request));
    state.totals[physics ? 'physicsSteps' : 'modelSteps'] += steps(groups);
    models.forEach((j, k) => {
      i.rollouts.set(j, groups[k]);
      const successes = groups[k].map((x) => x.success);
      if (j.horizon) return;
      // with anchors on, the world model's verdicts move the curriculum only if its config says so
      const curriculum = startCurriculum(state);
      if (!r.flags.anchors || curriculum.config.worldModel) curriculum.observe(j.task, j.level ?? null, successes);
    });
  }
  return models;
}

/** 5b. Dynamic sampling: while equal-reward groups leave the batch short of informative ones, further
 *  world-model groups (indices after the iteration's own, keys of their own), as many per round as are
 *  missing, at most maxExtraGroups in all. Modes without world-model groups refill nothing. */
async function refill(r: Run, i: Iteration, jobs: readonly GroupJob[], map: WorldModelMap): Promise<GroupJob[]> {
  const { enabled, maxExtraGroups } = r.cfg.dynamicSampling;
  const n = r.cfg.groupsPerIteration;
  if (!enabled || r.anchorCount === n) return [];
  const extra: GroupJob[] = [];
  const equal = (js: readonly GroupJob[]) => js.filter((j) => equalRewards(r, i, j, map)).length;
  for (let missing = equal(jobs); missing > 0 && extra.length < maxExtraGroups; ) {
    const round = range(n + extra.length, n + Math.min(maxExtraGroups, extra.length + missing));
    const models = await worldModelGroups(r, i, round);
    extra.push(...models);
    missing = equal(models);
  }
  return extra;
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, k) => from + k);

/** Whether a group's rewards (less the repeat penalty; f(r_wm) for world-model groups) are all equal:
 *  the group's advantages are then all zero (groupAdvantages' zeroVariance). */
function equalRewards(r: Run, i: Iteration, j: GroupJob, map: WorldModelMap): boolean {
  const rewards = i.rollouts.get(j)!.map((x) => x.reward - repeatPenalty(x, r.cfg.repeat));
  const graded = j.kind === 'model' ? rewards.map((x) => map(j.task, x)) : rewards;
  const { eps, zeroVarTol } = r.state.advantages.config;
  return standardise(graded, eps, zeroVarTol).zeroVariance;
}

/** 6. Advantages per group: anchors on r_env (weighted by the denoiser's w), world-model groups on f(r_wm);
 *  both less the repeat penalty (before f for world-model rewards). */
function groupAdvantages(r: Run, i: Iteration, jobs: readonly GroupJob[], map: WorldModelMap): Batch {
  const { state } = r;
  const w = r.flags.denoise ? state.denoiser.weight : 1;
  const samples: PolicySample[] = [];
  const spans: Batch['spans'] = [];
  let penalty = 0;
  const zeroVariance = { anchor: 0, model: 0 };
  // world-model groups with >= 3 distinct rewards (the only ones a monotone map can change after
  // z-scoring), and those in which the debias map did change an advantage
  let threeValued = 0;
  let debiasChanged = 0;
  const rows = (kind: GroupJob['kind']) =>
    jobs
      .filter((j) => j.kind === kind)
      .reduce((n, j) => n + i.rollouts.get(j)!.reduce((s, x) => s + x.samples.length, 0), 0);
  const rowWeight = state.hybrid.weights(rows('anchor'), rows('model'));
  for (const j of jobs) {
    const rs = i.rollouts.get(j)!;
    const penalties = rs.map((x) => repeatPenalty(x, r.cfg.repeat));
    penalty += penalties.reduce((a, p) => a + p, 0);
    const rewards = rs.map((x, k) => x.reward - penalties[k]);
    const f = (x: number) => map(j.task, x);
    const a =
      j.kind === 'anchor'
        ? state.advantages.group(rewards, { groupWeight: w })
        : state.advantages.worldModelGroup(rewards, f, { rewardVars: rs.map((x) => x.rewardVar) });
    if (a.zeroVariance) zeroVariance[j.kind]++;
    if (j.kind === 'model' && new Set(rewards).size >= 3) threeValued++;
    if (j.kind === 'model' && r.flags.debias && changesAdvantages(rewards, f, state.advantages.config)) debiasChanged++;
    // an equal-reward group's rows carry only the KL and entropy terms: under dynamic sampling none
    // enters, otherwise a share of them, weighted by its inverse so that those terms keep their expectation
    if (a.zeroVariance && r.cfg.dynamicSampling.enabled) continue;
    const keep = a.zeroVariance ? r.cfg.equalRewardRows : 1;
    rs.forEach((x, k) => {
      const from = samples.length;
      x.samples.forEach((s, m) => {
        if (keep < 1 && new Rng([r.cfg.seed, i.it, x.key, m], DRAW.equalRewardRows).uniform() >= keep) return;
        samples.push({ ...s, refLogp: 0, advantage: a.advantages[k], weight: rowWeight[j.kind] / keep });
      });
      spans.push({ task: j.task, seed: x.seed, from, to: samples.length });
    });
  }
  return { w, samples, spans, zeroVariance, threeValued, debiasChanged, rowWeight, penalty };
}

/** 6b. AgentBrew: failed anchors whose final state satisfies another instruction of the family join the
 *  batch relabelled; then PMI credit scales every trajectory's step weights. Returns the relabels. */
async function agentBrew(r: Run, i: Iteration, anchors: readonly GroupJob[], batch: Batch): Promise<number> {
  const { cfg, setup } = r;
  let relabelled = 0;
  await timed(i, 'training', async () => {
    for (const j of anchors) {
      const instructions = setup.tasks[j.task].instructions;
      if (!cfg.agentBrew.relabel || !instructions) continue;
      for (const x of i.rollouts.get(j)!) {
        if (x.success || !x.states) continue;
        const last = x.states.subarray((x.length * x.states.length) / (x.length + 1));
        const [text] = instructions.satisfied(x.seed, last);
        if (text === undefined) continue;
        const from = batch.samples.length;
        const o = {
          advantage: cfg.agentBrew.relabelAdvantage,
          weight: batch.rowWeight.anchor,
          temperature: cfg.temperature,
        };
        batch.samples.push(...(await relabelSamples(r.sampler, x.samples, text, o)));
        batch.spans.push({ task: j.task, seed: x.seed, from, to: batch.samples.length });
        relabelled++;
      }
    }
    if (cfg.agentBrew.pmi) await applyPmi(r.sampler, batch.samples, batch.spans, (t) => setup.tasks[t].instructions);
  });
  return relabelled;
}

/** 7. PPO on the sampled tokens (reference log-probs from the frozen base policy); sums over the steps. */
async function update(r: Run, i: Iteration, samples: PolicySample[]): Promise<Losses> {
  const { cfg, trainer } = r;
  return timed(i, 'training', async () => {
    const ref = samples.length ? await jointLogp(r.refSampler, samples, cfg.temperature) : [];
    samples.forEach((s, k) => (s.refLogp = ref[k]));
    const acc = { policy: 0, kl: 0, entropy: 0, clipFraction: 0, logpGap: 0, steps: 0 };
    for (let epoch = 0; epoch < cfg.epochs; epoch++) {
      const order = new Rng([cfg.seed, i.it, epoch], DRAW.groupStart + 1).shuffle(samples.map((_, k) => k));
      for (let at = 0; at < order.length; at += cfg.batch) {
        const s = await trainer.step(order.slice(at, at + cfg.batch).map((k) => samples[k]));
        acc.policy += s.policyLoss;
        acc.kl += s.kl;
        acc.entropy += s.entropy;
        acc.clipFraction += s.clipFraction;
        acc.steps++;
        if (epoch === 0 && at === 0) acc.logpGap = s.logpGap;
      }
    }
    await r.sampler.update(trainer.params());
    return acc;
  });
}

/** 8. Held-out evaluation in physics, off the training clock (the first line also has the policy's before
 *  training); each evaluation also records the run's sample episodes into the run folder. */
async function evaluation(r: Run, i: Iteration, runDir: string): Promise<Partial<InitialEvalMetrics & EvalMetrics>> {
  const { cfg, setup } = r;
  if (cfg.evalEvery === 0) return {};
  const run = (sampler: PolicySampler, iteration: number): Promise<EvalMetrics> =>
    timed(i, 'eval', async () => {
      const envs = r.envs.map((e) => e.eval!);
      const { metrics, first } = await evaluate(setup.tasks, envs, sampler, cfg, recordsSamples(setup.tasks));
      await recordSamples({ runDir, tasks: setup.tasks, envs: r.envs, sampler, cfg, iteration }, first);
      return metrics;
    });
  const before = i.it === 0 ? initialEval(await run(r.refSampler, 0)) : {};
  const now = (i.it + 1) % cfg.evalEvery === 0 ? await run(r.sampler, i.it + 1) : {};
  return { ...before, ...now };
}
