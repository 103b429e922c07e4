// The AutoResearch study as files: report.json, a Markdown table (table.md, what docs quote) and
// index.html (the table), written as one unit.
import { join } from 'node:path';
import { commitFiles } from '../store/index.ts';
import { chart, markdownTableHtml } from './corrections-report.ts';
import type { ResearchStudyReport } from './research-study.ts';

type Across = { mean: number; low: number | null; high: number | null };
const fixed = (d: number) => (x: number) => x.toFixed(d);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
const withCi = (a: Across, f = fixed(3)) => (a.low === null ? f(a.mean) : `${f(a.mean)} [${f(a.low)}, ${f(a.high!)}]`);

const pooledText = (p: { diff: number; ci_low: number; ci_high: number; episodes: number }) =>
  `${signed(p.diff)} [${signed(p.ci_low)}, ${signed(p.ci_high)}] (${p.episodes})`;

/** One line per row: seeds, held-out test position, vs base, vs the rows it is paired with (mean of
 *  per-seed paired differences, t interval over seeds), executions and seconds, and the corrections. */
export function researchStudyTable(r: ResearchStudyReport): string {
  const head = [
    'row',
    'mode',
    'iterations',
    'seeds',
    'held-out test position',
    'vs base',
    'vs base, episodes pooled',
    'vs other rows (mean of per-seed paired differences)',
    'executions',
    'x fewer executions / x less training time than',
    'train s',
    'debias changed',
    'w mean',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of r.rows) {
    const start = `| ${row.name} | ${row.mode} | ${row.iterations} | ${row.seeds.length} |`;
    if (!row.seeds.length) {
      lines.push(`${start} not run yet |${' |'.repeat(head.length - 5)}`);
      continue;
    }
    const vs = row.versus.filter((v) => v.seeds > 0);
    lines.push(
      `${start} ${[
        withCi(row.position),
        withCi(row.vs_base, signed),
        pooledText(row.vs_base_pooled),
        vs.map((v) => `${withCi(v.per_seed, signed)} vs ${v.row}`).join('; '),
        Math.round(row.executions.mean),
        vs.map((v) => `${withCi(v.fewer_executions, fixed(1))} / ${withCi(v.faster, fixed(1))} vs ${v.row}`).join('; '),
        Math.round(row.train_seconds.mean),
        row.mode === 'real' ? '' : `${Math.round(100 * row.corrections.debias_changed.mean)}%`,
        row.corrections.w_mean.mean.toFixed(2),
      ].join(' | ')} |`,
    );
  }
  lines.push(`| base (no training) | - | 0 | ${r.base.seeds.length} | ${withCi(r.base.position)} |${' |'.repeat(8)}`);
  return lines.join('\n');
}

/** Writes report.json, table.md and index.html into `dir` as one unit. */
export function writeResearchStudyReport(dir: string, r: ResearchStudyReport, command: string) {
  const table = researchStudyTable(r);
  const html = `<!doctype html><meta charset="utf-8"><title>wmrl AutoResearch study</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}</style>
<h1>AutoResearch: real-execution GRPO, WMRL and the corrections</h1>
<p>Held-out test leaderboard position (the share of reference runs the submitted run beats on test), between-seed
mean with a 95% t interval over seeds; ${r.config.finalEpisodes} held-out episodes per task (${r.heldout.join(', ')})
and run, the same episodes for every row of a seed and its base (${r.config.base}). "vs other rows": the mean over
seeds of each seed's paired difference; "episodes pooled": one paired difference over every episode of every seed
(normal interval over episodes, their count in brackets); "x fewer executions / x less training time": the other row's executions
(training seconds) over this row's, per seed, between-seed mean and interval.</p>
<pre>${command.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</pre>
${markdownTableHtml(table)}
${chart(
  'reward of the executed (anchor) rollouts during training, mean over seeds',
  r.rows.map((x) => ({ name: x.name, points: x.anchor_reward_curve.map((v, i) => [i + 1, v] as [number, number]) })),
  'reward',
)}`;
  const files = { json: join(dir, 'report.json'), md: join(dir, 'table.md'), html: join(dir, 'index.html') };
  commitFiles([
    { path: files.json, data: `${JSON.stringify({ ...r, command }, null, 2)}\n` },
    { path: files.md, data: `${table}\n` },
    { path: files.html, data: html },
  ]);
  return files;
}
