// Train-step and forward sessions. A TrainSession runs forward + backward + AdamW in one session.run
// and feeds each step's output tensors straight back in; a ForwardSession bakes the weights in as
// initializers (faster than feeding them) and is rebuilt after updates.
import { Graph, type FloatType, type Tensor } from './ir.ts';
import { writeOnnx } from './onnx.ts';
import { type AdamWConfig, TRAIN_IO, type TrainGraphLayout, addAdamW } from './optim.ts';
import { type ParamInfo, ParamStore } from './params.ts';
import {
  type Feeds,
  type OrtBinding,
  type OrtTensor,
  type RuntimeOptions,
  Session,
  floatData,
  scalarOf,
  scalarTensor,
} from './runtime.ts';

export interface LossBuild {
  loss: Tensor;
  /** Extra outputs (computed with the parameters before the update). */
  metrics?: Record<string, Tensor>;
}

export interface TrainOptions extends RuntimeOptions {
  optimizer?: AdamWConfig;
  /** Consecutive steps the NaN guard may skip before step() throws NonFiniteTrainingError (default 20). */
  maxNonFiniteSteps?: number;
}

export const DEFAULT_MAX_NONFINITE_STEPS = 20;

/** Training cannot go on: the last `count` steps in a row were rejected by the NaN guard. */
export class NonFiniteTrainingError extends Error {
  override name = 'NonFiniteTrainingError';
  constructor(
    readonly count: number,
    loss: number,
    gradNorm: number,
  ) {
    super(
      `training stopped: ${count} consecutive steps had a non-finite loss or gradient norm (last loss ${loss}, ` +
        `grad norm ${gradNorm}) and were skipped; lower the learning rate or check the data`,
    );
  }
}

export interface StepResult {
  loss: number;
  gradNorm: number;
  /** False when the loss or gradient norm was NaN/Inf: the step was skipped, state unchanged. */
  finite: boolean;
  metrics: Record<string, OrtTensor>;
}

export interface OptimizerState {
  step: number;
  m: Map<string, Float32Array | Float64Array>;
  v: Map<string, Float32Array | Float64Array>;
}

export class TrainSession {
  private state = new Map<string, OrtTensor>();
  private rejected = 0;
  private maxRejected = DEFAULT_MAX_NONFINITE_STEPS;
  private readonly infos: Map<string, ParamInfo>;
  readonly dataInputs: { name: string; shape: readonly number[]; dtype: string }[];

  private constructor(
    private readonly session: Session,
    readonly layout: TrainGraphLayout,
    private readonly float: FloatType,
    graph: Graph,
  ) {
    const own = new Set([TRAIN_IO.lr, ...layout.carried.map((c) => c.input), ...layout.buffers]);
    this.infos = new Map(
      graph.params.map((p) => [p.name, { name: p.name, shape: p.shape, trainable: p.trainable, decay: p.decay }]),
    );
    this.dataInputs = graph.inputs
      .filter((t) => !own.has(t.name))
      .map((t) => ({ name: t.name, shape: t.shape, dtype: t.dtype }));
  }

  /** Builds the loss with `build`, appends AdamW and opens the session with `params` as the starting point. */
  static async create(
    build: (g: Graph) => LossBuild,
    params: ParamStore,
    opts: TrainOptions = {},
  ): Promise<TrainSession> {
    const max = opts.maxNonFiniteSteps ?? DEFAULT_MAX_NONFINITE_STEPS;
    if (!Number.isInteger(max) || max < 1)
      throw new RangeError(`TrainSession: maxNonFiniteSteps must be a positive integer, got ${max}`);
    const graph = new Graph(params.float);
    const { loss, metrics } = build(graph);
    params.checkAgainst(graph.params);
    const layout = addAdamW(graph, loss, opts.optimizer, metrics);
    const session = await Session.create(writeOnnx(graph), opts, params.float);
    const t = new TrainSession(session, layout, params.float, graph);
    t.maxRejected = max;
    t.setParams(params);
    t.resetOptimizer();
    return t;
  }

  /** Replace every parameter value (optimizer state is kept). */
  setParams(params: ParamStore): void {
    for (const name of [...this.layout.trainable, ...this.layout.buffers]) {
      this.state.set(name, this.session.tensor(this.float, params.get(name).slice(), params.info(name).shape));
    }
  }

  resetOptimizer(): void {
    for (const p of this.layout.trainable) {
      this.state.set(TRAIN_IO.m(p), this.zeros(p));
      this.state.set(TRAIN_IO.v(p), this.zeros(p));
    }
    this.state.set(TRAIN_IO.step, scalarTensor(0, this.float, this.session.ort));
  }

  private zeros(name: string): OrtTensor {
    const shape = this.infos.get(name)!.shape;
    const n = shape.reduce((a, b) => a * b, 1);
    return this.session.tensor(this.float, this.float === 'float32' ? new Float32Array(n) : new Float64Array(n), shape);
  }

  /** One step: forward, backward, clipping, AdamW. `data` holds the graph's data inputs. A step with a
   *  non-finite loss or gradient is skipped; the maxNonFiniteSteps-th such step in a row throws. */
  async step(data: Feeds, lr: number): Promise<StepResult> {
    for (const d of this.dataInputs)
      if (!(d.name in data)) throw new Error(`TrainSession.step: missing data input "${d.name}"`);
    const feeds: Feeds = { ...data, [TRAIN_IO.lr]: scalarTensor(lr, this.float, this.session.ort) };
    for (const [k, v] of this.state) feeds[k] = v;
    const out = await this.session.run(feeds);
    for (const c of this.layout.carried) this.state.set(c.input, out[c.output]);
    const metrics: Record<string, OrtTensor> = {};
    for (const m of this.layout.metrics) metrics[m] = out[m];
    const r = {
      loss: scalarOf(out[TRAIN_IO.loss]),
      gradNorm: scalarOf(out[TRAIN_IO.gradNorm]),
      finite: scalarOf(out[TRAIN_IO.finite]) === 1,
      metrics,
    };
    this.rejected = r.finite ? 0 : this.rejected + 1;
    if (this.rejected >= this.maxRejected) throw new NonFiniteTrainingError(this.rejected, r.loss, r.gradNorm);
    return r;
  }

  /** Number of optimizer steps taken (skipped non-finite steps do not count). */
  get stepCount(): number {
    return scalarOf(this.state.get(TRAIN_IO.step)!);
  }

  /** A copy of the current parameter values (buffers included). */
  params(): ParamStore {
    const store = new ParamStore(this.float);
    for (const name of [...this.layout.trainable, ...this.layout.buffers]) {
      const t = this.state.get(name)!;
      store.add(this.infos.get(name)!, floatData(t).slice());
    }
    return store;
  }

  exportOptimizer(): OptimizerState {
    const m = new Map<string, Float32Array | Float64Array>();
    const v = new Map<string, Float32Array | Float64Array>();
    for (const p of this.layout.trainable) {
      m.set(p, floatData(this.state.get(TRAIN_IO.m(p))!).slice());
      v.set(p, floatData(this.state.get(TRAIN_IO.v(p))!).slice());
    }
    return { step: this.stepCount, m, v };
  }

  importOptimizer(s: OptimizerState): void {
    for (const p of this.layout.trainable) {
      const shape = this.state.get(p)!.dims;
      const m = s.m.get(p);
      const v = s.v.get(p);
      if (!m || !v) throw new Error(`importOptimizer: no moments for parameter "${p}"`);
      this.state.set(TRAIN_IO.m(p), this.session.tensor(this.float, m.slice(), shape));
      this.state.set(TRAIN_IO.v(p), this.session.tensor(this.float, v.slice(), shape));
    }
    this.state.set(TRAIN_IO.step, scalarTensor(s.step, this.float, this.session.ort));
    this.rejected = 0;
  }

  async close(): Promise<void> {
    this.state.clear();
    await this.session.close();
  }
}

/** Forward-only session with the parameters baked in as initializers. */
export class ForwardSession {
  private constructor(
    private session: Session,
    readonly graph: Graph,
    private readonly opts: RuntimeOptions,
  ) {}

  static async create(
    build: (g: Graph) => Record<string, Tensor>,
    params: ParamStore,
    opts: RuntimeOptions = {},
  ): Promise<ForwardSession> {
    const graph = new Graph(params.float);
    for (const [name, t] of Object.entries(build(graph))) graph.output(name, t);
    params.checkAgainst(graph.params);
    const session = await Session.create(writeOnnx(graph, { initializers: params.asMap() }), opts, params.float);
    return new ForwardSession(session, graph, opts);
  }

  /** The ONNX model bytes (weights included). */
  get model(): Uint8Array {
    return this.session.model;
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  /** The ORT binding of the session (feeds are built with it). */
  get ort(): OrtBinding {
    return this.session.ort;
  }

  run(feeds: Feeds): Promise<Feeds> {
    return this.session.run(feeds);
  }

  /** Rebake new parameter values: opens the new session first, then closes the old one. */
  async update(params: ParamStore): Promise<void> {
    params.checkAgainst(this.graph.params);
    const next = await Session.create(writeOnnx(this.graph, { initializers: params.asMap() }), this.opts, params.float);
    const old = this.session;
    this.session = next;
    await old.close();
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}
