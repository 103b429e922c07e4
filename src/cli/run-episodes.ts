import { wilson } from '../core/stats.ts';
import { createTabletopEnv } from '../physics/index.ts';
import { collectEpisodes, type Policy, type StoredEpisode } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { packState, splitSeed } from '../task/index.ts';
import type { TabletopEnv } from '../physics/index.ts';

export interface RunSpec {
  scene: Scene;
  taskId: string;
  policyName: string;
  makePolicy: (env: TabletopEnv) => Policy;
  episodes: number;
  split: 'train' | 'heldout';
  /** First episode index inside the split; episode k uses splitSeed(split, seedOffset + k). */
  seedOffset: number;
  numEnvs: number;
  recordStates?: boolean;
  onEpisode?: (e: StoredEpisode) => void;
}

/** Run `episodes` physics episodes of one task on seeds from one split. */
export async function runEpisodes(spec: RunSpec): Promise<StoredEpisode[]> {
  const seeds = Array.from({ length: spec.episodes }, (_, k) => splitSeed(spec.scene, spec.split, spec.seedOffset + k));
  const env = await createTabletopEnv({ scene: spec.scene, taskId: spec.taskId, numEnvs: Math.min(spec.numEnvs, spec.episodes) });
  try {
    const policy = spec.makePolicy(env);
    const tag = (e: Omit<StoredEpisode, 'task' | 'split' | 'policy'>): StoredEpisode => ({ ...e, task: spec.taskId, split: spec.split, policy: spec.policyName });
    const episodes = await collectEpisodes(env, policy, {
      seeds,
      recordState: spec.recordStates ? (i) => packState(env.state(i)) : undefined,
      onEpisode: (e) => spec.onEpisode?.(tag(e)),
    });
    return episodes.map(tag);
  } finally {
    env.close();
  }
}

export interface SuccessSummary {
  success_rate: number;
  ci_low: number;
  ci_high: number;
  episodes: number;
  mean_length: number;
  mean_progress: number;
}

/** Success rate with its Wilson 95% interval, mean episode length and final process score. */
export function summarise(episodes: readonly { success: boolean; length: number; progress: number }[]): SuccessSummary {
  const n = episodes.length;
  const wins = episodes.filter((e) => e.success).length;
  const w = wilson(wins, n);
  const mean = (f: (e: (typeof episodes)[number]) => number) => (n ? episodes.reduce((s, e) => s + f(e), 0) / n : 0);
  return { success_rate: w.rate, ci_low: w.low, ci_high: w.high, episodes: n, mean_length: mean((e) => e.length), mean_progress: mean((e) => e.progress) };
}

export function formatSummary(name: string, s: SuccessSummary): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return `${name.padEnd(22)} success ${pct(s.success_rate).padStart(6)}  95% CI [${pct(s.ci_low)}, ${pct(s.ci_high)}]  n=${s.episodes}  len ${s.mean_length.toFixed(1)}  progress ${s.mean_progress.toFixed(2)}`;
}
