// Train-step and forward sessions. A TrainSession runs forward + backward + AdamW in one session.run
// and feeds each step's output tensors straight back in; a ForwardSession bakes the weights in as
// initializers (faster than feeding them) and is rebuilt after updates.
import { type DType, Graph, type FloatType, type Tensor, type TypedArray } from './ir.ts';
import { writeOnnx } from './onnx.ts';
import {
  type AdamWConfig,
  SHARD_IO,
  TRAIN_IO,
  type TrainGraphLayout,
  addAdamW,
  addShardGradients,
  addShardedUpdate,
} from './optim.ts';
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
  /** Data-parallel steps: every batch is cut into this many row slices, each slice's gradient comes
   *  from one gradient graph (`build` then makes the loss of one slice, and the slices' losses must
   *  add up to the batch's), and an update graph sums them in slice order. Default 1: one graph does
   *  the whole step. The count decides the result; where slices run does not. */
  shards?: number;
  /** Where slices 1.. run: slice k on hosts[k - 1] when there is one, else in this process after slice 0. */
  hosts?: readonly ShardHost[];
}

/** Runs a gradient graph elsewhere (a helper thread, src/transport/thread.ts). */
export interface ShardHost {
  open(model: Uint8Array): Promise<RemoteGraph>;
}

export interface RemoteGraph {
  run(feeds: Feeds): Promise<Feeds>;
  close(): Promise<void>;
}

/** The gradient graphs of a sharded TrainSession: slice 0 here, slice k > 0 on remote[k - 1] or here. */
interface Shards {
  local: Session;
  remote: (RemoteGraph | null)[];
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
  private shards: Shards | null = null;
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
    const count = opts.shards ?? 1;
    if (!Number.isInteger(count) || count < 1)
      throw new RangeError(`TrainSession: shards must be a positive integer, got ${count}`);
    const graph = new Graph(params.float);
    const { loss, metrics } = build(graph);
    params.checkAgainst(graph.params);
    let t: TrainSession;
    if (count === 1) {
      const layout = addAdamW(graph, loss, opts.optimizer, metrics);
      t = new TrainSession(await Session.create(writeOnnx(graph), opts, params.float), layout, params.float, graph);
    } else {
      const { metrics: names } = addShardGradients(graph, loss, metrics);
      const model = writeOnnx(graph);
      const update = new Graph(params.float);
      const trainable = graph.params.filter((p) => p.trainable);
      const layout = {
        ...addShardedUpdate(update, trainable, count, opts.optimizer),
        buffers: graph.params.filter((p) => !p.trainable).map((p) => p.name), // fed to the slices only
        metrics: names,
      };
      t = new TrainSession(await Session.create(writeOnnx(update), opts, params.float), layout, params.float, graph);
      const hosts = opts.hosts ?? [];
      t.shards = {
        local: await Session.create(model, opts, params.float),
        remote: await Promise.all(
          Array.from({ length: count - 1 }, (_, k) => (hosts[k] ? hosts[k].open(model) : null)),
        ),
      };
    }
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

  /** One step: forward, backward, clipping, AdamW. `data` holds the graph's data inputs (a sharded
   *  session's: the whole batch's rows). A step with a non-finite loss or gradient is skipped; the
   *  maxNonFiniteSteps-th such step in a row throws. */
  async step(data: Feeds, lr: number): Promise<StepResult> {
    for (const d of this.dataInputs)
      if (!(d.name in data)) throw new Error(`TrainSession.step: missing data input "${d.name}"`);
    const feeds: Feeds = { ...data, [TRAIN_IO.lr]: scalarTensor(lr, this.float, this.session.ort) };
    for (const [k, v] of this.state) feeds[k] = v;
    let metrics: Record<string, OrtTensor> = {};
    if (this.shards) {
      const shards = await this.runShards(data);
      shards.forEach((out, k) => {
        for (const p of this.layout.trainable) feeds[SHARD_IO.of(k, SHARD_IO.grad(p))] = out[SHARD_IO.grad(p)];
        feeds[SHARD_IO.of(k, SHARD_IO.loss)] = out[SHARD_IO.loss];
      });
      for (const m of this.layout.metrics) metrics[m] = this.joinShards(shards.map((out) => out[m]));
    }
    const out = await this.session.run(feeds);
    for (const c of this.layout.carried) this.state.set(c.input, out[c.output]);
    if (!this.shards) metrics = Object.fromEntries(this.layout.metrics.map((m) => [m, out[m]]));
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

  /** Every slice's gradient graph on its rows (slices on hosts at the same time as slice 0 here). */
  private async runShards(data: Feeds): Promise<Feeds[]> {
    const s = this.shards!;
    const count = s.remote.length + 1;
    const params: Feeds = {};
    for (const name of [...this.layout.trainable, ...this.layout.buffers]) params[name] = this.state.get(name)!;
    // slice k of every input whose batch axis is `count` times the gradient graph's; the rest as given
    const slice = (k: number): Feeds => {
      const f: Feeds = { ...params };
      for (const d of this.dataInputs) {
        const t = data[d.name];
        const rows = d.shape[0];
        if (d.shape.length && t.dims[0] === rows * count) {
          const per = t.size / count;
          const part = (t.data as TypedArray).subarray(k * per, (k + 1) * per);
          f[d.name] = this.session.tensor(t.type as DType, part, [rows, ...t.dims.slice(1)]);
        } else f[d.name] = t;
      }
      return f;
    };
    const remote = s.remote.map((g, k) => g?.run(slice(k + 1)) ?? null);
    const out: Feeds[] = [await s.local.run(slice(0))];
    for (let k = 1; k < count; k++) out.push(await (remote[k - 1] ?? s.local.run(slice(k))));
    return out;
  }

  /** One metric over the slices: scalars summed (slice order, float64), per-row values concatenated. */
  private joinShards(parts: OrtTensor[]): OrtTensor {
    const arrays = parts.map((t) => floatData(t));
    if (parts[0].dims.length === 0)
      return scalarTensor(
        arrays.reduce((a, x) => a + x[0], 0),
        this.float,
      );
    const all = this.float === 'float32' ? new Float32Array(sumLengths(arrays)) : new Float64Array(sumLengths(arrays));
    let at = 0;
    for (const a of arrays) {
      all.set(a, at);
      at += a.length;
    }
    const rows = parts.reduce((n, t) => n + t.dims[0], 0);
    return this.session.tensor(this.float, all, [rows, ...parts[0].dims.slice(1)]);
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
    await this.shards?.local.close();
    await Promise.all(this.shards?.remote.map((g) => g?.close()) ?? []);
    await this.session.close();
  }
}

const sumLengths = (arrays: readonly ArrayLike<number>[]): number => arrays.reduce((n, a) => n + a.length, 0);

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
