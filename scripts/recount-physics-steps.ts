// What counting every physics step (the expert's passes for evolution's starts, real-branch's replays)
// changes in published reports: their runs re-trained without evaluation (it decides nothing in
// training) under the new count, then each report's physics-step figures recomputed from its own
// success values on the new step axis. A re-trained run is the same run when its world-model steps
// equal the report's. Usage (docs/trainer.md#physics-steps):
//   node bin/run-ts.mjs scripts/recount-physics-steps.ts --runs DIR
// where DIR holds <row>-s<seed>/ of docs/corrections rows and speedup-<mode>-s<seed>/ of the
// two-core speedup runs, each trained by `wmrl train` with the report's config and evalEvery 0.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { across, valueAt } from '../src/experiment/study-stats.ts';
import { binomialRedraw, speedupInterval } from '../src/experiment/study-speedup.ts';

type Point = { iteration: number; physicsSteps: number; success: number };
type Line = { iteration: number; 'steps/physics': number; 'steps/world_model': number };
const { values } = parseArgs({ options: { runs: { type: 'string' } } });
if (!values.runs) throw new Error('--runs DIR is required');
const runs = values.runs;
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** The re-trained run's metric lines, when it finished `iterations`. */
function rerun(name: string, iterations: number): Line[] | null {
  const path = join(runs, name, 'metrics.jsonl');
  if (!existsSync(path)) return null;
  const lines = readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
  return lines.length >= iterations ? lines : null;
}

/** A curve with each point's physics steps taken from the re-trained run at its iteration. */
const recounted = (points: Point[], lines: Line[]): Point[] =>
  points.map((p) => ({ ...p, physicsSteps: p.iteration === 0 ? 0 : lines[p.iteration - 1]['steps/physics'] }));

const fmt = (x: number | null) => (x === null ? 'n/a' : x.toFixed(3));
const points = (x: number | null) => (x === null ? 'n/a' : (100 * x).toFixed(1));
const span = (a: { mean: number | null; low: number | null; high: number | null }) =>
  `${points(a.mean)} [${points(a.low)}, ${points(a.high)}]`;

// the corrections study: physics steps per row, and wmrl at real-branch's physics steps
const study = read('docs/corrections/report.json');
const iterations = read('scripts/corrections/study.json').iterations;
console.log('| row | seed | physics steps (report) | re-counted | x | same run (world-model steps) |');
console.log('|---|---|---|---|---|---|');
for (const row of study.rows) {
  row.seeds.forEach((seed: number, k: number) => {
    const lines = rerun(`${row.name}-s${seed}`, iterations);
    if (!lines) return;
    const [old, now] = [row.physics_steps.values[k], lines[iterations - 1]['steps/physics']];
    const same = lines[iterations - 1]['steps/world_model'] === row.world_model_steps.values[k];
    console.log(`| ${row.name} | ${seed} | ${old} | ${now} | ${(now / old).toFixed(3)} | ${same ? 'yes' : 'no'} |`);
  });
}
const curvesOf = (name: string) => study.rows.find((r: { name: string }) => r.name === name).curves;
const diffs = { before: [] as number[], after: [] as number[] };
for (const c of curvesOf('h10-wmrl') as { seed: number; points: Point[] }[]) {
  const ref = (curvesOf('h10-real-branch') as { seed: number; points: Point[] }[]).find((x) => x.seed === c.seed)!;
  const [a, b] = [rerun(`h10-wmrl-s${c.seed}`, iterations), rerun(`h10-real-branch-s${c.seed}`, iterations)];
  if (!a || !b) continue;
  for (const [key, mine, theirs] of [
    ['before', c.points, ref.points],
    ['after', recounted(c.points, a), recounted(ref.points, b)],
  ] as const) {
    const at = valueAt(theirs, (p) => p.physicsSteps, mine.at(-1)!.physicsSteps);
    if (at !== null) diffs[key].push(mine.at(-1)!.success - at);
  }
}
if (diffs.after.length)
  console.log(
    `\nh10-wmrl vs h10-real-branch at equal physics steps, ${diffs.after.length} seeds: ` +
      `${span(across(diffs.before))} as reported, ${span(across(diffs.after))} re-counted`,
  );

// the two-core speedup runs: wmrl's fitted speedup in physics steps over real's
const speed = read('docs/speedup/two-cores/report.json');
const episodes = speed.config.evalEpisodes * speed.config.tasks.length;
for (const seed of speed.config.seeds as number[]) {
  const curve = (mode: string) =>
    speed.curves.find((c: Point & { mode: string; seed: number }) => c.mode === mode && c.seed === seed);
  const [real, wmrl] = [
    rerun(`speedup-real-s${seed}`, speed.config.iterations.real),
    rerun(`speedup-wmrl-s${seed}`, speed.config.iterations.model),
  ];
  if (!real || !wmrl) continue;
  const speedupOf = (r: Point[], w: Point[]) => {
    const xy = (c: Point[]) => ({ x: c.slice(1).map((p) => p.physicsSteps), y: c.slice(1).map((p) => p.success) });
    const redraw = binomialRedraw(episodes);
    return speedupInterval(xy(r), xy(w), { real: redraw, run: redraw }, [seed, 1]);
  };
  const [r, w] = [curve('real').points as Point[], curve('wmrl').points as Point[]];
  for (const [what, f, steps] of [
    ['as reported', speedupOf(r, w), [r.at(-1)!.physicsSteps, w.at(-1)!.physicsSteps]],
    [
      're-counted',
      speedupOf(recounted(r, real), recounted(w, wmrl)),
      [real.at(-1)!['steps/physics'], wmrl.at(-1)!['steps/physics']],
    ],
  ] as const)
    console.log(
      `speedup seed ${seed}, ${what}: physics steps real ${steps[0]} wmrl ${steps[1]} (${(steps[0] / steps[1]).toFixed(2)}x); ` +
        `fitted speedup ${fmt(f.estimate)}x [${fmt(f.low)}, ${fmt(f.high)}], reached in ${(100 * f.reached).toFixed(0)}%`,
    );
}
