// Where failed episodes end: per task family, the failed episodes counted by the last stage reached at
// their final state (the highest of the family's predicates that holds there), so that a policy that
// lifts and holds shows at a glance. Episodes that ended with an object off the table count apart.
import { z } from 'zod';
import type { Scene } from '../scene/index.ts';
import { FAMILY_PREDICATES, sampleTask, scoreTask, type TabletopState, unpackState } from '../task/index.ts';

/** Column of a failed episode that reached no stage. */
export const NO_STAGE = 'none';
/** Column of a failed episode that ended with an object off the table. */
export const OFF_TABLE = 'off_table';

export const FailedStagesSchema = z.object({
  failed: z.number().int().min(0),
  /** Failed episodes per column: none, the family's stages in order but the last, off_table. */
  stages: z.record(z.string(), z.number().int().min(0)),
});
export type FailedStages = z.infer<typeof FailedStagesSchema>;

/** The highest of the family's predicates that holds in `state`, or NO_STAGE. */
export function lastStage(scene: Scene, taskId: string, seed: number, state: TabletopState): string {
  const task = sampleTask(scene, taskId, seed);
  const { predicates } = scoreTask(scene, task, state);
  const names = FAMILY_PREDICATES[task.family];
  for (let k = names.length - 1; k >= 0; k--) if (predicates[names[k]]) return names[k];
  return NO_STAGE;
}

/** Counts one task's failed episodes by the last stage of their final state (flat, src/task/state.ts). */
export function failedStages(
  scene: Scene,
  taskId: string,
  episodes: readonly { seed: number; success: boolean; offTable?: boolean; finalState?: ArrayLike<number> }[],
): FailedStages {
  const family = sampleTask(scene, taskId, episodes[0]?.seed ?? scene.splits.train[0]).family;
  const stages: Record<string, number> = { [NO_STAGE]: 0 };
  for (const name of FAMILY_PREDICATES[family].slice(0, -1)) stages[name] = 0;
  stages[OFF_TABLE] = 0;
  let failed = 0;
  for (const e of episodes) {
    if (e.success) continue;
    failed++;
    if (!e.finalState) throw new Error(`failedStages: ${taskId} seed ${e.seed} has no final state`);
    const column = e.offTable
      ? OFF_TABLE
      : lastStage(scene, taskId, e.seed, unpackState(e.finalState, scene.objects.length));
    stages[column] = (stages[column] ?? 0) + 1;
  }
  return { failed, stages };
}

/** A markdown table per policy: a row per family, a column per stage, each cell "stage count". */
export function stagesTable(policies: readonly { policy: string; failed_stages?: Record<string, FailedStages> }[]) {
  const out: string[] = [];
  for (const p of policies) {
    if (!p.failed_stages) continue;
    const rows = Object.entries(p.failed_stages);
    const width = Math.max(0, ...rows.map(([, f]) => Object.keys(f.stages).length - 2));
    const stageCols = Array.from({ length: width }, (_, k) => `stage ${k + 1}`);
    out.push(
      `failed episodes by the last stage reached at their final state: ${p.policy}`,
      '',
      `| task | failed | ${NO_STAGE} | ${stageCols.join(' | ')} | off table |`,
      `|---|---|---|${stageCols.map(() => '---|').join('')}---|`,
    );
    for (const [task, f] of rows) {
      const named = Object.entries(f.stages).filter(([k]) => k !== NO_STAGE && k !== OFF_TABLE);
      const cells = stageCols.map((_, k) => (named[k] ? `${named[k][0]} ${named[k][1]}` : ''));
      out.push(`| ${task} | ${f.failed} | ${f.stages[NO_STAGE]} | ${cells.join(' | ')} | ${f.stages[OFF_TABLE]} |`);
    }
    out.push('');
  }
  return out.join('\n').trimEnd();
}
