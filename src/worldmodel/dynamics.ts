// The dynamics behind WorldModelEnv: anything that maps (packed states, action tokens) to the next
// states of K members. The learned ensemble is one implementation; a physics twin (src/cli) is another,
// so shadow mode can be checked against a "world model" that is the physics itself.
import type { EnvSpec } from '../core/spec.ts';
import type { BatchAction } from '../env/types.ts';
import { DYN } from '../nn/ir.ts';
import { worldModelStepBuilder, type WorldModelNetConfig } from '../nn/nets/worldmodel.ts';
import type { ParamStore } from '../nn/params.ts';
import { floatData, type RuntimeOptions, tensor } from '../nn/runtime.ts';
import { ForwardSession } from '../nn/train.ts';
import type { TaskInstance } from '../task/types.ts';
import {
  ActionCoder,
  applyDelta,
  commandPrior,
  restMask,
  stateFeatures,
  type StateLayout,
  type StateLimits,
} from './features.ts';

export interface Prediction {
  /** Next states of every member for the requested rows, [K, R, S] (member-major). */
  members: Float64Array;
  /** The ensemble-mean next state of each requested row, [R, S]. */
  mean: Float64Array;
}

export interface Dynamics {
  readonly members: number;
  /** Envs `rows` begin episodes of `tasks` at packed `states` (rows.length x S). Stateful dynamics
   *  (a physics twin) re-synchronise here; learned ones need nothing. */
  start(rows: readonly number[], tasks: readonly TaskInstance[], states: Float64Array): Promise<void> | void;
  /** One batched step: `states` holds every env's packed state (N x S), `action` every env's tokens;
   *  predictions are returned for `rows` only, in that order. */
  predict(states: Float64Array, action: BatchAction, rows: readonly number[]): Promise<Prediction>;
  close(): Promise<void> | void;
}

/** The learned K-member ensemble: one ORT call per batched step (only the requested rows are fed). */
export class EnsembleDynamics implements Dynamics {
  readonly members: number;
  private feat = new Float32Array(0);
  private act = new Float32Array(0);
  private meanDelta = new Float64Array(0);
  private delta = new Float64Array(0);
  private readonly prior: Float64Array;

  private constructor(
    private session: ForwardSession,
    readonly config: WorldModelNetConfig & { members: number },
    readonly layout: StateLayout,
    readonly limits: StateLimits,
    readonly coder: ActionCoder,
  ) {
    this.members = config.members;
    this.prior = new Float64Array(layout.stateDim);
  }

  static async create(
    config: WorldModelNetConfig,
    params: ParamStore,
    layout: StateLayout,
    limits: StateLimits,
    spec: EnvSpec,
    runtime: RuntimeOptions = {},
  ): Promise<EnsembleDynamics> {
    const coder = new ActionCoder(spec);
    if (config.stateDim !== layout.featureDim)
      throw new Error(
        `world model: net expects ${config.stateDim} state features, the scene gives ${layout.featureDim}`,
      );
    if ((config.outDim ?? config.stateDim) !== layout.stateDim)
      throw new Error(`world model: net predicts ${config.outDim} values, the state has ${layout.stateDim}`);
    if (config.actionDim !== coder.dim)
      throw new Error(`world model: net expects ${config.actionDim} action values, the spec has ${coder.dim}`);
    const session = await ForwardSession.create(worldModelStepBuilder(config, DYN), params, runtime);
    return new EnsembleDynamics(session, config, layout, limits, coder);
  }

  /** Bake new weights in (after a refresh). */
  update(params: ParamStore): Promise<void> {
    return this.session.update(params);
  }

  start(): void {}

  /** Raw network outputs for prepared feature rows: Δ means [K, R, S]. */
  async deltas(feat: Float32Array, act: Float32Array, rows: number): Promise<Float32Array | Float64Array> {
    const { featureDim } = this.layout;
    const out = await this.session.run({
      state: tensor('float32', feat.subarray(0, rows * featureDim), [rows, featureDim], this.session.ort),
      action: tensor('float32', act.subarray(0, rows * this.coder.dim), [rows, this.coder.dim], this.session.ort),
    });
    return floatData(out.delta_mean);
  }

  async predict(states: Float64Array, action: BatchAction, rows: readonly number[]): Promise<Prediction> {
    const { featureDim, stateDim: S } = this.layout;
    const R = rows.length;
    const K = this.members;
    if (this.feat.length < R * featureDim) {
      this.feat = new Float32Array(R * featureDim);
      this.act = new Float32Array(R * this.coder.dim);
      this.meanDelta = new Float64Array(R * S);
    }
    const held = new Array<number>(R);
    for (let r = 0; r < R; r++) {
      this.coder.encode(action as Record<string, ArrayLike<number>>, rows[r], this.act, r);
      held[r] = stateFeatures(this.layout, states, rows[r], this.feat, r);
    }
    if (R === 0) return { members: new Float64Array(0), mean: new Float64Array(0) };
    if (this.delta.length < K * R * S) this.delta = new Float64Array(K * R * S);
    const delta = this.delta;
    delta.set(await this.deltas(this.feat, this.act, R));
    // add the command prior back onto every member's residual (float64, as in training targets)
    const prior = this.prior;
    const g = this.coder.names.indexOf('grip');
    const attach = new Array<number>(R);
    for (let r = 0; r < R; r++) {
      commandPrior(this.layout, this.coder, this.act, r, held[r], prior, 0);
      for (let k = 0; k < K; k++) for (let j = 0, d = (k * R + r) * S; j < S; j++) delta[d + j] += prior[j];
      // held objects with the gripper commanded closed move rigidly with the tool (see applyDelta)
      attach[r] = g >= 0 && this.act[r * this.coder.dim + g] >= 0.5 ? held[r] : 0;
    }
    return combine(this.layout, this.limits, states, rows, delta, K, this.meanDelta, attach);
  }

  close(): Promise<void> {
    return this.session.close();
  }
}

/** Member next states and the ensemble-mean next state (the mean Δ applied once) from Δ [K, R, S];
 *  attach[r]: objects of row r that move rigidly with the tool. */
export function combine(
  layout: StateLayout,
  limits: StateLimits,
  states: Float64Array,
  rows: readonly number[],
  delta: ArrayLike<number>,
  K: number,
  scratch = new Float64Array(rows.length * layout.stateDim),
  attach?: readonly number[],
): Prediction {
  const S = layout.stateDim;
  const R = rows.length;
  const members = new Float64Array(K * R * S);
  const mean = new Float64Array(R * S);
  scratch.fill(0, 0, R * S);
  const rest = rows.map((row) => restMask(layout, limits, states, row * S));
  for (let k = 0; k < K; k++) {
    for (let r = 0; r < R; r++) {
      const d = (k * R + r) * S;
      applyDelta(layout, limits, states, rows[r] * S, delta, d, members, d, rest[r], attach?.[r] ?? 0);
      for (let j = 0; j < S; j++) scratch[r * S + j] += delta[d + j] / K;
    }
  }
  for (let r = 0; r < R; r++)
    applyDelta(layout, limits, states, rows[r] * S, scratch, r * S, mean, r * S, rest[r], attach?.[r] ?? 0);
  return { members, mean };
}
