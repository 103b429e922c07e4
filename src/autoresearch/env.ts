// AutoResearchEnv: an agent proposes up to MAX_TURNS experiments on one task. Observation: the task's
// description and the last turn's feedback (text) and the dataset's meta-features with the episode's
// record so far (box). Action: the program's PROGRAM_SLOTS tokens. Reward of a turn: the ladder value of
// its outcome; info.progress: the best ladder value so far (the trajectory reward the trainer reads).
// The same class runs on the real executor and on the outcome world model (outcomeSource).
import { EnvSpecSchema, type EnvSpec } from '../core/spec.ts';
import { assertAction } from '../env/action.ts';
import { assertStarts, inMask } from '../env/batch.ts';
import { resolveResetSeeds } from '../env/seeds.ts';
import type {
  BatchAction,
  BatchObs,
  Branchable,
  Env,
  EnvSource,
  EpisodeStart,
  ResetInfo,
  ResetOptions,
  StepOptions,
  StepResult,
} from '../env/types.ts';
import { PROGRAM_SLOTS, VOCAB } from './dsl.ts';
import { type Outcome, STATUSES, ladder } from './proposal.ts';
import { META_NAMES, type TaskData, metaFeatures } from './tasks.ts';
import { researchRow, stateFromRow } from './row.ts';

export const MAX_TURNS = 4;
/** A best leaderboard position at least this ends the episode early (solved). */
export const SOLVED_POSITION = 0.95;
/** Success: some turn's run beats at least half the leaderboard. */
export const SUCCESS_POSITION = 0.5;
export const TEXT_MAX = 600;
export const ACTION_NAMES = Array.from({ length: PROGRAM_SLOTS }, (_, t) => `tok_${t}`);
/** The box: meta-features, then turn / MAX_TURNS, best ladder value, last ladder value, last position,
 *  and the last status one-hot (all zero before the first turn). */
export const RECORD_NAMES = ['turn', 'best', 'last_reward', 'last_position', ...STATUSES.map((s) => `last_${s}`)];

/** Where an env slot stands: the carried state (branching restores it). */
export interface ResearchState {
  seed: number;
  turn: number;
  best: number;
  bestPosition: number;
  last: Outcome | null;
  /** The last turn's program. */
  lastTokens?: Int32Array;
  /** Test-score position of the run with the best validation position so far (what a researcher would
   *  submit; reported, never rewarded). */
  bestTestPosition?: number;
}

const solved = (s: ResearchState) => s.bestPosition >= SOLVED_POSITION;

export function researchSpec(task: TaskData): EnvSpec {
  return EnvSpecSchema.parse({
    id: `autoresearch/${task.spec.id}`,
    observation: [
      { kind: 'text', name: 'instruction', maxLength: TEXT_MAX },
      { kind: 'box', name: 'meta', shape: [META_NAMES.length + RECORD_NAMES.length], low: -20, high: 20 },
    ],
    action: ACTION_NAMES.map((name) => ({ kind: 'discrete', name, n: VOCAB.length })),
    maxEpisodeSteps: MAX_TURNS,
    rewardTerms: ['ladder', 'position'],
  });
}

/** Scores the proposals of the given slots: real execution, or the outcome model's prediction (which
 *  gives its expected ladder reward and the members' variance of it). */
export interface OutcomeSource {
  readonly source: EnvSource;
  outcomes(
    task: TaskData,
    proposals: { tokens: Int32Array; seed: number; state: ResearchState }[],
  ): Promise<{ outcome: Outcome; reward?: number; rewardVar?: number }[]>;
}

export class AutoResearchEnv implements Env, Branchable {
  readonly spec: EnvSpec;
  private states: ResearchState[];
  private seeds: Int32Array;
  private readonly meta: Float32Array;

  constructor(
    readonly task: TaskData,
    readonly numEnvs: number,
    private readonly scorer: OutcomeSource,
  ) {
    if (!Number.isInteger(numEnvs) || numEnvs < 1)
      throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    this.spec = researchSpec(task);
    this.meta = metaFeatures(task);
    this.seeds = new Int32Array(numEnvs).fill(-1);
    this.states = Array.from({ length: numEnvs }, () => ({ seed: -1, turn: 0, best: 0, bestPosition: 0, last: null }));
  }

  async reset(options: ResetOptions = {}): Promise<{ obs: BatchObs; info: ResetInfo }> {
    const seeds = resolveResetSeeds(this.seeds, options);
    return this.startFrom(
      Array.from(seeds, (seed, i) =>
        options.mask && !options.mask[i] ? null : { seed, turn: 0, best: 0, bestPosition: 0, last: null },
      ),
    );
  }

  /** Rows: researchRow's layout (the turn, the best result so far, the last run and its program). */
  capture(slot: number): EpisodeStart {
    const s = this.states[slot];
    if (s.seed < 0) throw new Error(`${this.spec.id}: env ${slot} has not been reset`);
    return { seed: s.seed, elapsed: s.turn, row: researchRow(s) };
  }

  async resetFrom(
    slots: readonly number[],
    starts: readonly EpisodeStart[],
  ): Promise<{ obs: BatchObs; info: ResetInfo }> {
    assertStarts(this.numEnvs, MAX_TURNS, slots, starts);
    const all: (ResearchState | null)[] = new Array(this.numEnvs).fill(null);
    slots.forEach((i, j) => (all[i] = stateFromRow(this.task, starts[j].seed, starts[j].row)));
    return this.startFrom(all);
  }

  /** Slot i continues from starts[i] (null: unchanged): an episode's state after some turns. */
  private startFrom(starts: readonly (ResearchState | null)[]): { obs: BatchObs; info: ResetInfo } {
    starts.forEach((s, i) => {
      if (!s) return;
      if (!(s.turn >= 0 && s.turn < MAX_TURNS))
        throw new RangeError(`resetFrom: starts[${i}].turn must lie in [0, ${MAX_TURNS})`);
      this.states[i] = { ...s };
      this.seeds[i] = s.seed;
    });
    return {
      obs: this.observe(),
      info: {
        source: this.scorer.source,
        seeds: this.seeds.slice(),
        instruction: this.states.map(() => this.task.spec.description),
      },
    };
  }

  state(i: number): ResearchState {
    return { ...this.states[i] };
  }

  /** Runs the proposals of the envs in the mask whose episode has not ended (the others cost nothing). */
  async step(action: BatchAction, options: StepOptions = {}): Promise<StepResult> {
    assertAction(this.spec, this.numEnvs, action);
    const n = this.numEnvs;
    const stepping = (i: number) => inMask(options.mask, i);
    if (this.states.some((s, i) => stepping(i) && s.seed < 0))
      throw new Error(`${this.spec.id}: step() before reset()`);
    const live = this.states.flatMap((s, i) => (!stepping(i) || solved(s) || s.turn >= MAX_TURNS ? [] : [i]));
    const proposals = live.map((i) => ({
      tokens: Int32Array.from(ACTION_NAMES, (name) => (action[name] as Int32Array)[i]),
      seed: this.states[i].seed,
      state: this.state(i),
    }));
    const scored = await this.scorer.outcomes(this.task, proposals);
    const reward = new Float64Array(n),
      rewardVar = new Float64Array(n),
      position = new Float64Array(n);
    let learned = false;
    live.forEach((i, k) => {
      const { outcome, reward: expected, rewardVar: v } = scored[k];
      const s = this.states[i];
      const r = expected ?? ladder(outcome.status, outcome.position);
      reward[i] = r;
      position[i] = outcome.position ?? 0;
      if (v !== undefined) {
        rewardVar[i] = v;
        learned = true;
      }
      const better =
        outcome.position !== undefined && (s.bestTestPosition === undefined || outcome.position > s.bestPosition);
      this.states[i] = {
        seed: s.seed,
        turn: s.turn + 1,
        best: Math.max(s.best, r),
        bestPosition: Math.max(s.bestPosition, outcome.position ?? 0),
        last: outcome,
        lastTokens: proposals[k].tokens,
        bestTestPosition: better ? outcome.testPosition : s.bestTestPosition,
      };
    });
    const terminated = new Uint8Array(n),
      truncated = new Uint8Array(n),
      success = new Uint8Array(n),
      progress = new Float64Array(n);
    this.states.forEach((s, i) => {
      progress[i] = s.best;
      success[i] = s.bestPosition >= SUCCESS_POSITION ? 1 : 0;
      terminated[i] = solved(s) ? 1 : 0;
      truncated[i] = !terminated[i] && s.turn >= MAX_TURNS ? 1 : 0;
    });
    return {
      obs: this.observe(),
      reward,
      ...(learned ? { rewardVar } : {}),
      terminated,
      truncated,
      info: { source: this.scorer.source, success, progress, terms: { ladder: reward, position } },
    };
  }

  close(): void {}

  private observe(): BatchObs {
    const width = META_NAMES.length + RECORD_NAMES.length;
    const meta = new Float32Array(this.numEnvs * width);
    const text = this.states.map((s, i) => {
      meta.set(
        this.meta.map((x) => Math.max(-20, Math.min(20, x))),
        i * width,
      );
      const rec = [
        s.turn / MAX_TURNS,
        s.best,
        s.last ? ladder(s.last.status, s.last.position) : 0,
        s.last?.position ?? 0,
        ...STATUSES.map((st) => (s.last?.status === st ? 1 : 0)),
      ];
      meta.set(rec, i * width + META_NAMES.length);
      const feedback = s.last ? ` last: ${s.last.feedback}` : '';
      return `${this.task.spec.description}${feedback}`.slice(0, TEXT_MAX);
    });
    return { instruction: text, meta };
  }
}
