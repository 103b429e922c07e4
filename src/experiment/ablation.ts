// The ablation table of docs/curriculum.md: held-out evaluation reports of several training seeds per
// row, as per-family mean success with between-seed 95% intervals (Student t), beside the base policy.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tInterval } from '../core/stats.ts';
import { type EvalReport, pairedDifference, validateReport } from '../eval/index.ts';

const pct = (x: number) => (100 * x).toFixed(1);
const cell = (xs: number[]) => {
  const t = tInterval(xs);
  return xs.length < 2 ? `${pct(t.mean)}` : `${pct(t.mean)} [${pct(t.low)}, ${pct(t.high)}]`;
};

/** All episodes' outcomes of a report, task by task in seed order. */
const outcomes = (r: EvalReport) => r.tasks.flatMap((t) => r.policies[0].outcomes[t]);

/** Markdown table: one line per row name (its reports one per training seed), then the base; with
 *  `reference` (a row name), each row's paired difference to it over every evaluation episode of the
 *  training seeds both rows have (seed k against seed k). */
export function ablationTable(rows: Record<string, EvalReport[]>, base: EvalReport, reference?: string): string {
  const tasks = base.tasks;
  const columns = [...tasks, 'overall'];
  const rate = (r: EvalReport, key: string) => r.policies[0].results[key].success_rate;
  const pairs = (r: EvalReport, part: 'seen' | 'reserved') => r.policies[0].pairs?.[part].success_rate ?? NaN;
  const head = ['row', 'seeds', ...columns.map((c) => c.replace(/^tabletop\//, '')), 'seen pairs', 'reserved pairs'];
  const ref = reference ? rows[reference] : undefined;
  if (ref) head.push(`overall vs ${reference}, paired`);
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [name, reports] of Object.entries(rows)) {
    if (!reports.length) continue;
    const values = [
      ...columns.map((c) => cell(reports.map((r) => rate(r, c)))),
      cell(reports.map((r) => pairs(r, 'seen'))),
      cell(reports.map((r) => pairs(r, 'reserved'))),
    ];
    if (ref) {
      const n = Math.min(ref.length, reports.length);
      const d = pairedDifference(reports.slice(0, n).flatMap(outcomes), ref.slice(0, n).flatMap(outcomes));
      values.push(`${(100 * d.diff).toFixed(1)} [${pct(d.ci_low)}, ${pct(d.ci_high)}]`);
    }
    lines.push(`| ${name} | ${reports.length} | ${values.join(' | ')} |`);
  }
  const b = [...columns.map((c) => pct(rate(base, c))), pct(pairs(base, 'seen')), pct(pairs(base, 'reserved'))];
  if (ref) b.push('');
  lines.push(`| base (no training) | - | ${b.join(' | ')} |`);
  return lines.join('\n');
}

/** Markdown table: per row and family (and overall), the paired difference to the base in points over
 *  every evaluation episode of the row's training seeds (each seed's episodes against the base's same
 *  episodes), with its 95% interval. */
export function versusBaseTable(rows: Record<string, EvalReport[]>, base: EvalReport): string {
  const columns = [...base.tasks, 'overall'];
  const of = (r: EvalReport, c: string) => (c === 'overall' ? outcomes(r) : r.policies[0].outcomes[c]);
  const head = ['row', 'seeds', ...columns.map((c) => c.replace(/^tabletop\//, ''))];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const [name, reports] of Object.entries(rows)) {
    if (!reports.length) continue;
    const cells = columns.map((c) => {
      const d = pairedDifference(
        reports.flatMap((r) => of(r, c)),
        reports.flatMap(() => of(base, c)),
      );
      return `${(100 * d.diff).toFixed(1)} [${pct(d.ci_low)}, ${pct(d.ci_high)}]`;
    });
    lines.push(`| ${name} | ${reports.length} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** The reports a study folder holds: `<row>-s<seed>/eval/report.json` and `base-eval/report.json`. */
export function readStudy(
  dir: string,
  rows: string[],
  seeds: number[],
): { rows: Record<string, EvalReport[]>; base: EvalReport } {
  const read = (path: string) => validateReport(JSON.parse(readFileSync(path, 'utf8')));
  const found: Record<string, EvalReport[]> = {};
  for (const row of rows)
    found[row] = seeds
      .map((s) => join(dir, `${row}-s${s}`, 'eval', 'report.json'))
      .filter((path) => existsSync(path)) // not evaluated yet
      .map(read);
  return { rows: found, base: read(join(dir, 'base-eval', 'report.json')) };
}
