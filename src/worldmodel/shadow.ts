// Shadow mode: a policy acts in the real env; the world model is stepped on the very same actions from
// the same start state. Reports per-step divergence (state groups and pixels) and how often the world
// model declares success where the real env does not.
import type { Env } from '../env/types.ts';
import type { Policy } from '../rollout/collect.ts';
import { packState, stateSize } from '../task/state.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import type { WorldModelEnv } from './env.ts';
import { stateGroups } from './features.ts';

/** The real side: any env that exposes its privileged state and task (the physics tabletop does). */
export interface ShadowReal extends Env {
  state(i: number): TabletopState;
  task(i: number): TaskInstance;
}

export const DIVERGENCE_KEYS = ['ee_m', 'fingers_m', 'objects_m', 'task_object_m', 'image_mae'] as const;
export type DivergenceKey = (typeof DIVERGENCE_KEYS)[number];

export interface ShadowReport {
  episodes: number;
  steps: number;
  env_success_rate: number;
  /** Episodes in which the world model terminated with success while the real env did not succeed at that step. */
  wm_success_rate: number;
  hallucinated_success_rate: number;
  /** Steps on which the world model reports success but the real env does not, over all real non-success steps. */
  hallucinated_step_rate: number;
  /** Mean divergence over every recorded step, and per step index (curves[key][t], over episodes alive at t). */
  mean: Record<DivergenceKey, number>;
  max: Record<DivergenceKey, number>;
  curves: Record<DivergenceKey, number[]>;
  /** Episodes alive at each step index. */
  alive: number[];
}

export interface ShadowOptions {
  seeds: readonly number[];
  policy: Policy;
  onEpisode?: (done: number, total: number) => void;
}

function divergence(
  a: TabletopState,
  b: TabletopState,
  taskObject: number,
  groups: ReturnType<typeof stateGroups>,
  S: number,
): Omit<Record<DivergenceKey, number>, 'image_mae'> {
  const pa = packState(a, new Float64Array(S));
  const pb = packState(b, new Float64Array(S));
  const dist = (idx: number[]) => Math.sqrt(idx.reduce((s, j) => s + (pa[j] - pb[j]) ** 2, 0));
  const objects = groups.objectPos.reduce((s, idx) => s + dist(idx), 0) / groups.objectPos.length;
  return {
    ee_m: dist(groups.ee),
    fingers_m: 0.5 * (Math.abs(pa[4] - pb[4]) + Math.abs(pa[5] - pb[5])),
    objects_m: objects,
    task_object_m: dist(groups.objectPos[taskObject]),
  };
}

function imageMae(a: Uint8Array | undefined, b: Uint8Array | undefined, i: number, n: number): number {
  if (!a || !b) return 0;
  const size = a.length / n;
  let s = 0;
  for (let k = i * size; k < (i + 1) * size; k++) s += Math.abs(a[k] - b[k]);
  return s / size;
}

export async function runShadow(real: ShadowReal, wm: WorldModelEnv, opts: ShadowOptions): Promise<ShadowReport> {
  const n = real.numEnvs;
  if (wm.numEnvs !== n) throw new RangeError(`shadow: world model has ${wm.numEnvs} envs, the real env ${n}`);
  const M = wm.scene.objects.length;
  const S = stateSize(M);
  const groups = stateGroups(M);
  const image = real.spec.observation.find((e) => e.kind === 'image')?.name;
  const sums = Object.fromEntries(DIVERGENCE_KEYS.map((k) => [k, [] as number[]])) as Record<DivergenceKey, number[]>;
  const maxes = Object.fromEntries(DIVERGENCE_KEYS.map((k) => [k, 0])) as Record<DivergenceKey, number>;
  const alive: number[] = [];
  let episodes = 0,
    steps = 0,
    envWins = 0,
    wmWins = 0,
    halluc = 0,
    hallucSteps = 0,
    nonSuccessSteps = 0;
  for (let w = 0; w < opts.seeds.length; w += n) {
    const wave = opts.seeds.slice(w, w + n);
    const seeds = Array.from({ length: n }, (_, i) => wave[i] ?? wave[0]);
    const first = await real.reset({ seed: seeds });
    // the real state alone: the world model solves the joints from home, the gripper open
    await wm.resetFrom(
      seeds.map((_, i) => i),
      seeds.map((_, i) => ({ seed: real.task(i).seed, elapsed: 0, row: packState(real.state(i)) })),
    );
    opts.policy.onReset?.(
      Array.from({ length: n }, (_, i) => i),
      first.info,
    );
    const ctx = {
      keys: Float64Array.from(seeds, (seed, i) => (i < wave.length ? seed : -1)),
      steps: new Int32Array(n),
    };
    let obs = first.obs;
    const live = Array.from({ length: n }, (_, i) => i < wave.length);
    const wmDone = new Uint8Array(n),
      flagged = new Uint8Array(n);
    for (let t = 0; live.some(Boolean); t++) {
      ctx.steps.fill(t);
      const { actions: action } = await opts.policy.act(obs, ctx);
      const r = await real.step(action, { mask: live });
      const m = await wm.step(action, { mask: live });
      obs = r.obs;
      for (let i = 0; i < n; i++) {
        if (!live[i]) continue;
        const d = {
          ...divergence(real.state(i), wm.state(i), real.task(i).object, groups, S),
          image_mae: image ? imageMae(r.obs[image] as Uint8Array, m.obs[image] as Uint8Array, i, n) : 0,
        };
        for (const k of DIVERGENCE_KEYS) {
          sums[k][t] = (sums[k][t] ?? 0) + d[k];
          maxes[k] = Math.max(maxes[k], d[k]);
        }
        alive[t] = (alive[t] ?? 0) + 1;
        steps++;
        const envOk = r.info.success[i] === 1;
        const wmOk = !wmDone[i] ? m.info.success[i] === 1 : false;
        if (!envOk) {
          nonSuccessSteps++;
          if (wmOk) hallucSteps++;
        }
        if (!wmDone[i] && m.terminated[i]) {
          wmWins++;
          if (!envOk && !flagged[i]) {
            halluc++;
            flagged[i] = 1;
          }
        }
        if (m.terminated[i] || m.truncated[i]) wmDone[i] = 1;
        if (r.terminated[i] || r.truncated[i]) {
          live[i] = false;
          episodes++;
          if (envOk) envWins++;
          opts.onEpisode?.(episodes, opts.seeds.length);
        }
      }
    }
  }
  const curves = Object.fromEntries(DIVERGENCE_KEYS.map((k) => [k, sums[k].map((s, t) => s / alive[t])])) as Record<
    DivergenceKey,
    number[]
  >;
  const mean = Object.fromEntries(
    DIVERGENCE_KEYS.map((k) => [k, sums[k].reduce((a, b) => a + b, 0) / Math.max(1, steps)]),
  ) as Record<DivergenceKey, number>;
  const rate = (a: number, b: number) => a / Math.max(1, b);
  return {
    episodes,
    steps,
    env_success_rate: rate(envWins, episodes),
    wm_success_rate: rate(wmWins, episodes),
    hallucinated_success_rate: rate(halluc, episodes),
    hallucinated_step_rate: rate(hallucSteps, nonSuccessSteps),
    mean,
    max: maxes,
    curves,
    alive,
  };
}
