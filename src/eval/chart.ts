// The eval run folder's pictures: a PNG bar chart (success per task family, one bar per policy, Wilson
// 95% whiskers, grid lines every 25%) drawn pixel by pixel, and a small self-contained HTML page that
// shows it next to the numbers. Node-only (writes files).
import { join } from 'node:path';
import { commitFiles } from '../store/index.ts';
import type { EvalReport } from './report.ts';
import { encodePng } from '../render/png-file.ts';

type Rgb = [number, number, number];
const COLOURS: Rgb[] = [
  [56, 108, 176],
  [240, 140, 40],
];
const GRID: Rgb = [220, 220, 220];
const AXIS: Rgb = [60, 60, 60];
const WHISKER: Rgb = [20, 20, 20];

function fillRect(img: Uint8Array, w: number, h: number, x0: number, y0: number, x1: number, y1: number, c: Rgb): void {
  for (let y = Math.max(0, Math.min(y0, y1)); y <= Math.min(h - 1, Math.max(y0, y1)); y++) {
    for (let x = Math.max(0, Math.min(x0, x1)); x <= Math.min(w - 1, Math.max(x0, x1)); x++)
      img.set(c, 3 * (y * w + x));
  }
}

/** RGB pixels of the chart; groups are the report's tasks then "overall". */
export function drawSuccessChart(report: EvalReport, width = 480, height = 240): Uint8Array {
  const img = new Uint8Array(width * height * 3).fill(255);
  const [left, right, top, bottom] = [30, width - 10, 10, height - 20];
  const yOf = (v: number) => Math.round(bottom - v * (bottom - top));
  for (const v of [0.25, 0.5, 0.75, 1]) fillRect(img, width, height, left, yOf(v), right, yOf(v), GRID);
  const groups = [...report.tasks, 'overall'];
  const groupW = (right - left) / groups.length;
  const barW = Math.max(2, Math.floor((groupW * 0.7) / report.policies.length));
  groups.forEach((task, gi) => {
    report.policies.forEach((p, pi) => {
      const r = p.results[task];
      if (!r) return;
      const x0 = Math.round(left + gi * groupW + groupW * 0.15 + pi * barW);
      const x1 = x0 + barW - 2;
      fillRect(img, width, height, x0, yOf(r.success_rate), x1, bottom, COLOURS[pi % COLOURS.length]);
      const xm = Math.round((x0 + x1) / 2);
      fillRect(img, width, height, xm, yOf(r.ci_high), xm, yOf(r.ci_low), WHISKER);
      fillRect(img, width, height, xm - 3, yOf(r.ci_high), xm + 3, yOf(r.ci_high), WHISKER);
      fillRect(img, width, height, xm - 3, yOf(r.ci_low), xm + 3, yOf(r.ci_low), WHISKER);
    });
  });
  fillRect(img, width, height, left, top, left, bottom, AXIS);
  fillRect(img, width, height, left, bottom, right, bottom, AXIS);
  return img;
}

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function reportHtml(report: EvalReport, chart: string): string {
  const groups = [...report.tasks, 'overall'];
  const rows = report.policies.flatMap((p, pi) =>
    groups.map((t) => {
      const r = p.results[t];
      const swatch = `display:inline-block;width:10px;height:10px;background:rgb(${COLOURS[pi % 2].join(',')})`;
      const sw = `<span style="${swatch}"></span>`;
      return (
        `<tr><td>${sw} ${esc(p.policy)}</td><td>${esc(t)}</td><td>${pct(r.success_rate)}</td>` +
        `<td>[${pct(r.ci_low)}, ${pct(r.ci_high)}]</td><td>${r.episodes}</td>` +
        `<td>${r.mean_progress.toFixed(2)}</td><td>${r.mean_length.toFixed(1)}</td></tr>`
      );
    }),
  );
  const pairedRows = Object.entries(report.paired ?? {})
    .map(
      ([t, d]) =>
        `<tr><td>${esc(t)}</td><td>${pct(d.diff)}</td><td>[${pct(d.ci_low)}, ${pct(d.ci_high)}]</td>` +
        `<td>${d.episodes}</td></tr>`,
    )
    .join('');
  const paired = report.paired
    ? `<h2>Paired difference (${esc(report.policies[0].policy)} &minus; ${esc(report.policies[1].policy)}, ` +
      'same seeds)</h2><table><tr><th>task</th><th>diff</th><th>95% CI</th><th>n</th></tr>' +
      `${pairedRows}</table>`
    : '';
  const stages = report.policies
    .filter((p) => p.failed_stages)
    .map((p) => {
      const rows = Object.entries(p.failed_stages!).map(
        ([t, f]) =>
          `<tr><td>${esc(t)}</td><td>${f.failed}</td><td>${Object.entries(f.stages)
            .map(([k, n]) => `${esc(k)} ${n}`)
            .join(', ')}</td></tr>`,
      );
      return (
        `<h2>Failed episodes by the last stage reached at their final state: ${esc(p.policy)}</h2>` +
        `<table><tr><th>task</th><th>failed</th><th>by stage</th></tr>${rows.join('')}</table>`
      );
    })
    .join('\n');
  return (
    '<!doctype html>\n' +
    '<html><head><meta charset="utf-8"><title>wmrl eval</title>\n' +
    '<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}' +
    'td,th{padding:2px 10px;border-bottom:1px solid #ddd;text-align:left}</style></head>\n' +
    `<body><h1>wmrl eval: ${esc(report.split)} split</h1>\n` +
    `<p>${report.episodes_per_task} physics episodes per task ` +
    `(split episode indices ${report.seeds.first_index}..${report.seeds.first_index + report.seeds.count - 1}), ` +
    `sampling temperature ${report.temperature}. Bars: success per task (last group: all tasks pooled); ` +
    'whiskers: Wilson 95% interval; grid lines every 25%; ' +
    `groups left to right: ${groups.map(esc).join(', ')}.</p>\n` +
    `<img src="${chart}" alt="success per task with 95% intervals" style="image-rendering:pixelated;width:720px">\n` +
    '<table><tr><th>policy</th><th>task</th><th>success</th><th>95% CI</th><th>n</th><th>process score</th>' +
    `<th>length</th></tr>${rows.join('')}</table>\n` +
    `${paired}\n` +
    `${stages}\n` +
    '</body></html>\n'
  );
}

/** Writes report.json, success.png and index.html into `dir`. */
export function writeEvalFolder(dir: string, report: EvalReport): { json: string; png: string; html: string } {
  const width = 480;
  const height = 240;
  const png = join(dir, 'success.png');
  const json = join(dir, 'report.json');
  const html = join(dir, 'index.html');
  commitFiles([
    { path: json, data: `${JSON.stringify(report, null, 2)}\n` },
    { path: png, data: encodePng(drawSuccessChart(report, width, height), width, height) },
    { path: html, data: reportHtml(report, 'success.png') },
  ]);
  return { json, png, html };
}
