import type { EnvSpec } from '../core/spec.ts';

/** Per-entry batched values, env index first: image Uint8Array(N*H*W*3), box Float32Array(N*size),
 *  discrete Int32Array(N), text string[N]. */
export type ObsValue = Uint8Array | Float32Array | Int32Array | string[];
export type BatchObs = Record<string, ObsValue>;
/** Per action entry: Int32Array(N) of bin indices (discrete) or Float32Array(N*size) (box). */
export type BatchAction = Record<string, Int32Array | Float32Array>;

export type EnvSource = 'physics' | 'world-model' | 'executor' | 'toy';

export interface ResetOptions {
  /** Env i gets seed + i (or seed[i]); omitted: continue each env's own seed sequence. */
  seed?: number | number[];
  /** Only envs with mask[i] true are reset; the others keep their state and observation. */
  mask?: ArrayLike<boolean | number>;
  /** Env i's episode key for the env's own random draws (learned models sampling a member); default
   *  its seed. Rollouts that share a seed but not a key draw independently. */
  keys?: ArrayLike<number>;
}

export interface StepOptions {
  /** Only envs with mask[i] true step; the others do nothing and cost nothing (they need not have been
   *  reset): they keep their state and observation, their reward is 0, and the rest of their row in
   *  the result says nothing. Omitted: every env steps. */
  mask?: ArrayLike<boolean | number>;
}

export interface ResetInfo {
  source: EnvSource;
  /** The seed each env was reset with (unchanged envs keep their previous seed). */
  seeds: Int32Array;
  /** Instruction or task description per env, when the env has one. */
  instruction?: string[];
}

export interface StepInfo {
  source: EnvSource;
  /** 1 where the task verifier says the episode is solved. */
  success: Uint8Array;
  /** The episode's dense score in [0, 1] so far: the trajectory reward the trainer reads (the tabletop's
   *  taskReward of Φ; an AutoResearch ladder value). */
  progress: Float64Array;
  /** Learned engines: member variance of `progress` (undefined means exact). */
  progressVar?: Float64Array;
  /** Named reward terms, exactly the names in spec.rewardTerms. */
  terms: Record<string, Float64Array>;
  /** Tabletop: 1 where an object left the table, which ends the episode as a failure. */
  offTable?: Uint8Array;
}

export interface StepResult {
  obs: BatchObs;
  reward: Float64Array;
  /** Filled by learned models (variance of the reward estimate); undefined means exact. */
  rewardVar?: Float64Array;
  terminated: Uint8Array;
  truncated: Uint8Array;
  info: StepInfo;
}

/** The batched, async environment contract shared by physics, world model, AutoResearch and toys.
 *  No autoreset: after terminated/truncated the caller resets (with a mask); a step's mask names the
 *  envs that run, so idle ones cost nothing. */
export interface Env {
  readonly spec: EnvSpec;
  readonly numEnvs: number;
  reset(options?: ResetOptions): Promise<{ obs: BatchObs; info: ResetInfo }>;
  step(action: BatchAction, options?: StepOptions): Promise<StepResult>;
  close(): void;
}

/** Exact state capture: restore(snapshot()) makes the env continue bit-identically. */
export interface Snapshottable {
  snapshot(): EnvSnapshot;
  restore(snapshot: EnvSnapshot): void;
}
export interface EnvSnapshot {
  readonly envId: string;
  readonly numEnvs: number;
  readonly data: unknown;
}

/** Where a branched episode starts: which episode, how far into it, and its state. */
export interface EpisodeStart {
  /** The episode's seed (its task instance). */
  seed: number;
  /** Steps the episode had taken (they count toward spec.maxEpisodeSteps). */
  elapsed: number;
  /** The state as the env's capture() writes it (the layout is the env's own). */
  row: ArrayLike<number>;
  /** Key of the episode's random draws in the env (learned models sampling a member); default the seed. */
  key?: number;
  /** An engine's exact copy of the slot (capture with exact: true), where the row alone is not exact. */
  exact?: Uint8Array;
}

/** Branching: start episodes from states another episode (or another engine) visited. */
export interface Branchable {
  /** Env `slot`'s current state; with `exact`, also the engine's exact copy where it has one. */
  capture(slot: number, options?: { exact?: boolean }): EpisodeStart;
  /** Slots[j] continue from starts[j]; the other envs keep their state and observation. A captured
   *  start continues exactly as the episode that was captured (same actions, same steps). */
  resetFrom(slots: readonly number[], starts: readonly EpisodeStart[]): Promise<{ obs: BatchObs; info: ResetInfo }>;
}

/** A body pose for the viewer: position xyz and quaternion xyzw in the world frame. */
export interface BodyPose {
  name: string;
  pos: [number, number, number];
  quat: [number, number, number, number];
}
export interface FrameSource {
  /** Body poses of env `index` (default 0) for the live viewer. */
  frame(index?: number): BodyPose[];
}

export function hasSnapshot<E extends Env>(env: E): env is E & Snapshottable {
  const e = env as Partial<Snapshottable>;
  return typeof e.snapshot === 'function' && typeof e.restore === 'function';
}

export function canBranch<E extends Env>(env: E): env is E & Branchable {
  const e = env as Partial<Branchable>;
  return typeof e.capture === 'function' && typeof e.resetFrom === 'function';
}

export function hasFrame<E extends Env>(env: E): env is E & FrameSource {
  return typeof (env as Partial<FrameSource>).frame === 'function';
}
