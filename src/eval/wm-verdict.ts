// The world model's success verdict per task family: physics rollouts of a policy (states recorded),
// then the trainer's segments graded in the world model (src/worldmodel/verdict.ts), and the table.
import type { EnvSpec } from '../core/spec.ts';
import { fixedCameras, runEpisodes, tabletopSpec } from '../physics/index.ts';
import type { Scene } from '../scene/index.ts';
import type { Split } from '../task/index.ts';
import { type Dynamics, type FamilyVerdict, familyVerdict, gradeVerdicts, WorldModelEnv } from '../worldmodel/index.ts';
import type { PolicySource } from './policies.ts';

export interface VerdictRunOptions {
  scene: Scene;
  tasks: string[];
  source: PolicySource;
  split: Split;
  /** Rollouts per task on the split's seeds of index seed .. seed + episodes - 1. */
  episodes: number;
  seed: number;
  /** Branch every this many steps, for this many steps (the trainer's branchEvery and horizon). */
  every: number;
  horizon: number;
  numEnvs: number;
  /** The dynamics for a task's physics spec (closed after use). */
  dynamics: (spec: EnvSpec) => Promise<Dynamics>;
  onEpisode?: () => void;
}

export interface VerdictReport {
  split: Split;
  episodes_per_task: number;
  seed: number;
  every: number;
  horizon: number;
  /** Per task id. */
  families: Record<string, FamilyVerdict>;
}

export async function runVerdict(o: VerdictRunOptions): Promise<VerdictReport> {
  const families: Record<string, FamilyVerdict> = {};
  for (const taskId of o.tasks) {
    const episodes = await runEpisodes({
      scene: o.scene,
      taskId,
      policyName: o.source.name,
      episodes: o.episodes,
      split: o.split,
      seedOffset: o.seed,
      numEnvs: o.numEnvs,
      cameras: o.source.cameras,
      recordStates: true,
      makePolicy: (env) => o.source.make(env),
      onEpisode: () => o.onEpisode?.(),
    });
    const rollouts = episodes.map((e) => ({ ...e, states: e.states! }));
    const spec = tabletopSpec(o.scene, taskId, o.source.cameras ?? fixedCameras(o.scene));
    const wm = new WorldModelEnv({
      scene: o.scene,
      spec,
      numEnvs: 64,
      dynamics: await o.dynamics(spec),
      render: false,
    });
    try {
      const segs = await gradeVerdicts(wm, rollouts, o);
      families[taskId] = familyVerdict(o.scene, taskId, rollouts, segs);
    } finally {
      wm.close();
    }
  }
  return {
    split: o.split,
    episodes_per_task: o.episodes,
    seed: o.seed,
    every: o.every,
    horizon: o.horizon,
    families,
  };
}

const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
const ci = (r: { rate: number; low: number; high: number; n: number }) =>
  r.n ? `${pct(r.rate)} [${pct(r.low)}, ${pct(r.high)}]` : '-';

/** A markdown table: a row per family (precision, recall, counts, the member-vote variants, what the
 *  false negatives miss). */
export function verdictTable(r: VerdictReport): string {
  const lines = [
    '| family | rollouts (physics successes) | TP | FP | FN | TN | precision [95% CI] | recall [95% CI] | ' +
      'recall, member majority | recall, any member | false negatives miss |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const f of Object.values(r.families)) {
    const misses = Object.entries(f.fn_misses)
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}${f.fn_only[k] ? ` (alone ${f.fn_only[k]})` : ''}`)
      .join(', ');
    const med = f.fn
      ? `; median speed ${f.fn_median.speed.toFixed(2)} m/s, z error ${(1000 * f.fn_median.z_error).toFixed(1)} mm`
      : '';
    const m = f.members;
    lines.push(
      `| ${f.family} | ${f.rollouts} (${f.physics_successes}) | ${f.tp} | ${f.fp} | ${f.fn} | ${f.tn} | ` +
        `${ci(f.precision)} | ${ci(f.recall)} | ${ci(m.majority.recall)} (precision ${ci(m.majority.precision)}) | ` +
        `${ci(m.any.recall)} (precision ${ci(m.any.precision)}) | ${misses || '-'}${med} |`,
    );
  }
  const head =
    `${r.split} split, ${r.episodes_per_task} rollouts per family; segments branched every ${r.every} steps ` +
    `for ${r.horizon} steps; positive: physics succeeds at the segment's last step.`;
  return `${lines.join('\n')}\n\n${head}`;
}
