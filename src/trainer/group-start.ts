// Where a group starts: its task, its train start (the easiest of several under scene-level evolution)
// and its level (environment evolution's or the frontier's), all from the group's own generator; and
// the scripted expert's state it starts from when its level is below 1.
import { DRAW, Rng } from '../core/rng.ts';
import { type BranchPoint, type GroupJob, exactStates } from './rollouts.ts';
import { type Iteration, type Run, timed } from './run.ts';
import type { StartCurriculum } from './start-curriculum.ts';

/** Where the keys of refill groups (g >= groupsPerIteration) begin: above every regular group's. */
const REFILL_KEYS = 2 ** 40;

/** Rollout keys of group g of an iteration (every random draw of a rollout derives from its key). */
export function groupKeys(r: Run, i: Iteration, g: number): number[] {
  const { groupsPerIteration: n, groupSize, dynamicSampling } = r.cfg;
  const index = g < n ? i.it * n + g : REFILL_KEYS + i.it * dynamicSampling.maxExtraGroups + (g - n);
  return Array.from({ length: groupSize }, (_, k) => index * groupSize + k);
}

/** A group's task, its start among the task's train starts and (environment evolution) its level:
 *  the first draws of the group's generator. */
export function drawStart(
  r: Run,
  i: Iteration,
  g: number,
): { rng: Rng; task: number; startIndex: number; level: number | null } {
  const rng = new Rng([r.cfg.seed, i.it, g], DRAW.groupStart);
  const task = rng.int(r.setup.tasks.length);
  const { trainStarts, expertStart, difficulty, trainSeed } = r.setup.tasks[task];
  let startIndex = r.state.starts.drawStart(rng, task, trainStarts);
  const hardness = (k: number) => difficulty!(trainSeed(k));
  for (let c = 1; difficulty && c < r.state.evolution.candidates(task); c++) {
    const other = r.state.starts.drawStart(rng, task, trainStarts);
    if (hardness(other) < hardness(startIndex)) startIndex = other;
  }
  return { rng, task, startIndex, level: startCurriculum(r.state).draw(rng, task, !!expertStart) };
}

/** Where groups start on the expert's trajectory: frontier starts when on, else environment evolution. */
export function startCurriculum({ evolution, frontier }: Run['state']): StartCurriculum {
  return frontier.config.enabled ? frontier : evolution;
}

/** Environment evolution: the expert's state of a train start with `level` of its episode to go, as a
 *  branch (`exact` for physics; world-model groups start from its row). The expert's pass is physics:
 *  its steps and time count as the iteration's. */
export async function expertBranch(
  r: Run,
  i: Iteration,
  task: number,
  seed: number,
  level: number,
  exact: boolean,
): Promise<BranchPoint> {
  const { start, steps } = await timed(i, 'physics', () => r.setup.tasks[task].expertStart!(seed, level));
  r.state.totals.physicsSteps += steps;
  const point: BranchPoint = { task, seed, elapsed: start.elapsed, row: Array.from(start.row) };
  if (exact) point.exact = start.exact;
  return point;
}

/** real-branch: the branched jobs start from exact physics states, replayed from their anchors in this
 *  process's physics envs (the pool keeps rows and how to replay to them, not engine copies); the
 *  replays' steps and time count as the iteration's physics. */
export async function exactBranches(r: Run, i: Iteration, jobs: readonly GroupJob[]): Promise<void> {
  for (const t of r.setup.tasks.keys()) {
    const mine = jobs.filter((j) => j.task === t && j.branch?.origin);
    if (!mine.length) continue;
    const { starts, steps } = await timed(i, 'physics', () =>
      exactStates(
        r.envs[t].real!,
        mine.map((j) => j.branch!),
      ),
    );
    r.state.totals.physicsSteps += steps;
    mine.forEach((j, k) => {
      const { origin: _, ...point } = j.branch!;
      j.branch = { ...point, ...(starts[k].exact && { exact: starts[k].exact }) };
    });
  }
}
