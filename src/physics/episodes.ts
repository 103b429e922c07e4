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
  recordStates?: boolean;
  onEpisode?: (e: StoredEpisode) => void;
  /** Streams env 0 to a live viewer. */
  live?: FrameSink;
}

/** Run `episodes` physics episodes of one task on seeds from one split. */
export async function runEpisodes(spec: RunSpec): Promise<StoredEpisode[]> {
  const seeds = Array.from({ length: spec.episodes }, (_, k) => splitSeed(spec.scene, spec.split, spec.seedOffset + k));
  const env = await createTabletopEnv({
    scene: spec.scene,
    taskId: spec.taskId,
    numEnvs: Math.min(spec.numEnvs, spec.episodes),
  });
  try {
    const policy = spec.makePolicy(env);
    const tag = (e: Omit<StoredEpisode, 'task' | 'split' | 'policy'>): StoredEpisode => ({
      ...e,
      task: spec.taskId,
      split: spec.split,
      policy: spec.policyName,
    });
    const episodes = await collectEpisodes(
      spec.live ? tapFrames(env, spec.live, `${spec.taskId} rollout`) : env,
      policy,
      {
        seeds,
        recordState: spec.recordStates ? (i) => packState(env.state(i)) : undefined,
        onEpisode: (e) => spec.onEpisode?.(tag(e)),
      },
    );
    return episodes.map(tag);
  } finally {
    env.close();
  }
}
