// Held-out evaluation of a dynamics against recorded physics episodes: 1-step error per state group,
// open-loop error at several horizons, reward calibration (bias, rank correlation) and the
// hallucinated-success rate (the world model says success where physics does not).
import { spearman } from '../core/stats.ts';
import type { BatchAction } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import { sampleTask } from '../task/sample.ts';
import { stateSize, unpackState } from '../task/state.ts';
import type { TaskInstance } from '../task/types.ts';
import { OFF_TABLE_DEPTH, scoreTask } from '../task/verify.ts';
import type { EpisodeData } from './dataset.ts';
import type { Dynamics } from './dynamics.ts';
import { stateGroups } from './features.ts';

export interface GroupErrors {
  /** Tool-centre-point position error (m), finger opening error (m, mean of both), object position
   *  error (m, mean over objects) and the task object's position error (m). */
  ee_m: number;
  fingers_m: number;
  objects_m: number;
  task_object_m: number;
  n: number;
}

export interface EvalReport {
  episodes: number;
  /** Episodes left out because an object fell below z = -OFF_TABLE_DEPTH: recorded before episodes ended as
   *  an object leaves the table, such objects fell for metres and would swamp every mean. */
  excluded_off_table: { task: string; seed: number }[];
  transitions: number;
  one_step: GroupErrors & { copy_baseline: GroupErrors };
  open_loop: Record<string, GroupErrors>;
  reward: {
    /** mean(r_wm - r_env) per transition; r_wm = ensemble-mean verifier reward. */
    bias: number;
    /** Spearman's; null where either side is constant. */
    rank_corr: number | null;
    progress_bias: number;
    progress_rank_corr: number | null;
    /** P(world model says success | physics does not), per transition (1-step from real states). */
    hallucinated_success_rate: number;
    missed_success_rate: number;
    env_successes: number;
  };
  /** Whole episodes replayed open-loop from their first state with the recorded actions. */
  replay: { hallucinated_success_rate: number; wm_success_rate: number; env_success_rate: number; agreement: number };
}

const CHUNK = 2048;

/** Whether some object of the episode leaves the table at any recorded step. */
export function fellOffTable(e: EpisodeData, objects: number): boolean {
  const S = stateSize(objects);
  const z = stateGroups(objects).objectPos.map((idx) => idx[2]);
  for (let t = 0; t <= e.length; t++) for (const j of z) if (e.states[t * S + j] < -OFF_TABLE_DEPTH) return true;
  return false;
}

export function tokensOf(actionNames: readonly string[], rows: { e: EpisodeData; t: number }[]): BatchAction {
  const A = actionNames.length;
  const out: BatchAction = {};
  actionNames.forEach((name, j) => (out[name] = Int32Array.from(rows, ({ e, t }) => e.actions[t * A + j])));
  return out;
}

class ErrorSum {
  private s = { ee: 0, f: 0, o: 0, task: 0, n: 0 };
  constructor(private readonly groups: ReturnType<typeof stateGroups>) {}

  add(pred: ArrayLike<number>, p: number, truth: ArrayLike<number>, t: number, taskObject: number): void {
    const g = this.groups;
    const dist = (idx: number[]) => Math.sqrt(idx.reduce((s, j) => s + (pred[p + j] - truth[t + j]) ** 2, 0));
    this.s.ee += dist(g.ee);
    this.s.f += 0.5 * (Math.abs(pred[p + 4] - truth[t + 4]) + Math.abs(pred[p + 5] - truth[t + 5]));
    let o = 0;
    for (const idx of g.objectPos) o += dist(idx);
    this.s.o += o / g.objectPos.length;
    this.s.task += dist(g.objectPos[taskObject]);
    this.s.n++;
  }

  result(): GroupErrors {
    const n = Math.max(1, this.s.n);
    return {
      ee_m: this.s.ee / n,
      fingers_m: this.s.f / n,
      objects_m: this.s.o / n,
      task_object_m: this.s.task / n,
      n: this.s.n,
    };
  }
}

/** Evaluates `dyn` on recorded episodes (states and actions from physics). */
export async function evaluateDynamics(
  dyn: Dynamics,
  scene: Scene,
  actionNames: readonly string[],
  recorded: readonly EpisodeData[],
  horizons: readonly number[] = [5, 10, 20],
): Promise<EvalReport> {
  const S = stateSize(scene.objects.length);
  const M = scene.objects.length;
  const fell = recorded.filter((e) => fellOffTable(e, M));
  const episodes = recorded.filter((e) => !fell.includes(e));
  const groups = stateGroups(M);
  const tasks = episodes.map((e) => sampleTask(scene, e.taskId, e.seed));
  const score = (task: TaskInstance, v: ArrayLike<number>, o: number) => scoreTask(scene, task, unpackState(v, M, o));

  // 1-step from real states.
  const rows = episodes.flatMap((e, i) => Array.from({ length: e.length }, (_, t) => ({ e, t, i })));
  const one = new ErrorSum(groups),
    copy = new ErrorSum(groups);
  const rWm: number[] = [],
    rEnv: number[] = [],
    pWm: number[] = [],
    pEnv: number[] = [];
  let halluc = 0,
    missed = 0,
    envWins = 0;
  for (let c = 0; c < rows.length; c += CHUNK) {
    const chunk = rows.slice(c, c + CHUNK);
    const states = new Float64Array(chunk.length * S);
    chunk.forEach(({ e, t }, r) => states.set(e.states.subarray(t * S, (t + 1) * S), r * S));
    const pred = await dyn.predict(
      states,
      tokensOf(actionNames, chunk),
      chunk.map((_, r) => r),
    );
    const K = dyn.members,
      R = chunk.length;
    chunk.forEach(({ e, t, i }, r) => {
      const task = tasks[i];
      one.add(pred.mean, r * S, e.states, (t + 1) * S, task.object);
      copy.add(states, r * S, e.states, (t + 1) * S, task.object);
      let wins = 0,
        prog = 0;
      for (let k = 0; k < K; k++) {
        const sc = score(task, pred.members, (k * R + r) * S);
        wins += sc.success ? 1 : 0;
        prog += sc.progress;
      }
      const truth = score(task, e.states, (t + 1) * S);
      const wmSays = score(task, pred.mean, r * S).success;
      rWm.push(wins / K);
      pWm.push(prog / K);
      rEnv.push(truth.success ? 1 : 0);
      pEnv.push(truth.progress);
      if (truth.success) {
        envWins++;
        if (!wmSays) missed++;
      } else if (wmSays) halluc++;
    });
  }
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / Math.max(1, v.length);
  const n = rows.length;
  return {
    episodes: episodes.length,
    excluded_off_table: fell.map((e) => ({ task: e.taskId, seed: e.seed })),
    transitions: n,
    one_step: { ...one.result(), copy_baseline: copy.result() },
    open_loop: await openLoop(dyn, actionNames, episodes, tasks, groups, S, horizons),
    reward: {
      bias: mean(rWm) - mean(rEnv),
      rank_corr: spearman(rWm, rEnv),
      progress_bias: mean(pWm) - mean(pEnv),
      progress_rank_corr: spearman(pWm, pEnv),
      hallucinated_success_rate: halluc / Math.max(1, n - envWins),
      missed_success_rate: missed / Math.max(1, envWins),
      env_successes: envWins,
    },
    replay: await replay(dyn, scene, actionNames, episodes, tasks, S),
  };
}

/** Open-loop rollouts of the ensemble mean from real states every 10 steps, with the recorded actions. */
async function openLoop(
  dyn: Dynamics,
  actionNames: readonly string[],
  episodes: readonly EpisodeData[],
  tasks: TaskInstance[],
  groups: ReturnType<typeof stateGroups>,
  S: number,
  horizons: readonly number[],
): Promise<Record<string, GroupErrors>> {
  const maxH = Math.max(...horizons);
  const starts = episodes.flatMap((e, i) =>
    Array.from({ length: Math.ceil(e.length / 10) }, (_, k) => ({ e, i, t0: 10 * k })).filter(
      (s) => s.t0 + Math.min(...horizons) <= e.length,
    ),
  );
  const sums = new Map(horizons.map((h) => [h, new ErrorSum(groups)]));
  for (let c = 0; c < starts.length; c += CHUNK) {
    const chunk = starts.slice(c, c + CHUNK);
    const states = new Float64Array(chunk.length * S);
    chunk.forEach(({ e, t0 }, r) => states.set(e.states.subarray(t0 * S, (t0 + 1) * S), r * S));
    for (let h = 0; h < maxH; h++) {
      const live = chunk.map((s, r) => (s.t0 + h < s.e.length ? r : -1)).filter((r) => r >= 0);
      if (live.length === 0) break;
      const acts = tokensOf(
        actionNames,
        chunk.map(({ e, t0 }) => ({ e, t: Math.min(t0 + h, e.length - 1) })),
      );
      const pred = await dyn.predict(states, acts, live);
      live.forEach((r, j) => {
        states.set(pred.mean.subarray(j * S, (j + 1) * S), r * S);
        const { e, t0, i } = chunk[r];
        const sum = sums.get(h + 1);
        if (sum) sum.add(states, r * S, e.states, (t0 + h + 1) * S, tasks[i].object);
      });
    }
  }
  return Object.fromEntries(horizons.map((h) => [`H${h}`, sums.get(h)!.result()]));
}

/** Whole-episode open-loop replay: does the world model declare success where physics did not? */
async function replay(
  dyn: Dynamics,
  scene: Scene,
  actionNames: readonly string[],
  episodes: readonly EpisodeData[],
  tasks: TaskInstance[],
  S: number,
): Promise<EvalReport['replay']> {
  const M = scene.objects.length;
  const n = episodes.length;
  const states = new Float64Array(n * S);
  episodes.forEach((e, i) => states.set(e.states.subarray(0, S), i * S));
  const wmWin = new Uint8Array(n),
    halluc = new Uint8Array(n),
    live = new Uint8Array(n).fill(1);
  const envWin = episodes.map((e, i) => scoreTask(scene, tasks[i], unpackState(e.states, M, e.length * S)).success);
  for (let t = 0; ; t++) {
    const rows = episodes.map((e, i) => (live[i] && t < e.length ? i : -1)).filter((i) => i >= 0);
    if (rows.length === 0) break;
    const pred = await dyn.predict(
      states,
      tokensOf(
        actionNames,
        episodes.map((e) => ({ e, t: Math.min(t, e.length - 1) })),
      ),
      rows,
    );
    rows.forEach((i, j) => {
      states.set(pred.mean.subarray(j * S, (j + 1) * S), i * S);
      if (scoreTask(scene, tasks[i], unpackState(states, M, i * S)).success) {
        wmWin[i] = 1;
        live[i] = 0;
        // physics success is terminal, so it holds only at the episode's last step
        if (!(envWin[i] && t + 1 === episodes[i].length)) halluc[i] = 1;
      }
    });
  }
  const sum = (v: ArrayLike<number>) => Array.from(v).reduce((s, x) => s + x, 0);
  const envN = envWin.filter(Boolean).length;
  return {
    hallucinated_success_rate: sum(halluc) / Math.max(1, n),
    wm_success_rate: sum(wmWin) / Math.max(1, n),
    env_success_rate: envN / Math.max(1, n),
    agreement: episodes.filter((_, i) => Boolean(wmWin[i]) === envWin[i]).length / Math.max(1, n),
  };
}
