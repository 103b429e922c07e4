// Expert demonstrations for behaviour cloning. Collection runs the privileged scripted expert and
// executes its tokens with noise (each token replaced by a uniform one with probability `noise`), but
// labels every step with the expert's clean token for the state actually visited (DART): the data
// shows recoveries from perturbed states. On disk: see folder.ts (a run folder plus labels.bin,
// counterfactual.bin and demos.json).
// Observations are not stored: the env is deterministic, so pretraining re-simulates them from the
// seed and the executed tokens (and checks the rewards match).
import { InputError } from '../core/errors.ts';
import { DRAW, drawRng } from '../core/rng.ts';
import type { BatchAction, BatchObs } from '../env/types.ts';
import { ACTION_NAMES, ScriptedExpert, createTabletopEnv, type TabletopEnv } from '../physics/index.ts';
import { type BcDataset, emptyBcDataset } from '../policy/bc.ts';
import type { VlaConfig } from '../policy/vla.ts';
import type { WordTokenizer } from '../policy/tokenizer.ts';
import { actionBins } from '../core/spec.ts';
import { noiseTokens, type Policy, type StoredEpisode } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import type { TaskInstance } from '../task/index.ts';
import { runEpisodes } from '../physics/index.ts';

export type Demo = StoredEpisode & { labels: Int32Array; counterfactual: CounterfactualLabel[] };

/** The same episode with another object to manipulate: same layout and target, the instruction with
 *  the object's phrase swapped (null when that object is the target). */
export function counterfactualTask(scene: Scene, task: TaskInstance, object: number): TaskInstance | null {
  if (object === task.object || (task.target.kind === 'object' && task.target.index === object)) return null;
  const from = scene.objects[task.object].words;
  const k = from.findIndex((w) => task.instruction.includes(w));
  if (k < 0)
    throw new Error(`instruction "${task.instruction}" does not name object ${scene.objects[task.object].name}`);
  const to = scene.objects[object].words;
  return { ...task, object, instruction: task.instruction.replace(from[k], to[k] ?? to[0]) };
}

/** One counterfactual label: at step `step` of the episode, had the instruction named `object`, the
 *  expert would have chosen `tokens` (recorded only while both experts are still approaching). */
export interface CounterfactualLabel {
  step: number;
  object: number;
  tokens: number[];
}

/** An expert that reads the real state but another object's task (cached per real task, so its phase
 *  memory persists through the episode). */
function counterfactualExpert(env: TabletopEnv, object: number): ScriptedExpert {
  const cache = new Map<TaskInstance, TaskInstance | null>();
  const taskOf = (i: number): TaskInstance | null => {
    const real = env.task(i);
    if (!cache.has(real)) cache.set(real, counterfactualTask(env.scene, real, object));
    return cache.get(real)!;
  };
  return new ScriptedExpert({
    numEnvs: env.numEnvs,
    scene: env.scene,
    state: (i) => env.state(i),
    task: (i) => taskOf(i) ?? env.task(i),
  });
}

/** The expert acting with token noise (drawn per episode and step, so the demonstrations do not depend
 *  on --num-envs); `labels` keeps, per episode seed, the clean tokens it chose, and `counterfactual`
 *  what it would have chosen for each other object at approach-phase steps. */
export function noisyExpert(
  env: TabletopEnv,
  noise: number,
  seed: number,
): Policy & { labels: Map<number, number[]>; counterfactual: Map<number, CounterfactualLabel[]> } {
  const expert = new ScriptedExpert(env);
  const others = env.scene.objects.map((_, o) => ({ object: o, expert: counterfactualExpert(env, o) }));
  const dims = actionBins(env.spec);
  const labels = new Map<number, number[]>();
  const counterfactual = new Map<number, CounterfactualLabel[]>();
  const slotSeed = new Int32Array(env.numEnvs).fill(-1);
  return {
    labels,
    counterfactual,
    onReset(envs, info) {
      for (const i of envs) {
        slotSeed[i] = info.seeds[i];
        labels.set(info.seeds[i], []);
        counterfactual.set(info.seeds[i], []);
      }
    },
    act(_obs, ctx) {
      const clean = expert.act();
      const alt = others.map((x) => x.expert.act());
      const out: BatchAction = {};
      for (const name of ACTION_NAMES) out[name] = Int32Array.from(clean[name]);
      for (let i = 0; i < env.numEnvs; i++) {
        const rec = labels.get(slotSeed[i]);
        if (!rec || ctx.keys[i] < 0) continue;
        const step = ctx.steps[i];
        others.forEach((x, k) => {
          if (x.object === env.task(i).object || counterfactualTask(env.scene, env.task(i), x.object) === null) return;
          if (expert.phase(i) !== 'approach' || x.expert.phase(i) !== 'approach') return;
          counterfactual
            .get(slotSeed[i])!
            .push({ step, object: x.object, tokens: ACTION_NAMES.map((n) => alt[k][n][i]) });
        });
        for (const name of ACTION_NAMES) rec.push(clean[name][i]);
        if (noise > 0) noiseTokens(dims, out, i, noise, drawRng(seed, ctx.keys[i], step, DRAW.tokenNoise));
      }
      return { actions: out };
    },
  };
}

/** Demonstrations of one task on train-split episodes [seedOffset, seedOffset + episodes). */
export async function collectDemos(
  scene: Scene,
  taskId: string,
  o: {
    episodes: number;
    noise: number;
    seed: number;
    seedOffset: number;
    numEnvs: number;
    onEpisode?: (e: StoredEpisode) => void;
  },
): Promise<Demo[]> {
  let policy: ReturnType<typeof noisyExpert> | null = null;
  const episodes = await runEpisodes({
    scene,
    taskId,
    policyName: `expert+noise${o.noise}`,
    episodes: o.episodes,
    split: 'train',
    seedOffset: o.seedOffset,
    numEnvs: o.numEnvs,
    recordStates: true,
    makePolicy: (env) => (policy = noisyExpert(env, o.noise, o.seed)),
    onEpisode: o.onEpisode,
  });
  return episodes.map((e) => ({
    ...e,
    labels: Int32Array.from(policy!.labels.get(e.seed)!.slice(0, e.actions.length)),
    counterfactual: policy!.counterfactual.get(e.seed)!.filter((x) => x.step < e.length),
  }));
}

/** Where re-simulated rows go: each frame once, then the rows on it (the real step's, then its
 *  counterfactual ones). Labels come in ACTION_NAMES order. */
export interface RowSink {
  frame(obs: BatchObs, i: number): void;
  row(tokens: Int32Array, labels: ArrayLike<number>, episode: number): void;
}

/** The number of rows the demos make. */
export function demoRows(demos: readonly Demo[], counterfactual: boolean): number {
  return demos.reduce((s, d) => s + d.length + (counterfactual ? d.counterfactual.length : 0), 0);
}

/** Re-simulates one task's demos (executed tokens from their seeds) into `sink`; throws if a replayed
 *  reward differs from the recorded one (the env must be deterministic). */
async function replayTask(
  scene: Scene,
  taskId: string,
  demos: Demo[],
  sink: RowSink,
  tokenizer: WordTokenizer,
  numEnvs: number,
  cf: boolean,
  ids: readonly number[],
): Promise<void> {
  const A = ACTION_NAMES.length;
  const env = await createTabletopEnv({ scene, taskId, numEnvs: Math.min(numEnvs, demos.length) });
  try {
    for (let start = 0; start < demos.length; start += env.numEnvs) {
      const group = demos.slice(start, start + env.numEnvs);
      const seeds = Array.from({ length: env.numEnvs }, (_, i) => group[Math.min(i, group.length - 1)].seed);
      let { obs } = await env.reset({ seed: seeds });
      const tokens = group.map((d) => tokenizer.encode(d.instruction));
      const longest = Math.max(...group.map((d) => d.length));
      for (let t = 0; t < longest; t++) {
        const action: BatchAction = {};
        for (const [j, name] of ACTION_NAMES.entries())
          action[name] = Int32Array.from(seeds, (_, i) =>
            i < group.length && t < group[i].length ? group[i].actions[t * A + j] : 0,
          );
        group.forEach((d, i) => {
          if (t >= d.length) return;
          sink.frame(obs, i);
          sink.row(tokens[i], d.labels.subarray(t * A, (t + 1) * A), ids[start + i]);
          if (!cf) return;
          for (const x of d.counterfactual) {
            if (x.step !== t) continue;
            const instruction = counterfactualTask(scene, env.task(i), x.object)!.instruction;
            sink.row(tokenizer.encode(instruction), x.tokens, ids[start + i]);
          }
        });
        const r = await env.step(action);
        group.forEach((d, i) => {
          if (t < d.length && r.reward[i] !== d.rewards[t])
            throw new InputError(
              `replay of ${taskId} seed ${d.seed} diverged at step ${t}: ` +
                `reward ${r.reward[i]}, recorded ${d.rewards[t]} ` +
                '(the demonstration folder was edited, or made by another build of the simulator)',
            );
        });
        obs = r.obs;
      }
    }
  } finally {
    env.close();
  }
}

/** Re-simulates demos task by task (in order of first appearance) into `sink`; a row's episode is its
 *  demo's index. With `counterfactual`, approach-phase frames also carry the other objects' instructions
 *  and labels (the same image, a different instruction, a different action: the policy must read the
 *  instruction). */
export async function replayDemos(
  scene: Scene,
  demos: Demo[],
  tokenizer: WordTokenizer,
  sink: RowSink,
  o: { numEnvs?: number; counterfactual?: boolean } = {},
): Promise<void> {
  for (const taskId of [...new Set(demos.map((d) => d.task))]) {
    const ids = demos.flatMap((d, k) => (d.task === taskId ? [k] : []));
    const group = ids.map((k) => demos[k]);
    await replayTask(scene, taskId, group, sink, tokenizer, o.numEnvs ?? 8, o.counterfactual ?? false, ids);
  }
}

/** The in-memory BC dataset of demos (replayDemos): every row holds a copy of its frame. */
export async function demosToDataset(
  scene: Scene,
  demos: Demo[],
  config: VlaConfig,
  tokenizer: WordTokenizer,
  o: { numEnvs?: number; counterfactual?: boolean } = {},
): Promise<BcDataset> {
  const size = demoRows(demos, o.counterfactual ?? false);
  const ds: BcDataset = { ...emptyBcDataset(config, size), episode: new Int32Array(size) };
  const [h, w] = config.imageSize;
  const px = h * w * 3;
  const d = config.proprio?.dim ?? 0;
  const L = config.tokenizer.maxLength;
  let frame: { obs: BatchObs; i: number } | null = null;
  let row = 0;
  await replayDemos(
    scene,
    demos,
    tokenizer,
    {
      frame: (obs, i) => {
        frame = { obs, i };
      },
      row: (tokens, labels, episode) => {
        const { obs, i } = frame!;
        for (const cam of config.cameras)
          ds.images[cam].set((obs[cam] as Uint8Array).subarray(i * px, (i + 1) * px), row * px);
        if (config.proprio)
          ds.proprio!.set((obs[config.proprio.name] as Float32Array).subarray(i * d, (i + 1) * d), row * d);
        ds.tokens.set(tokens, row * L);
        for (const [j, name] of ACTION_NAMES.entries()) ds.labels[name][row] = labels[j];
        ds.episode![row++] = episode;
      },
    },
    o,
  );
  return ds;
}
