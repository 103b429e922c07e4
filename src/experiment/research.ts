// AutoResearch wired to the trainer: one TrainTask per training task (the sandboxed executor as the real
// engine, the outcome model as the learned one), the outcome model as the trainer's refreshable world
// model, the agent's network config, its behaviour-cloned base on the leaderboards' reference programs,
// and the held-out evaluation (real execution, test-score leaderboard positions).
import {
  AutoResearchEnv,
  type Executor,
  OnlineOutcomeModel,
  type PackedRows,
  type Outcome,
  type TaskData,
  VOCAB,
  wasExecuted,
  executorSource,
  loadTask,
  modelSource,
  programTokens,
  referenceRuns,
  researchBranching,
  researchSpec,
  TASKS,
} from '../autoresearch/index.ts';
import { Graph } from '../nn/ir.ts';
import { ParamStore } from '../nn/params.ts';
import { BcTrainer } from '../policy/bc.ts';
import { AGENT_SIZES } from '../policy/presets.ts';
import { specInterfaceHash, vlaConfigFromSpec } from '../policy/spec-config.ts';
import { WordTokenizer } from '../policy/tokenizer.ts';
import { type VlaConfig, vlaForwardBuilder } from '../policy/vla.ts';
import {
  type Mode,
  type ModelTrainerState,
  modeFlags,
  type RefreshableModel,
  type TrainTask,
} from '../trainer/index.ts';
import { mean, std, tQuantile } from '../core/stats.ts';
import { PolicySampler, samplerPolicy } from '../policy/sampler.ts';
import { collectEpisodes } from '../rollout/index.ts';

export const TRAIN_RESEARCH_TASKS = TASKS.filter((t) => !t.heldout).map((t) => t.id);
export const HELDOUT_RESEARCH_TASKS = TASKS.filter((t) => t.heldout).map((t) => t.id);
/** Episode seeds: training starts count from 0, evaluation episodes from here (disjoint). */
export const RESEARCH_EVAL_SEED = 1_000_000;
/** Words of the agent's text observation kept (a description and one feedback line fit). */
export const AGENT_TEXT_TOKENS = 112;
const FEEDBACK_WORDS =
  'last valid validation accuracy macro f1 rmse beats of the leaderboard malformed invalid runtime error no result ' +
  'predicted stopped timeout memory output does not parse';

/** The agent's network: text (description + last feedback) and the meta-feature box in, one
 *  autoregressive head per program slot out. */
export function agentConfig(): VlaConfig {
  const corpus = [...TASKS.map((t) => t.description), FEEDBACK_WORDS, VOCAB.join(' ')];
  const tokenizer = WordTokenizer.fromCorpus(corpus, { maxLength: AGENT_TEXT_TOKENS }).config;
  return vlaConfigFromSpec(researchSpec(loadTask(TRAIN_RESEARCH_TASKS[0])), tokenizer, AGENT_SIZES);
}

/** The interface hash an agent file carries (every research task has the same spec entries). */
export function agentSpecHash(): string {
  return specInterfaceHash(researchSpec(loadTask(TRAIN_RESEARCH_TASKS[0])));
}

/** The outcome model as the trainer's RefreshableModel; its "weights" are the rows of its fit and its
 *  replay the executed runs kept, both as x [rows, width] features and y [rows, 2] (status index,
 *  position); step = rows of the fit. */
function refreshable(online: OnlineOutcomeModel): RefreshableModel {
  const entry = (name: string, shape: number[]) => ({
    name,
    shape: shape.map((d) => Math.max(1, d)),
    trainable: false,
    decay: false,
  });
  const toStore = (f: PackedRows) => {
    const store = new ParamStore('float32');
    store.add(entry('x', [f.rows, f.width]), f.rows ? f.x : new Float32Array(1));
    store.add(entry('y', [f.rows, 2]), f.rows ? f.y : new Float32Array(1));
    return store;
  };
  const fromStore = (store: ParamStore, rows: number): PackedRows => ({
    rows,
    width: store.info('x').shape[1],
    x: store.get('x') as Float32Array,
    y: store.get('y') as Float32Array,
  });
  return {
    bound: (capacity) => online.bound(capacity),
    addEpisodes: (episodes) => online.addEpisodes(episodes),
    refresh: () => online.refresh(),
    exportReplay() {
      const f = online.exportReplay();
      return { store: toStore(f), info: { rows: f.rows } };
    },
    importReplay: (store, info) => online.importReplay(fromStore(store, info.rows ?? 0)),
    exportState(): ModelTrainerState {
      const f = online.exportFit();
      const params = toStore(f);
      return {
        step: f.rows,
        fitStep: 0,
        skipped: 0,
        bestStep: -1,
        bestScore: null,
        params,
        optimizer: { step: 0, m: new Map(), v: new Map() },
        best: params,
      };
    },
    async restore(state: ModelTrainerState) {
      online.restoreFit(fromStore(state.params, state.step));
    },
  };
}

/** Trainer fields for AutoResearch (layered over the default preset): episodes of at most 4 turns,
 *  whole-episode world-model groups (every turn's outcome is predicted independently of the last), a
 *  refresh every 32 executed turns, evaluation outside the loop (held-out tasks). */
export const RESEARCH_CONFIG = {
  groupsPerIteration: 4,
  groupSize: 4,
  anchorShare: 0.25,
  minAnchors: 1,
  samplesPerRollout: 4,
  branchShare: 0,
  horizon: 4,
  branchEvery: 1,
  fidelityEvery: 0,
  refreshEvery: 32,
  numEnvs: 4,
  batch: 32,
  lr: 3e-4,
  evalEvery: 0,
  checkpointEvery: 4,
  entropyCoef: 3e-3,
};

export function researchTrainSetup(o: {
  mode: Mode;
  seed: number;
  executor: Executor;
  tasks?: readonly string[];
  onRun?: (o: Outcome) => void;
}): { tasks: TrainTask[]; worldModel?: RefreshableModel; online?: OnlineOutcomeModel } {
  const data = (o.tasks ?? TRAIN_RESEARCH_TASKS).map(loadTask);
  const held = data.find((t) => t.spec.heldout);
  if (held) throw new RangeError(`research task ${held.spec.id} is held out from training`);
  const online = modeFlags(o.mode).model ? new OnlineOutcomeModel(data, o.seed) : undefined;
  const real = executorSource(o.executor, o.onRun && ((_t, _k, r) => o.onRun!(r)));
  const tasks = data.map(
    (task): TrainTask => ({
      id: `autoresearch/${task.spec.id}`,
      makeReal: async (n) => new AutoResearchEnv(task, n, real),
      makeModel: online && (async (n) => new AutoResearchEnv(task, n, modelSource(online.model))),
      branching: researchBranching(),
      trainSeed: (k) => k,
      evalSeed: (k) => RESEARCH_EVAL_SEED + k,
      trainStarts: RESEARCH_EVAL_SEED, // train seeds end where evaluation seeds begin
      remote: { family: 'autoresearch', task: task.spec.id },
    }),
  );
  return { tasks, worldModel: online && refreshable(online), online };
}

/** The base agent: behaviour cloning of every training task's reference programs (those whose validation
 *  leaderboard position is below `below`, default all) from the first turn's observation. Deterministic
 *  in `seed`. */
export async function cloneReferencePrograms(o: {
  steps: number;
  seed: number;
  below?: number;
  lr?: number;
  batch?: number;
  onStep?: (step: number, loss: number) => void;
}): Promise<{ config: VlaConfig; params: ParamStore }> {
  const config = agentConfig();
  const tokenizer = new WordTokenizer(config.tokenizer);
  const rows: { task: TaskData; tokens: Int32Array }[] = TRAIN_RESEARCH_TASKS.map(loadTask).flatMap((task) =>
    referenceRuns(task.spec.id)
      .filter((r) => r.position < (o.below ?? Number.POSITIVE_INFINITY))
      .map((r) => ({ task, tokens: programTokens(r.program) })),
  );
  const boxDim = config.proprio!.dim;
  const ds = {
    size: rows.length,
    images: {},
    proprio: new Float32Array(rows.length * boxDim),
    tokens: new Int32Array(rows.length * tokenizer.maxLength),
    labels: Object.fromEntries(config.actions.map((a, k) => [a.name, Int32Array.from(rows, (r) => r.tokens[k])])),
  };
  const first = new Map<string, { text: string; box: Float32Array }>();
  for (const task of new Set(rows.map((r) => r.task))) {
    const env = new AutoResearchEnv(task, 1, { source: 'executor', outcomes: async () => [] });
    const { obs } = await env.reset({ seed: 0 });
    first.set(task.spec.id, { text: (obs.instruction as string[])[0], box: obs.meta as Float32Array });
  }
  rows.forEach((r, i) => {
    const o0 = first.get(r.task.spec.id)!;
    ds.proprio.set(o0.box, i * boxDim);
    ds.tokens.set(tokenizer.encode(o0.text), i * tokenizer.maxLength);
  });
  const g = new Graph();
  vlaForwardBuilder(config)(g);
  const trainer = await BcTrainer.create(config, ParamStore.init(g.params, o.seed), {
    batch: o.batch ?? 32,
    lr: o.lr ?? 3e-3,
    totalSteps: o.steps,
    seed: o.seed,
  });
  try {
    for (let s = 0; s < o.steps; s++) {
      const r = await trainer.step(ds);
      o.onStep?.(r.step, r.loss);
    }
    return { config, params: trainer.params() };
  } finally {
    await trainer.close();
  }
}

export interface ResearchEvalResult {
  task: string;
  episodes: number;
  /** Mean test-score leaderboard position of each episode's submitted run (best validation position; 0
   *  when no run was valid), with a 95% normal interval over episodes. */
  testPosition: number;
  ciLow: number;
  ciHigh: number;
  /** Share of episodes with a valid run, and the mean trajectory reward (best ladder value). */
  validShare: number;
  reward: number;
  statuses: Record<string, number>;
  executions: number;
  /** Each episode's test position, in evaluation-seed order (for paired comparisons). */
  perEpisode: number[];
}

/** The agent on `episodes` evaluation episodes of each task, in real execution (seeds disjoint from
 *  training's), temperature 1 as in training. */
export async function researchEval(o: {
  config: VlaConfig;
  params: ParamStore;
  tasks: readonly string[];
  episodes: number;
  executor: Executor;
  seed?: number;
  numEnvs?: number;
}): Promise<ResearchEvalResult[]> {
  const sampler = await PolicySampler.create(o.config, o.params);
  try {
    const out: ResearchEvalResult[] = [];
    for (const id of o.tasks) {
      const task = loadTask(id);
      const statuses: Record<string, number> = {};
      const env = new AutoResearchEnv(
        task,
        Math.min(o.numEnvs ?? 8, o.episodes),
        executorSource(o.executor, (_t, _k, r) => (statuses[r.status] = (statuses[r.status] ?? 0) + 1)),
      );
      const seeds = Array.from({ length: o.episodes }, (_, k) => RESEARCH_EVAL_SEED + k);
      // each step records [submitted run's test position, best ladder value]; an episode's last row is its result
      const eps = await collectEpisodes(env, samplerPolicy(sampler, { seed: o.seed ?? 0, temperature: 1 }), {
        seeds,
        recordState: (i) => [env.state(i).bestTestPosition ?? 0, env.state(i).best],
      });
      const final = eps.map((e) => ({ test: e.states!.at(-2)!, best: e.states!.at(-1)! }));
      const test = final.map((f) => f.test);
      const n = test.length;
      const m = mean(test),
        half = n > 1 ? (tQuantile(0.975, n - 1) * std(test)) / Math.sqrt(n - 1) : 0;
      out.push({
        task: id,
        episodes: eps.length,
        testPosition: m,
        ciLow: m - half,
        ciHigh: m + half,
        validShare: final.filter((f) => f.best >= 0.5).length / eps.length,
        reward: mean(final.map((f) => f.best)),
        statuses,
        executions: Object.entries(statuses)
          .filter(([s]) => wasExecuted(s))
          .reduce((n, [, c]) => n + c, 0),
        perEpisode: test,
      });
    }
    return out;
  } finally {
    await sampler.close();
  }
}
