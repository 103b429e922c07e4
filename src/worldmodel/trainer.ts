// Trains the K-member ensemble on physics transitions: per-member bootstrap batches that depend only on
// (seed, step), Gaussian NLL, in-graph AdamW (one ORT call per step), validation on held-out transitions
// with the best weights kept, a resumable state (TrainerState), and warm-started online refresh for a
// step count (the API the WMRL trainer calls). Nothing here that decides a result reads a clock.
import { dcos } from '../core/dmath.ts';
import { Rng } from '../core/rng.ts';
import { DYN, Graph } from '../nn/ir.ts';
import {
  WM_NORM,
  worldModelLossBuilder,
  worldModelStepBuilder,
  type WorldModelNetConfig,
} from '../nn/nets/worldmodel.ts';
import { ParamStore } from '../nn/params.ts';
import { floatData, tensor } from '../nn/runtime.ts';
import { ForwardSession, type OptimizerState, TrainSession } from '../nn/train.ts';
import { columnStats, type EpisodeData, type TransitionSet } from './dataset.ts';
import { ensembleLossBuilder } from './loss.ts';

export interface NetOptions {
  members?: number;
  hidden?: number[];
  act?: 'relu' | 'silu' | 'tanh';
}

export interface FitOptions {
  /** Optimizer steps of this fit (a resumed fit continues up to the same count). */
  steps: number;
  lr?: number;
  /** Cosine decay from lr to lrFinal over `steps` (default lr / 10). */
  lrFinal?: number;
  /** Validate (and keep the best weights) every this many steps. */
  evalEvery?: number;
  onMetrics?: (m: FitMetrics) => void;
  /** Called with the best weights so far whenever they improve (the CLI writes the model file). */
  onBest?: (params: ParamStore, m: FitMetrics) => Promise<void> | void;
  /** Called with the whole trainer state every `stateEvery` steps and after the last step. */
  onState?: (state: TrainerState) => Promise<void> | void;
  stateEvery?: number;
  /** Checked between steps (Ctrl-C): when true the fit returns early with `interrupted` set. */
  shouldStop?: () => boolean;
}

export interface FitMetrics {
  step: number;
  loss: number;
  gradNorm: number;
  lr: number;
  /** Mean squared error of the ensemble-mean Δ in normalised units on held-out transitions. */
  valMse?: number;
  /** Wall-clock time of this process's part of the fit (reported only). */
  elapsedMs: number;
}

export interface FitResult {
  steps: number;
  bestValMse: number | null;
  bestStep: number;
  elapsedMs: number;
  skipped: number;
  /** True when shouldStop() ended the fit before `steps`. */
  interrupted: boolean;
}

/** Everything a resumed fit needs to continue bit-identically. */
export interface TrainerState {
  /** Steps taken by this trainer in all fits (the batch index of the next step). */
  step: number;
  /** Steps of the current fit. */
  fitStep: number;
  skipped: number;
  bestStep: number;
  /** Score of the kept weights (held-out MSE, or -steps without validation); null before the first. */
  bestScore: number | null;
  params: ParamStore;
  optimizer: OptimizerState;
  best: ParamStore;
}

/** Validation transitions scored per check (the first ones of the set). */
export const VAL_ROWS = 4096;
/** Rng stream of the bootstrap rows of step t: BATCH_STREAM + t. */
const BATCH_STREAM = 0x3b1d0000;
const PROBE_STREAM = 0x7f0b0000;

export class WorldModelTrainer {
  readonly config: WorldModelNetConfig & { members: number };
  private best: ParamStore;
  private bestMse = Infinity;
  private totalSteps = 0;
  private fitState = { done: 0, skipped: 0, bestStep: -1 };
  private resumed = false;
  private readonly bufs: { s: Float32Array; a: Float32Array; t: Float32Array };

  private constructor(
    private session: TrainSession,
    readonly train: TransitionSet,
    readonly val: TransitionSet | null,
    config: WorldModelNetConfig & { members: number },
    readonly batch: number,
    readonly seed: number,
  ) {
    this.config = config;
    this.best = session.params();
    const K = config.members;
    this.bufs = {
      s: new Float32Array(K * batch * config.stateDim),
      a: new Float32Array(K * batch * config.actionDim),
      t: new Float32Array(K * batch * train.layout.stateDim),
    };
  }

  /** A fresh ensemble (normalisers fitted on `train`) or a warm start from `init` (its normalisers kept). */
  static async create(
    train: TransitionSet,
    val: TransitionSet | null,
    opts: {
      net?: NetOptions;
      batch?: number;
      seed?: number;
      weightDecay?: number;
      init?: ParamStore;
      config?: WorldModelNetConfig;
      maxNonFiniteSteps?: number;
    },
  ): Promise<WorldModelTrainer> {
    if (train.count === 0 && !opts.init) throw new Error('world-model training: no transitions');
    const seed = opts.seed ?? 0;
    const batch = opts.batch ?? 256;
    const config = (opts.config ?? {
      stateDim: train.layout.featureDim,
      actionDim: train.coder.dim,
      outDim: train.layout.stateDim,
      members: opts.net?.members ?? 5,
      hidden: opts.net?.hidden ?? [200, 200, 200],
      act: opts.net?.act ?? 'silu',
    }) as WorldModelNetConfig & { members: number };
    const g = new Graph();
    worldModelLossBuilder(config, batch)(g);
    let params = opts.init;
    if (!params) {
      params = ParamStore.init(g.params, seed);
      const inputs = interleave(train.feats, train.acts, train.count, config.stateDim, config.actionDim);
      // inputs: a 1e-3 floor (1 mm, 1 mrad) so a near-constant column cannot blow up an unseen value
      const inStats = columnStats(inputs, train.count, config.stateDim + config.actionDim, 1e-3);
      const outStats = columnStats(train.deltas, train.count, train.layout.stateDim, 1e-6, 1e-4);
      params.set(WM_NORM.inMean, inStats.mean);
      params.set(WM_NORM.inStd, inStats.std);
      params.set(WM_NORM.outMean, outStats.mean);
      params.set(WM_NORM.outStd, outStats.std);
    }
    const session = await TrainSession.create(ensembleLossBuilder(config, batch), params, {
      optimizer: { maxGradNorm: 10, weightDecay: opts.weightDecay ?? 1e-5 },
      threads: 1,
      maxNonFiniteSteps: opts.maxNonFiniteSteps,
    });
    return new WorldModelTrainer(session, train, val, config, batch, seed);
  }

  /** The best weights so far (by held-out 1-step error; the latest when there is no validation set). */
  params(): ParamStore {
    return this.best.clone();
  }

  get steps(): number {
    return this.totalSteps;
  }

  /** A copy of the whole training state (for a checkpoint). */
  exportState(): TrainerState {
    const f = this.fitState;
    return {
      step: this.totalSteps,
      fitStep: f.done,
      skipped: f.skipped,
      bestStep: f.bestStep,
      bestScore: Number.isFinite(this.bestMse) ? this.bestMse : null,
      params: this.session.params(),
      optimizer: this.session.exportOptimizer(),
      best: this.best.clone(),
    };
  }

  /** Continues from a saved state: the next fit() resumes that fit at state.fitStep + 1. */
  restore(s: TrainerState): void {
    this.session.setParams(s.params);
    this.session.importOptimizer(s.optimizer);
    this.best = s.best.clone();
    this.bestMse = s.bestScore ?? Infinity;
    this.totalSteps = s.step;
    this.fitState = { done: s.fitStep, skipped: s.skipped, bestStep: s.bestStep };
    this.resumed = true;
  }

  /** The bootstrap rows of batch index `t`: a pure function of (seed, t). */
  private fillBatch(t: number, stream = BATCH_STREAM): void {
    const rng = new Rng(this.seed, (stream + t) >>> 0);
    const { s, a, t: d } = this.bufs;
    const F = this.config.stateDim,
      A = this.config.actionDim,
      S = this.train.layout.stateDim;
    const n = this.train.count;
    for (let r = 0; r < this.config.members * this.batch; r++) {
      const i = rng.int(n); // bootstrap: each member draws its own rows with replacement
      s.set(this.train.feats.subarray(i * F, (i + 1) * F), r * F);
      a.set(this.train.acts.subarray(i * A, (i + 1) * A), r * A);
      d.set(this.train.deltas.subarray(i * S, (i + 1) * S), r * S);
    }
  }

  private runStep(lr: number) {
    const K = this.config.members,
      B = this.batch;
    return this.session.step(
      {
        state: tensor('float32', this.bufs.s, [K, B, this.config.stateDim]),
        action: tensor('float32', this.bufs.a, [K, B, this.config.actionDim]),
        target: tensor('float32', this.bufs.t, [K, B, this.train.layout.stateDim]),
      },
      lr,
    );
  }

  /** Milliseconds per train step, timed on `probe` throwaway steps; the state is restored afterwards,
   *  so a run that uses the measured count equals a run given that count. */
  async measureStepMs(probe = 10): Promise<number> {
    if (this.train.count === 0) return 0;
    const params = this.session.params();
    const optimizer = this.session.exportOptimizer();
    const t0 = performance.now();
    for (let i = 0; i < probe; i++) {
      this.fillBatch(i, PROBE_STREAM);
      await this.runStep(1e-9);
    }
    const ms = (performance.now() - t0) / probe;
    this.session.setParams(params);
    this.session.importOptimizer(optimizer);
    return ms;
  }

  async fit(opts: FitOptions): Promise<FitResult> {
    const t0 = performance.now();
    const st = this.resumed ? this.fitState : (this.fitState = { done: 0, skipped: 0, bestStep: -1 });
    this.resumed = false;
    const result = (interrupted: boolean): FitResult => ({
      steps: st.done,
      bestValMse: Number.isFinite(this.bestMse) && this.bestMse >= 0 ? this.bestMse : null,
      bestStep: st.bestStep,
      elapsedMs: Math.round(performance.now() - t0),
      skipped: st.skipped,
      interrupted,
    });
    if (this.train.count === 0) return result(false);
    const lr0 = opts.lr ?? 1e-3;
    const lr1 = opts.lrFinal ?? lr0 / 10;
    const every = opts.evalEvery ?? 500;
    const stateEvery = opts.stateEvery ?? Infinity;
    for (let step = st.done + 1; step <= opts.steps; step++) {
      if (opts.shouldStop?.()) return result(true);
      const lr = lr1 + 0.5 * (lr0 - lr1) * (1 + dcos((Math.PI * (step - 1)) / Math.max(1, opts.steps)));
      this.fillBatch(this.totalSteps);
      const r = await this.runStep(lr);
      if (!r.finite) st.skipped++;
      st.done = step;
      this.totalSteps++;
      if (step % every === 0 || step === opts.steps) {
        const m: FitMetrics = {
          step: this.totalSteps,
          loss: r.loss,
          gradNorm: r.gradNorm,
          lr,
          elapsedMs: Math.round(performance.now() - t0),
        };
        const params = this.session.params();
        if (this.val && this.val.count > 0) m.valMse = await validationMse(this.config, params, this.val);
        opts.onMetrics?.(m);
        const score = m.valMse ?? -this.totalSteps;
        if (score < this.bestMse) {
          this.bestMse = score;
          this.best = params;
          st.bestStep = this.totalSteps;
          await opts.onBest?.(params, m);
        }
      }
      if (step % stateEvery === 0 || step === opts.steps) await opts.onState?.(this.exportState());
    }
    return result(false);
  }

  /** Online refresh: append new physics episodes to the training set (normalisers stay fixed). */
  addTransitions(episodes: readonly EpisodeData[]): number {
    const before = this.train.count;
    this.train.append(episodes);
    return this.train.count - before;
  }

  /** Warm-started retraining for `steps` steps (weights and optimizer moments carry over). The best
   *  validation score is re-measured first so new data can replace the kept weights. */
  async refresh(opts: {
    steps: number;
    lr?: number;
    evalEvery?: number;
    onMetrics?: FitOptions['onMetrics'];
  }): Promise<FitResult> {
    if (this.val && this.val.count > 0) this.bestMse = await validationMse(this.config, this.best, this.val);
    else this.bestMse = Infinity;
    const lr = opts.lr ?? 3e-4;
    return this.fit({
      steps: opts.steps,
      lr,
      lrFinal: lr,
      evalEvery: opts.evalEvery ?? 200,
      onMetrics: opts.onMetrics,
    });
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

/** The step count a time budget buys at `msPerStep` (at least 1, at most `maxSteps`). */
export function stepsForBudget(budgetS: number, msPerStep: number, maxSteps: number): number {
  if (!(msPerStep > 0)) return maxSteps;
  return Math.max(1, Math.min(maxSteps, Math.floor((budgetS * 1000) / msPerStep)));
}

/** Rows of two row-major arrays side by side: [n, a] ++ [n, b] -> [n, a + b]. */
function interleave(x: Float32Array, y: Float32Array, n: number, a: number, b: number): Float32Array {
  const out = new Float32Array(n * (a + b));
  for (let i = 0; i < n; i++) {
    out.set(x.subarray(i * a, (i + 1) * a), i * (a + b));
    out.set(y.subarray(i * b, (i + 1) * b), i * (a + b) + a);
  }
  return out;
}

/** Held-out 1-step error of the ensemble-mean Δ, in target-normalised units (first VAL_ROWS rows). */
export async function validationMse(
  config: WorldModelNetConfig & { members: number },
  params: ParamStore,
  val: TransitionSet,
): Promise<number> {
  const n = Math.min(val.count, VAL_ROWS);
  const F = config.stateDim,
    A = config.actionDim,
    S = val.layout.stateDim;
  const fwd = await ForwardSession.create(worldModelStepBuilder(config, DYN), params, { threads: 1 });
  try {
    const out = await fwd.run({
      state: tensor('float32', val.feats.subarray(0, n * F), [n, F]),
      action: tensor('float32', val.acts.subarray(0, n * A), [n, A]),
    });
    const d = floatData(out.delta_mean);
    const std = params.get(WM_NORM.outStd);
    const K = config.members;
    let se = 0;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < S; j++) {
        let m = 0;
        for (let k = 0; k < K; k++) m += d[(k * n + i) * S + j];
        const e = (m / K - val.deltas[i * S + j]) / std[j];
        se += e * e;
      }
    }
    return se / (n * S);
  } finally {
    await fwd.close();
  }
}
