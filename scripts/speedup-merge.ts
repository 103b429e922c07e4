// Merges speedup reports made with one configuration on different seeds (runs of one machine may be
// split over sessions) into one report.json, table.md and index.html, the speedups recomputed from the
// curves (one report: recomputed alone). Reports of the first format (wmrl-speedup/1) are read too: their
// rows lose the speedup fields of the old definitions and gain real's cost over theirs.
//   node bin/run-ts.mjs scripts/speedup-merge.ts --out DIR REPORT.json [REPORT.json...]
import { z } from 'zod';
import { readInputJson } from '../src/core/input-file.ts';
import { canonicalJson } from '../src/core/spec.ts';
import { writeSpeedupReport } from '../src/experiment/speedup-report.ts';
import { type SpeedupReport, withFits } from '../src/experiment/speedup.ts';

const args = process.argv.slice(2);
const at = args.indexOf('--out');
if (args.includes('--help') || at < 0 || !args[at + 1] || args.length < 3) {
  console.error('usage: node bin/run-ts.mjs scripts/speedup-merge.ts --out DIR REPORT.json [REPORT.json...]');
  process.exit(args.includes('--help') ? 0 : 2);
}
const out = args[at + 1];
const files = args.filter((_, i) => i !== at && i !== at + 1);
const Report = z.looseObject({
  command: z.string(),
  format: z.enum(['wmrl-speedup/1', 'wmrl-speedup/2']),
  config: z.looseObject({
    tasks: z.array(z.string()),
    seeds: z.array(z.number()),
    modes: z.array(z.string()),
    evalEpisodes: z.number(),
  }),
  policy: z.string(),
  world_model: z.string(),
  base: z.unknown(),
  runs: z.array(
    z.looseObject({ mode: z.string(), seed: z.number(), train_seconds: z.number(), physics_steps: z.number() }),
  ),
  curves: z.array(z.looseObject({ mode: z.string(), seed: z.number() })),
});
const reports = files.map((f) => ({ file: f, ...readInputJson(f, Report, 'speedup report') }));
const identity = (r: (typeof reports)[number]) =>
  canonicalJson({ ...r.config, seeds: null, modes: null, jobs: null, p: r.policy, w: r.world_model, b: r.base });
for (const r of reports.slice(1))
  if (identity(r) !== identity(reports[0])) {
    console.error(`${r.file}: made with another configuration, policy, world model or base than ${reports[0].file}`);
    process.exit(2);
  }
const key = (x: { mode: string; seed: number }) => `${x.seed}/${x.mode}`;
const seen = new Set<string>();
for (const x of reports.flatMap((r) => r.runs)) {
  if (seen.has(key(x))) {
    console.error(`run ${x.mode} seed ${x.seed} is in more than one report`);
    process.exit(2);
  }
  seen.add(key(x));
}
const { command: _c, file: _f, ...first } = reports[0];
const bySeed = <T extends { seed: number }>(xs: T[]) => xs.sort((a, b) => a.seed - b.seed);
const config = {
  ...first.config,
  seeds: [...new Set(reports.flatMap((r) => r.config.seeds))].sort((a, b) => a - b),
  modes: [...new Set(reports.flatMap((r) => r.config.modes))],
};
const curves = bySeed(reports.flatMap((r) => r.curves)) as unknown as SpeedupReport['curves'];
const OLD = ['speedup_wall', 'speedup_physics', 'speedup_wall_fit', 'speedup_physics_fit', 'speedup_wall_at_least'];
const OLD_TOO = ['speedup_physics_at_least', 'target', 'reached_at', 'real_reached_at', 'speedup_wall_ceiling'];
type Row = (typeof reports)[number]['runs'][number];
/** A row without the fields withFits writes or the old definitions wrote, with real's cost over its own. */
function upgrade(r: Row, all: Row[]) {
  const real = all.find((x) => x.mode === 'real' && x.seed === r.seed);
  const kept = Object.fromEntries(Object.entries(r).filter(([k]) => ![...OLD, ...OLD_TOO].includes(k)));
  const cost = real && { wall: real.train_seconds / r.train_seconds, physics: real.physics_steps / r.physics_steps };
  return { ...(kept as Row), cost_vs_real: r.cost_vs_real ?? cost ?? null };
}
const all = reports.flatMap((r) => r.runs);
const runs = bySeed(all.map((r) => upgrade(r, all))) as unknown as SpeedupReport['runs'];
const report = {
  ...first,
  format: 'wmrl-speedup/2',
  config,
  runs: withFits(runs, curves, config.evalEpisodes * config.tasks.length),
  curves,
} as SpeedupReport;
const command = `node bin/run-ts.mjs scripts/speedup-merge.ts --out ${out} ${files.join(' ')} (of: ${reports
  .map((r) => r.command)
  .join(' | ')})`;
const written = writeSpeedupReport(out, report, command);
console.log(JSON.stringify(written));
