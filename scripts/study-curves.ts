// Prints the held-out learning curves of a study folder (scripts/curriculum-study.sh) as Markdown and writes
// curves.json, curves.md and curves.html (line charts, overall and per task) into the folder, or into --out.
// ROWS and SEEDS name the rows and training seeds, as for scripts/curriculum-table.ts.
import { curvesTable, studyCurves, writeCurvesReport } from '../src/experiment/study-curves.ts';

const args = process.argv.slice(2);
if (args.includes('--help') || args.length === 0) {
  console.log('usage: ROWS="a b" SEEDS="1 2 3" npm run study:curves -- STUDY_DIR [--out DIR]');
  process.exit(args.length === 0 ? 2 : 0);
}
const dir = args[0];
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : dir;
const rows = (process.env.ROWS ?? 'default').split(' ').filter(Boolean);
const seeds = (process.env.SEEDS ?? '1 2 3').split(' ').filter(Boolean).map(Number);
const curves = studyCurves(dir, rows, seeds);
if (!curves.length) {
  console.error(`${dir}: no run of ${rows.join(', ')} with evaluation lines yet`);
  process.exit(2);
}
const command = `ROWS="${rows.join(' ')}" SEEDS="${seeds.join(' ')}" npm run study:curves -- ${args.join(' ')}`;
const files = writeCurvesReport(out, curves, command);
console.log(`${curvesTable(curves)}\n\n${files.html}`);
