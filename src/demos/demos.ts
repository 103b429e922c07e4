// Expert demonstrations for behaviour cloning. Collection runs the privileged scripted expert and
// executes its tokens with noise (each token replaced by a uniform one with probability `noise`), but
// labels every step with the expert's clean token for the state actually visited (DART): the data
// shows recoveries from perturbed states. On disk: see folder.ts (a run folder plus labels.bin,
// counterfactual.bin and demos.json).
// Observations are not stored: the env is deterministic, so pretraining re-simulates them from the
// seed and the executed tokens (and checks the rewards match).
import { InputError } from '../core/errors.ts';
import type { BatchAction, BatchObs } from '../env/types.ts';
import { ACTION_NAMES, camerasOf, createTabletopEnv } from '../physics/index.ts';
import { type BcDataset, emptyBcDataset } from '../policy/bc.ts';
import type { VlaConfig } from '../policy/vla.ts';
import type { WordTokenizer } from '../policy/tokenizer.ts';
import type { StoredEpisode } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { runEpisodes } from '../physics/index.ts';
import { counterfactualTask, type Demo, type ExpertLabeller, noisyExpert } from './labels.ts';

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
  let labeller: ExpertLabeller | null = null;
  const episodes = await runEpisodes({
    scene,
    taskId,
    policyName: `expert+noise${o.noise}`,
    episodes: o.episodes,
    split: 'train',
    seedOffset: o.seedOffset,
    numEnvs: o.numEnvs,
    recordStates: true,
    makePolicy: (env) => {
      const policy = noisyExpert(env, o.noise, o.seed);
      labeller = policy.labeller;
      return policy;
    },
    onEpisode: o.onEpisode,
  });
  return labeller!.demos(episodes);
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
  o: { numEnvs: number; counterfactual: boolean; cameras?: readonly string[] },
  ids: readonly number[],
): Promise<void> {
  const A = ACTION_NAMES.length;
  const cf = o.counterfactual;
  const env = await createTabletopEnv({
    scene,
    taskId,
    numEnvs: Math.min(o.numEnvs, demos.length),
    cameras: o.cameras && [...o.cameras],
  });
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
        const r = await env.step(action, { mask: seeds.map((_, i) => i < group.length && t < group[i].length) });
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
 *  instruction). `cameras`: the scene cameras rendered (default: the fixed ones), camerasOf(config.cameras)
 *  for the policy the rows are for. */
export async function replayDemos(
  scene: Scene,
  demos: Demo[],
  tokenizer: WordTokenizer,
  sink: RowSink,
  o: { numEnvs?: number; counterfactual?: boolean; cameras?: readonly string[] } = {},
): Promise<void> {
  const options = { numEnvs: o.numEnvs ?? 8, counterfactual: o.counterfactual ?? false, cameras: o.cameras };
  for (const taskId of [...new Set(demos.map((d) => d.task))]) {
    const ids = demos.flatMap((d, k) => (d.task === taskId ? [k] : []));
    const group = ids.map((k) => demos[k]);
    await replayTask(scene, taskId, group, sink, tokenizer, options, ids);
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
    { ...o, cameras: camerasOf(config.cameras) },
  );
  return ds;
}
