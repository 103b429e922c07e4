// The corrections study as files: report.json, a Markdown table (table.md, what docs quote) and
// index.html (the table, the denoiser's w over training and the learning curves, inline SVG), written
// as one unit.
import { join } from 'node:path';
import { commitFiles } from '../store/index.ts';
import type { CorrectionReport } from './corrections.ts';

type Across = { mean: number; low: number | null; high: number | null; values: number[] };
const pts = (x: number) => (100 * x).toFixed(1);
const withCi = (a: Across, f = pts) => (a.low === null ? f(a.mean) : `${f(a.mean)} [${f(a.low)}, ${f(a.high!)}]`);
const share = (a: Across) => `${Math.round(100 * a.mean)}%`;
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const COLOURS = ['#222', '#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];

/** One line per row: seeds, held-out success, vs base, vs the rows it is paired with (mean of per-seed
 *  paired differences, t interval over seeds), physics and world-model steps, clock, and what the corrections did. */
export function correctionTable(r: CorrectionReport): string {
  const head = [
    'row',
    'seeds',
    'held-out success',
    'vs base',
    'vs other rows (mean of per-seed paired differences)',
    'the same at equal physics steps / training s',
    'physics steps',
    'world-model steps',
    'train s',
    'debias changed',
    '≥3 rewards',
    'w mean / final',
  ];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of r.rows) {
    if (!row.seeds.length) {
      lines.push(`| ${row.name} | 0 | not run yet |${' |'.repeat(head.length - 3)}`);
      continue;
    }
    const c = row.corrections;
    const ref = row.versus.map((v) => `${withCi(v.per_seed)} vs ${v.row}`).join('; ');
    const equal = row.versus
      .flatMap(({ row: other, at_equal_cost: eq }) =>
        eq ? [`${[eq.physics_steps, eq.seconds].map((a) => (a ? withCi(a) : 'beyond')).join(' / ')} vs ${other}`] : [],
      )
      .join('; ');
    lines.push(
      `| ${[
        row.name,
        row.seeds.length,
        withCi(row.success),
        withCi(row.vs_base),
        ref,
        equal,
        Math.round(row.physics_steps.mean),
        Math.round(row.world_model_steps.mean),
        Math.round(row.train_seconds.mean),
        share(c.debias_changed),
        share(c.three_valued),
        `${c.w_mean.mean.toFixed(2)} / ${c.w_final.mean.toFixed(2)}`,
      ].join(' | ')} |`,
    );
  }
  lines.push(`| base (no training) | - | ${pts(r.base.success)} |${' |'.repeat(head.length - 3)}`);
  return lines.join('\n');
}

/** A line chart (SVG) of series over iterations. */
export function chart(title: string, series: { name: string; points: [number, number][] }[], yLabel: string): string {
  const W = 560,
    H = 280,
    L = 50,
    R = 150,
    T = 28,
    B = 36;
  const all = series.flatMap((s) => s.points);
  if (!all.length) return '';
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const yMin = Math.min(...all.map((p) => p[1]));
  const yMax = Math.max(yMin + 1e-6, ...all.map((p) => p[1]));
  const sx = (x: number) => L + ((W - L - R) * x) / xMax;
  const sy = (y: number) => T + (H - T - B) * (1 - (y - yMin) / (yMax - yMin));
  const lines = series.map((s, k) => {
    const d = s.points.map(([x, y], i) => `${i ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join('');
    const colour = COLOURS[k % COLOURS.length];
    return (
      `<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>` +
      `<text x="${W - R + 8}" y="${T + 14 * k + 10}" fill="${colour}" font-size="11">${esc(s.name)}</text>`
    );
  });
  return (
    `<svg width="${W}" height="${H}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif">` +
    `<text x="${L}" y="16" font-size="13">${esc(title)}</text>` +
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="#999"/>` +
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="#999"/>` +
    `<text x="${L - 6}" y="${sy(yMax) + 4}" font-size="10" text-anchor="end">${yMax.toFixed(2)}</text>` +
    `<text x="${L - 6}" y="${sy(yMin) + 4}" font-size="10" text-anchor="end">${yMin.toFixed(2)}</text>` +
    `<text x="${W - R}" y="${H - B + 14}" font-size="10" text-anchor="end">${xMax}</text>` +
    `<text x="${(L + W - R) / 2}" y="${H - 6}" font-size="11" text-anchor="middle">iteration</text>` +
    `<text x="12" y="${(T + H - B) / 2}" font-size="11" transform="rotate(-90 12 ${(T + H - B) / 2})" ` +
    `text-anchor="middle">${esc(yLabel)}</text>${lines.join('')}</svg>`
  );
}

/** Writes report.json, table.md and index.html into `dir` as one unit. */
export function writeCorrectionReport(
  dir: string,
  r: CorrectionReport,
  command: string,
): { json: string; md: string; html: string } {
  const table = correctionTable(r);
  const w = chart(
    "the denoiser's w (anchor-group weight), mean over seeds",
    r.rows
      .filter((x) => x.w_curve.some((v) => v !== 1))
      .map((x) => ({ name: x.name, points: x.w_curve.map((v, i) => [i + 1, v]) })),
    'w',
  );
  const curves = chart(
    'held-out success during training (rows that evaluate), per seed',
    r.rows.flatMap((x) =>
      x.curves.map((c) => ({
        name: `${x.name} s${c.seed}`,
        points: c.points.map((p) => [p.iteration, p.success] as [number, number]),
      })),
    ),
    'success',
  );
  const html = `<!doctype html><meta charset="utf-8"><title>wmrl corrections study</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}</style>
<h1>What the world model and each correction add</h1>
<p>Held-out success in points, between-seed mean with a 95% t interval over seeds;
${r.config.finalEpisodes} held-out episodes per task and run (tasks: ${esc(r.config.tasks.join(', '))});
${r.config.iterations} iterations per run. "vs other rows": the mean over seeds of each seed's paired difference to
the other row's run of the same seed; "at equal physics steps / training s": each seed's last held-out curve point
against the other row's curve interpolated at the same physics steps / training seconds ("beyond": past its end).</p>
<pre>${esc(command)}</pre>
${markdownTableHtml(table)}
${w}
${curves}`;
  const files = { json: join(dir, 'report.json'), md: join(dir, 'table.md'), html: join(dir, 'index.html') };
  commitFiles([
    { path: files.json, data: `${JSON.stringify({ ...r, command }, null, 2)}\n` },
    { path: files.md, data: `${table}\n` },
    { path: files.html, data: html },
  ]);
  return files;
}

/** A Markdown table as an HTML table. */
export function markdownTableHtml(md: string): string {
  const [head, , ...body] = md.split('\n');
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => esc(c.trim()));
  return `<table><tr>${cells(head)
    .map((c) => `<th>${c}</th>`)
    .join('')}</tr>${body
    .map(
      (l) =>
        `<tr>${cells(l)
          .map((c) => `<td>${c}</td>`)
          .join('')}</tr>`,
    )
    .join('')}</table>`;
}
