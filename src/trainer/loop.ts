// The WMRL loop (design section 7), top to bottom like CleanRL's ppo.py. Per iteration: plan the groups
// (anchors in physics, the rest in the world model), roll them out, grade the anchors in the world model
// too, feed the debiaser and the denoiser, standardise rewards per group, and take PPO steps on the
// sampled tokens. Generic over envs: the tasks arrive as factories; nothing here knows the tabletop.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DRAW, Rng } from '../core/rng.ts';
import { InputError } from '../core/errors.ts';
import { canonicalJson, jsonLine } from '../core/spec.ts';
import { wilson } from '../core/stats.ts';
import type { Env } from '../env/types.ts';
import { hasCheckpoint, loadTrainCheckpoint, saveTrainCheckpoint } from '../nn/checkpoint-file.ts';
import type { ParamStore } from '../nn/params.ts';
import { savePolicy } from '../policy/model.ts';
import { PolicySampler, samplerPolicy } from '../policy/sampler.ts';
import type { VlaConfig } from '../policy/vla.ts';
import { collectEpisodes } from '../rollout/index.ts';
import { commitFiles, truncateMetrics } from '../store/index.ts';
import { Advantages } from './advantages.ts';
import { modeFlags, type TrainConfig } from './config.ts';
import { Debiaser } from './debias.ts';
import { Denoiser } from './denoise.ts';
import { PolicyTrainer, type PolicySample } from './policy-trainer.ts';
import { type GroupJob, type Rollout, gradeInModel, jointLogp, runGroups } from './rollouts.ts';

/** One task the policy trains on: its engines and its seeds. */
export interface TrainTask {
  id: string;
  /** The exact engine (physics): anchors and evaluation. */
  makeReal(numEnvs: number): Promise<Env>;
  /** The learned engine with the same spec (world-model groups, grading of anchors). */
  makeModel?(numEnvs: number): Promise<Env>;
  /** Env seed of training start k (train split) and of evaluation episode k (held-out split). */
  trainSeed(k: number): number;
  evalSeed(k: number): number;
}

export interface TrainSetup {
  tasks: TrainTask[];
  /** The policy to post-train; its initial parameters are also the KL reference. specHash: the env
   *  interface it was made for (copied into the trained policy file). */
  policy: { config: VlaConfig; params: ParamStore; specHash: string };
}

export interface TrainHooks {
  onIteration?(metrics: Record<string, number>): void;
  /** Checked between iterations (Ctrl-C): true stops after writing a checkpoint. */
  shouldStop?(): boolean;
}

const CHECKPOINT_FORMAT = 'wmrl-train-checkpoint/1';
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
  const ck = opts.resume ? loadCheckpoint(runDir, run) : null;
  const info = ck?.info as { debias: unknown; denoise: unknown; advantages: unknown; totals: { physicsSteps: number; modelSteps: number } } | undefined;
  const debiaser = info ? Debiaser.fromState(info.debias) : new Debiaser(cfg.debias);
  const denoiser = info ? Denoiser.fromState(info.denoise) : new Denoiser(cfg.denoise);
  const advantages = info ? Advantages.fromState(info.advantages) : new Advantages(cfg.advantages);
  const totals = info ? { ...info.totals } : { physicsSteps: 0, modelSteps: 0 };
  const params = ck?.params ?? setup.policy.params;
  const reference = ck?.extra.reference ?? setup.policy.params;
  const start = ck?.step ?? 0;
  if (ck) truncateMetrics(metricsPath, start);
  else {
    commitFiles([{ path: join(runDir, 'config.json'), data: `${JSON.stringify({ config: cfg, tasks: run.tasks }, null, 2)}\n` }]);
    writeFileSync(metricsPath, '');
  }
  const runtime = { threads: cfg.threads };
  const sampler = await PolicySampler.create(setup.policy.config, params, runtime);
  const refSampler = await PolicySampler.create(setup.policy.config, reference, runtime);
  const trainer = await PolicyTrainer.create(setup.policy.config, params, { batch: cfg.batch, lr: cfg.lr, weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm, coefficients: { clip: cfg.clip, klCoef: cfg.klCoef, entropyCoef: cfg.entropyCoef }, runtime });
  if (ck) trainer.importOptimizer(ck.optimizer);
  const envs = await Promise.all(setup.tasks.map(async (t) => ({ real: flags.anchors || cfg.evalEvery > 0 ? await t.makeReal(cfg.numEnvs) : null, model: flags.model ? await t.makeModel!(cfg.numEnvs) : null })));
  const save = (iteration: number) => saveTrainCheckpoint(runDir, CHECKPOINT_FORMAT, {
    step: iteration, run, params: trainer.params(), optimizer: trainer.exportOptimizer(), extra: { reference },
    info: { debias: debiaser.toState(), denoise: denoiser.toState(), advantages: advantages.toState(), totals },
  });

  let done = start;
  try {
    for (let it = start; it < cfg.iterations; it++) {
      const m: Record<string, number> = { iteration: it + 1 };
      const clock = { physics: 0, model: 0, training: 0, eval: 0 };
      const timed = async <T>(key: keyof typeof clock, f: () => Promise<T>): Promise<T> => {
        const t0 = performance.now();
        try { return await f(); } finally { clock[key] += (performance.now() - t0) / 1000; }
      };

      // 1. plan: which groups are anchors, their tasks and starts, one key per rollout
      const anchorCount = !flags.model ? cfg.groupsPerIteration : !flags.anchors ? 0 : Math.min(cfg.groupsPerIteration, Math.max(cfg.minAnchors, Math.round(cfg.anchorShare * cfg.groupsPerIteration)));
      const jobs: GroupJob[] = Array.from({ length: cfg.groupsPerIteration }, (_, g) => {
        const rng = new Rng([cfg.seed, it, g], DRAW.groupStart);
        const task = rng.int(setup.tasks.length);
        const first = (it * cfg.groupsPerIteration + g) * cfg.groupSize;
        return { kind: g < anchorCount ? 'anchor' : 'model', task, start: setup.tasks[task].trainSeed(rng.int(START_RANGE)), keys: Array.from({ length: cfg.groupSize }, (_, k) => first + k) };
      });

      // 2. roll out: anchors in physics, the rest in the world model, each task's groups in one batch
      const rollouts = new Map<GroupJob, Rollout[]>();
      for (const [t, e] of envs.entries()) {
        for (const kind of ['anchor', 'model'] as const) {
          const mine = jobs.filter((j) => j.task === t && j.kind === kind);
          if (!mine.length) continue;
          const env = kind === 'anchor' ? e.real! : e.model!;
          const groups = await timed(kind === 'anchor' ? 'physics' : 'model', () => runGroups(env, sampler, mine, { seed: cfg.seed, samplesPerRollout: cfg.samplesPerRollout }));
          mine.forEach((j, k) => rollouts.set(j, groups[k]));
          const steps = groups.flat().reduce((s, r) => s + r.length, 0);
          if (kind === 'anchor') totals.physicsSteps += steps;
          else totals.modelSteps += steps;
        }
      }

      // 3. anchors graded by the world model the way model groups are, then 4. debias, 5. denoise
      const anchors = jobs.filter((j) => j.kind === 'anchor');
      const graded = new Map<GroupJob, number[]>();
      for (const j of flags.model ? anchors : []) {
        const rs = rollouts.get(j)!;
        const rWm = await timed('model', () => gradeInModel(envs[j.task].model!, rs));
        graded.set(j, rWm);
        totals.modelSteps += rs.reduce((s, r) => s + r.length, 0);
        rs.forEach((r, k) => debiaser.add(rWm[k], r.reward));
      }
      const f = flags.debias ? (r: number) => debiaser.map(r) : (r: number) => r;
      for (const j of anchors) if (graded.has(j)) denoiser.observe(graded.get(j)!.map(f), rollouts.get(j)!.map((r) => r.reward));

      // 6. advantages per group: anchors on r_env (weighted by w), model groups on f(r_wm)
      const w = flags.denoise ? denoiser.weight : 1;
      const samples: PolicySample[] = [];
      let zeroVariance = 0;
      for (const j of jobs) {
        const rs = rollouts.get(j)!;
        const rewards = rs.map((r) => r.reward);
        const a = j.kind === 'anchor' ? advantages.group(rewards, { groupWeight: w }) : advantages.worldModelGroup(rewards, f);
        if (a.zeroVariance) zeroVariance++;
        rs.forEach((r, k) => { for (const s of r.samples) samples.push({ ...s, refLogp: 0, advantage: a.advantages[k], weight: 1 }); });
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

      // 8. held-out evaluation in physics, off the training clock
      if (cfg.evalEvery > 0 && (it + 1) % cfg.evalEvery === 0) Object.assign(m, await timed('eval', () => evaluate(setup, envs.map((e) => e.real!), sampler, cfg)));

      // 9. log (namespaced scalars) and checkpoint
      const all = [...rollouts.entries()];
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
      const of = (kind: string, v: (r: Rollout) => number) => all.filter(([j]) => j.kind === kind).flatMap(([, rs]) => rs.map(v));
      const dr = debiaser.report();
      const dn = denoiser.report();
      Object.assign(m, {
        'reward/anchor': mean(of('anchor', (r) => r.reward)), 'reward/wm': mean(of('model', (r) => r.reward)),
        'success/anchor': mean(of('anchor', (r) => +r.success)), 'success/wm': mean(of('model', (r) => +r.success)),
        'groups/anchor': anchors.length, 'groups/wm': jobs.length - anchors.length, 'groups/zero_variance': zeroVariance,
        'steps/physics': totals.physicsSteps, 'steps/world_model': totals.modelSteps,
        'debias/pairs': dr.pairs, 'debias/bias_before': dr.biasBefore ?? 0, 'debias/bias_after': dr.biasAfter ?? 0,
        'denoise/w': w, 'denoise/eta2': dn.eta2 ?? 0,
        'losses/policy': losses.policy / Math.max(1, losses.steps), 'losses/kl': losses.kl / Math.max(1, losses.steps),
        'losses/entropy': losses.entropy / Math.max(1, losses.steps), 'losses/clip_fraction': losses.clipFraction / Math.max(1, losses.steps),
        'losses/logp_gap': losses.logpGap, 'samples/rows': samples.length,
        'time/physics_s': clock.physics, 'time/world_model_s': clock.model, 'time/training_s': clock.training, 'time/eval_s': clock.eval,
      });
      m.step = it + 1;
      writeFileSync(metricsPath, jsonLine(m), { flag: 'a' });
      opts.onIteration?.(m);
      done = it + 1;
      const stopping = opts.shouldStop?.() ?? false;
      if ((it + 1) % cfg.checkpointEvery === 0 || it + 1 === cfg.iterations || stopping) save(it + 1);
      if (stopping) break;
    }
    const final = trainer.params();
    await savePolicy(join(runDir, 'policy.onnx'), setup.policy.config, final, { provenance: { producer: 'wmrl train', seed: cfg.seed, steps: trainer.stepCount, notes: `${cfg.mode}, ${done} of ${cfg.iterations} iterations` }, specHash: setup.policy.specHash });
    return { iterations: done, params: final };
  } finally {
    for (const e of envs) { e.real?.close(); e.model?.close(); }
    await Promise.all([sampler.close(), refSampler.close(), trainer.close()]);
  }
}

function loadCheckpoint(runDir: string, run: unknown) {
  if (!hasCheckpoint(runDir)) throw new InputError(`--resume: no checkpoint in ${runDir}`);
  const ck = loadTrainCheckpoint(runDir, CHECKPOINT_FORMAT);
  if (canonicalJson(ck.run) !== canonicalJson(run)) throw new InputError(`--resume: the checkpoint in ${runDir} belongs to a run with another config or tasks`);
  return ck;
}

/** Success of the current policy on held-out episodes of every task (physics, temperature 1). */
async function evaluate(setup: TrainSetup, envs: Env[], sampler: PolicySampler, cfg: TrainConfig): Promise<Record<string, number>> {
  const policy = samplerPolicy(sampler, { seed: cfg.seed, temperature: 1 });
  const results = [];
  for (const [t, env] of envs.entries()) {
    const seeds = Array.from({ length: cfg.evalEpisodes }, (_, k) => setup.tasks[t].evalSeed(k));
    results.push(...(await collectEpisodes(env, policy, { seeds })));
  }
  const w = wilson(results.filter((e) => e.success).length, results.length);
  return { 'eval/success': w.rate, 'eval/ci_low': w.low, 'eval/ci_high': w.high, 'eval/progress': results.reduce((s, e) => s + e.progress, 0) / results.length, 'eval/episodes': results.length };
}
