// Physics episodes of one task on the seeds of one split, collected over parallel env slots.
import { type FrameSink, tapFrames } from '../env/index.ts';
import { createTabletopEnv, type TabletopEnv } from './env.ts';
import { collectEpisodes, type Policy, type StoredEpisode } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { packState, splitSeed, type Split } from '../task/index.ts';

export interface RunSpec {
  scene: Scene;
  taskId: string;
  policyName: string;
  makePolicy: (env: TabletopEnv) => Policy;
  episodes: number;
  split: Split;
  /** First episode index inside the split; episode k uses splitSeed(split, seedOffset + k). */
  seedOffset: number;
  numEnvs: number;
  /** Cameras the env renders (default: the scene's fixed ones): those of the policy (PolicySource.cameras). */
  cameras?: string[];
  recordStates?: boolean;
  /** Keep each episode's final state (flat, float64) as `finalState`, without recording every step. */
  finalStates?: boolean;
  onEpisode?: (e: StoredEpisode) => void;
  /** Streams env 0 to a live viewer. */
  live?: FrameSink;
}

/** Run `episodes` physics episodes of one task on seeds from one split. */
export async function runEpisodes(spec: RunSpec): Promise<(StoredEpisode & { finalState?: Float64Array })[]> {
  const seeds = Array.from({ length: spec.episodes }, (_, k) => splitSeed(spec.scene, spec.split, spec.seedOffset + k));
  const env = await createTabletopEnv({
    scene: spec.scene,
    taskId: spec.taskId,
    numEnvs: Math.min(spec.numEnvs, spec.episodes),
    cameras: spec.cameras,
  });
  try {
    const policy = spec.makePolicy(env);
    const tag = (e: Omit<StoredEpisode, 'task' | 'split' | 'policy'>): StoredEpisode => ({
      ...e,
      task: spec.taskId,
      split: spec.split,
      policy: spec.policyName,
    });
    const finals: Float64Array[] = [];
    // after reset and every step; the latest state of episode k is its final state once it ends
    const record = (i: number, k: number) => {
      const row = packState(env.state(i)) as Float64Array;
      if (spec.finalStates) finals[k] = row;
      return spec.recordStates ? row : [];
    };
    const episodes = await collectEpisodes(
      spec.live ? tapFrames(env, spec.live, `${spec.taskId} rollout`) : env,
      policy,
      {
        seeds,
        recordState: spec.recordStates || spec.finalStates ? record : undefined,
        onEpisode: (e) => spec.onEpisode?.(tag(spec.recordStates ? e : { ...e, states: undefined })),
      },
    );
    return episodes.map((e, k) => ({
      ...tag(e),
      states: spec.recordStates ? e.states : undefined,
      ...(spec.finalStates && { finalState: finals[k] }),
    }));
  } finally {
    env.close();
  }
}
