// The run's own episodes, recorded at each held-out evaluation into the run folder in the rollout folder
// format (index.json + episodes.bin), so that the viewer lists and replays them: per task the first
// held-out physics episode, and a small world-model group branched from that episode's middle with the
// physics episode as its twin. Off the training clock; nothing here decides a training result.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { actionBins } from '../core/spec.ts';
import { canBranch, type Env } from '../env/types.ts';
import { type PolicySampler, samplerPolicy } from '../policy/sampler.ts';
import { collectEpisodes, type Episode, episodeFolderParts, readEpisodeFolder } from '../rollout/index.ts';
import type { StoredEpisode } from '../rollout/index.ts';
import { commitFiles } from '../store/index.ts';
import { recordRow } from './rollouts.ts';
import type { TrainConfig } from './config.ts';
import type { TrainTask } from './types.ts';

/** Evaluations whose episodes stay in the folder at most: the sample stays bounded over any run length. */
export const MAX_RECORDED_EVALUATIONS = 16;
/** World-model rollouts per recorded group. */
export const SAMPLE_GROUP = 4;
/** Rollout keys of the recorded world-model groups (far from any seed, so their draws are their own). */
const SAMPLE_KEY = 2 ** 40;

/** The evaluations (by ordinal 0, 1, ...) kept once `count` have run: every s-th one and the latest, with
 *  s the smallest power of two that keeps at most `max`. An evaluation once dropped is never kept again. */
export function keptEvaluations(count: number, max = MAX_RECORDED_EVALUATIONS): Set<number> {
  if (max < 2) throw new RangeError(`keptEvaluations: max must be at least 2, got ${max}`);
  let stride = 1;
  while (Math.ceil(count / stride) + 1 > max) stride *= 2;
  const kept = new Set<number>();
  for (let n = 0; n < count; n += stride) kept.add(n);
  if (count > 0) kept.add(count - 1);
  return kept;
}

export interface SampleContext {
  runDir: string;
  tasks: readonly TrainTask[];
  /** Per task: the evaluation env (physics) and the world-model env (null in physics-only modes). */
  envs: readonly { eval: Env | null; model: Env | null }[];
  sampler: PolicySampler;
  cfg: Pick<TrainConfig, 'seed' | 'horizon' | 'evalEvery'>;
  /** Updates done when the evaluated policy acted (0: the policy before training). */
  iteration: number;
}

/** Whether any task records sample episodes (its captured rows start with a recorded state). */
export const recordsSamples = (tasks: readonly TrainTask[]) => tasks.some((t) => t.recordedStates);

/** Records this evaluation's episodes (`first[t]`: task t's first held-out episode with captured rows),
 *  dropping any recorded at this iteration or later (a resumed run records them again) and thinning the
 *  older ones to MAX_RECORDED_EVALUATIONS evaluations; one commit. */
export async function recordSamples(c: SampleContext, first: readonly (Episode | undefined)[]): Promise<void> {
  const names = c.tasks.find((t) => t.recordedStates)?.recordedStates;
  const spec = c.envs.find((e) => e.eval)?.eval?.spec;
  if (!names || !spec) return;
  const policy = `iteration ${c.iteration}`;
  const fresh: StoredEpisode[] = [];
  for (const [t, task] of c.tasks.entries()) {
    const e = first[t];
    const model = c.envs[t].model;
    if (!e?.states || !task.recordedStates) continue;
    const twin = fresh.length;
    fresh.push({ ...keepState(e, names.length), task: task.id, split: 'heldout', policy, iteration: c.iteration });
    if (!model || !task.branching || e.length === 0) continue;
    const start = Math.floor(e.length / 2);
    for (const g of await worldModelGroup(c, model, e, start))
      fresh.push({
        ...keepState(g, names.length),
        task: task.id,
        split: 'heldout',
        policy,
        iteration: c.iteration,
        source: 'world-model',
        twin,
        start,
      });
  }
  const contract = { actions: actionBins(spec) };
  const previous = existsSync(join(c.runDir, 'index.json')) ? readEpisodeFolder(c.runDir, contract).episodes : [];
  const ordinal = (it: number) => Math.round(it / c.cfg.evalEvery);
  const kept = keptEvaluations(ordinal(c.iteration) + 1);
  const keep = (p: StoredEpisode) => (p.iteration ?? 0) < c.iteration && kept.has(ordinal(p.iteration ?? 0));
  const old = previous.filter(keep);
  // twins are indices into the folder: each moves to where its episode now lies
  const at = new Map(previous.flatMap((p, k) => (keep(p) ? [k] : [])).map((k, j) => [k, j]));
  const episodes = [
    ...old.map((p) => (p.twin === undefined ? p : { ...p, twin: at.get(p.twin) })),
    ...fresh.map((p) => (p.twin === undefined ? p : { ...p, twin: p.twin + old.length })),
  ];
  const meta = { command: 'wmrl train', actionNames: contract.actions.map((a) => a.name), stateNames: [...names] };
  commitFiles(episodeFolderParts(c.runDir, meta, episodes).parts);
}

/** The episode with each captured row cut to its leading `width` state entries. */
function keepState(e: Episode, width: number): Episode {
  const rows = e.length + 1;
  const row = e.states!.length / rows;
  const states = new Float32Array(rows * width);
  for (let t = 0; t < rows; t++) states.set(e.states!.subarray(t * row, t * row + width), t * width);
  return { ...e, states };
}

/** SAMPLE_GROUP world-model rollouts of the evaluated policy from step `start` of physics episode `e`,
 *  for the run's horizon, rows captured. */
async function worldModelGroup(c: SampleContext, model: Env, e: Episode, start: number): Promise<Episode[]> {
  if (!canBranch(model)) return [];
  const width = e.states!.length / (e.length + 1);
  const row = Array.from(e.states!.subarray(start * width, (start + 1) * width));
  const keys = Array.from({ length: SAMPLE_GROUP }, (_, j) => SAMPLE_KEY + j);
  return collectEpisodes(model, samplerPolicy(c.sampler, { seed: c.cfg.seed, temperature: 1 }), {
    seeds: keys.map(() => e.seed),
    keys,
    horizons: keys.map(() => c.cfg.horizon),
    recordState: recordRow(model),
    resetFrom: (slots, episodes) =>
      model.resetFrom(
        slots,
        episodes.map((k) => ({ seed: e.seed, key: keys[k], elapsed: start, row })),
      ),
  });
}
