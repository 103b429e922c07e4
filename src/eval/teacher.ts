// How learnable the scripted expert's labels are from what a policy observes: the expert's success with
// and without memory between steps, and how often the memoryless expert picks the same tokens as the one
// with memory along the latter's own path. A policy reads no hidden memory, so labels that depend on it
// are, for the policy, noise around a function of the observation.
import { wilson } from '../core/stats.ts';
import type { BatchAction } from '../env/types.ts';
import { ACTION_NAMES, createTabletopEnv, ScriptedExpert, type TabletopEnv } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';
import { splitSeed, type Split } from '../task/index.ts';

export interface TeacherOptions {
  scene: Scene;
  tasks: string[];
  split: Split;
  /** Episodes per task; episode k runs on the split's seed of index `seed + k`. */
  episodes: number;
  seed: number;
  numEnvs: number;
  onEpisode?: () => void;
}

export interface Rate {
  successes: number;
  episodes: number;
  rate: number;
  ci95: [number, number];
}

export interface TeacherRow {
  task: string;
  withMemory: Rate;
  withoutMemory: Rate;
  /** Steps of the expert with memory at which the memoryless expert gives the same five tokens. */
  agreement: number;
  /** The same per action dimension. */
  agreementPerDim: Record<string, number>;
  /** Steps compared (the expert with memory's steps over all its episodes). */
  steps: number;
}

function rate(successes: number, episodes: number): Rate {
  const w = wilson(successes, episodes);
  return { successes, episodes, rate: w.rate, ci95: [w.low, w.high] };
}

interface Pass {
  successes: number;
  steps: number;
  agree: number;
  agreePerDim: Record<string, number>;
}

/** Runs the seeds through the expert with or without `memory` (physics, no rendering); with `compare`,
 *  a memoryless expert labels every visited state too and its tokens are compared with the acting one's. */
async function pass(
  env: TabletopEnv,
  seeds: number[],
  memory: boolean,
  compare: boolean,
  onEpisode?: () => void,
): Promise<Pass> {
  const out: Pass = {
    successes: 0,
    steps: 0,
    agree: 0,
    agreePerDim: Object.fromEntries(ACTION_NAMES.map((n) => [n, 0])),
  };
  for (let at = 0; at < seeds.length; at += env.numEnvs) {
    const batch = seeds.slice(at, at + env.numEnvs);
    const keys = Array.from({ length: env.numEnvs }, (_, i) => (i < batch.length ? i : -1));
    const padded = keys.map((k) => batch[Math.max(k, 0)]);
    await env.reset({ seed: padded });
    const expert = new ScriptedExpert(env, { memory });
    const shadow = compare ? new ScriptedExpert(env, { memory: false }) : null;
    const done = keys.map((k) => k < 0);
    for (let t = 0; t < env.spec.maxEpisodeSteps && done.includes(false); t++) {
      const live = done.map((d) => (d ? -1 : 0));
      const action: BatchAction = expert.act(live);
      if (shadow) tally(out, action, shadow.act(live), done);
      const r = await env.step(action);
      for (let i = 0; i < env.numEnvs; i++) {
        if (done[i] || !(r.terminated[i] || r.truncated[i])) continue;
        done[i] = true;
        out.successes += r.terminated[i];
        onEpisode?.();
      }
    }
  }
  return out;
}

function tally(out: Pass, a: BatchAction, b: BatchAction, done: boolean[]): void {
  done.forEach((d, i) => {
    if (d) return;
    out.steps++;
    let all = true;
    for (const n of ACTION_NAMES) {
      const same = a[n][i] === b[n][i];
      out.agreePerDim[n] += same ? 1 : 0;
      all &&= same;
    }
    out.agree += all ? 1 : 0;
  });
}

/** The teacher report of every task: see the file comment. */
export async function teacherReport(o: TeacherOptions): Promise<TeacherRow[]> {
  const rows: TeacherRow[] = [];
  for (const task of o.tasks) {
    const seeds = Array.from({ length: o.episodes }, (_, k) => splitSeed(o.scene, o.split, o.seed + k));
    const env = await createTabletopEnv({
      scene: o.scene,
      taskId: task,
      numEnvs: Math.min(o.numEnvs, o.episodes),
      render: false,
    });
    try {
      const kept = await pass(env, seeds, true, true, o.onEpisode);
      const fresh = await pass(env, seeds, false, false, o.onEpisode);
      rows.push({
        task,
        withMemory: rate(kept.successes, o.episodes),
        withoutMemory: rate(fresh.successes, o.episodes),
        agreement: kept.agree / kept.steps,
        agreementPerDim: Object.fromEntries(ACTION_NAMES.map((n) => [n, kept.agreePerDim[n] / kept.steps])),
        steps: kept.steps,
      });
    } finally {
      env.close();
    }
  }
  return rows;
}
