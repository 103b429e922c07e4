// What the trainer is given: tasks (engines as factories, seeds), the policy to post-train, the world
// model behind the tasks, the caller's hooks, and where rollout groups run (transports: in this process,
// or on workers through src/transport). Generic over envs: nothing here knows the tabletop.
import type { TrainMetrics } from '../core/metrics.ts';
import type { Env, EpisodeStart } from '../env/types.ts';
import type { ParamStore } from '../nn/params.ts';
import type { ShardHost } from '../nn/train.ts';
import type { VlaConfig } from '../policy/vla.ts';
import type { Instructions } from './agentbrew.ts';
import type { ModelReward } from './config.ts';
import type { RefreshableModel } from './refresh-state.ts';
import type { Branching, GroupJob, Rollout } from './rollouts.ts';

/** One task the policy trains on: its engines and its seeds. */
export interface TrainTask {
  id: string;
  /** The exact engine (physics): anchors and evaluation. */
  makeReal(numEnvs: number): Promise<Env>;
  /** The learned engine with the same spec (world-model groups, grading of anchors). */
  makeModel?(numEnvs: number): Promise<Env>;
  /** The reward makeModel's engine scores with (absent: phi); the config's modelReward must equal it. */
  modelReward?: ModelReward;
  /** Lets world-model groups start from real states visited by anchors (else whole episodes only). */
  branching?: Branching;
  /** Environment evolution: the exact state of a scripted expert's episode of `seed` with `remaining`
   *  (0, 1] of it still to do, and the physics steps the expert took to find it (counted as training's). */
  expertStart?(seed: number, remaining: number): Promise<{ start: EpisodeStart; steps: number }>;
  /** Environment evolution: scene-level difficulty of the train start of `seed` (lower is easier). */
  difficulty?(seed: number): number;
  /** Names of the leading entries of a captured row that form the task's state: at each evaluation the
   *  run folder records sample episodes with these states (src/trainer/samples.ts; absent: none). */
  recordedStates?: readonly string[];
  /** AgentBrew: the family's instructions (relabelling and PMI credit). */
  instructions?: Instructions;
  /** Env seed of training start k (train split) and of evaluation episode k (held-out split). */
  trainSeed(k: number): number;
  evalSeed(k: number): number;
  /** How many training starts there are: groups draw k from [0, trainStarts). */
  trainStarts: number;
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
  /** A transport that splits every group's rollouts between `local` and `helpers` threads with engines
   *  of their own (src/transport/thread.ts); absent: every rollout runs in this process. */
  split?(
    local: RolloutTransport,
    helpers: number,
  ): RolloutTransport & { close(): Promise<void>; hosts?: readonly ShardHost[] };
}

export interface TrainHooks {
  /** Where anchor groups run (default: in this process). */
  transport?: RolloutTransport;
  /** Where world-model groups run (default: in this process; elsewhere needs the model's snapshot). */
  modelTransport?: RolloutTransport;
  onIteration?(metrics: TrainMetrics): void;
  /** The policy's parameters after an iteration's update (for evaluations outside the loop). */
  onPolicy?(iteration: number, params: ParamStore): void;
  /** Checked between iterations (Ctrl-C): true stops after writing a checkpoint. */
  shouldStop?(): boolean;
  /** After each checkpoint commit: the iterations it holds and the seconds it took (reported only). */
  onCheckpoint?(iteration: number, seconds: number): void;
}

export interface GroupRequest {
  /** The run's identity (job ids of remote transports). */
  run: string;
  /** 'real': anchors (states recorded where the task has branching); 'model': world-model groups. */
  engine: 'real' | 'model';
  tasks: readonly TrainTask[];
  /** The groups; job.task indexes `tasks`. */
  jobs: readonly GroupJob[];
  /** The policy the rollouts act with (the trainer's sampler holds the same parameters). */
  policy: { config: VlaConfig; params: ParamStore };
  /** engine 'model': the world model behind every task's makeModel (its snapshot travels). */
  worldModel?: RefreshableModel;
  seed: number;
  samplesPerRollout: number;
  /** Sampling temperature of the rollouts (absent: 1). */
  temperature?: number;
  /** engine 'model': record states too (where the task has branching), for the repeat penalty. */
  recordStates?: boolean;
  /** Seconds of policy inference in this process are added here (reported only). */
  clock?: { policy: number };
}

export interface RolloutTransport {
  /** Runs every group of the request; results in job order. */
  run(request: GroupRequest): Promise<Rollout[][]>;
}
