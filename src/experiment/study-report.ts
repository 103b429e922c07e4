// The one report writer of the studies: report.json, a Markdown table (what docs quote) and index.html
// (the table and line charts as inline SVG), written as one commit; with the HTML escape and the chart
// they all use.
import { join } from 'node:path';
import { commitFiles } from '../store/index.ts';
import type { Across } from './study-stats.ts';

/** Text as HTML (element content and attribute values). */
export const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A missing value in a table. */
export const NA = 'n/a';

/** `a`'s mean with its interval through `f` ("n/a" with no value; "(n k)" when fewer values than `of`). */
export function withCi(a: Across, f: (x: number) => string, of?: number): string {
  if (a.mean === null) return NA;
  const ci = a.low === null || a.high === null ? '' : ` [${f(a.low)}, ${f(a.high)}]`;
  return `${f(a.mean)}${ci}${of !== undefined && a.n < of ? ` (n ${a.n})` : ''}`;
}

/** A Markdown table. */
export function markdownTable(head: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(head), `|${head.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

/** A Markdown table as an HTML table (cells escaped). */
export function markdownTableHtml(md: string): string {
  const [head, , ...body] = md.split('\n');
  const cells = (line: string, tag: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => `<${tag}>${esc(c.trim())}</${tag}>`)
      .join('');
  return `<table><tr>${cells(head, 'th')}</tr>${body.map((l) => `<tr>${cells(l, 'td')}</tr>`).join('')}</table>`;
}

export interface Series {
  name: string;
  points: readonly (readonly [number, number])[];
  colour?: string;
}

const COLOURS = ['#222', '#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
const W = 560,
  H = 300,
  L = 54,
  R = 150,
  T = 30,
  B = 40;

/** A line chart (SVG): a line per series, its name in the legend; `y` formats the axis values. */
export function chart(
  title: string,
  series: readonly Series[],
  o: { x: string; y: string; yFormat?: (v: number) => string },
): string {
  const all = series.flatMap((s) => s.points);
  if (!all.length) return '';
  const fy = o.yFormat ?? ((v: number) => v.toFixed(2));
  const xMax = Math.max(1e-9, ...all.map((p) => p[0]));
  const yMin = Math.min(...all.map((p) => p[1]));
  const yMax = Math.max(yMin + 1e-6, ...all.map((p) => p[1]));
  const sx = (x: number) => L + ((W - L - R) * x) / xMax;
  const sy = (y: number) => T + (H - T - B) * (1 - (y - yMin) / (yMax - yMin));
  const lines = series.map((s, k) => {
    const d = s.points.map(([x, y], i) => `${i ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join('');
    const colour = s.colour ?? COLOURS[k % COLOURS.length];
    return (
      `<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>` +
      `<text x="${W - R + 8}" y="${T + 14 * k + 10}" fill="${colour}" font-size="11">${esc(s.name)}</text>`
    );
  });
  const xTicks = [0, 0.25, 0.5, 0.75, 1].map(
    (f) =>
      `<text x="${sx(f * xMax).toFixed(1)}" y="${H - B + 14}" font-size="10" text-anchor="middle">` +
      `${(f * xMax).toFixed(xMax >= 100 ? 0 : 1)}</text>`,
  );
  const yTicks = [yMin, (yMin + yMax) / 2, yMax].map(
    (y) => `<text x="${L - 6}" y="${(sy(y) + 4).toFixed(1)}" font-size="10" text-anchor="end">${esc(fy(y))}</text>`,
  );
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" role="img">` +
    `<title>${esc(title)}</title><text x="${L}" y="18" font-size="13">${esc(title)}</text>` +
    `<rect x="${L}" y="${T}" width="${W - L - R}" height="${H - T - B}" fill="none" stroke="#ccc"/>` +
    `${xTicks.join('')}${yTicks.join('')}` +
    `<text x="${(L + W - R) / 2}" y="${H - 6}" font-size="11" text-anchor="middle">${esc(o.x)}</text>` +
    `<text x="12" y="${(T + H - B) / 2}" font-size="11" transform="rotate(-90 12 ${(T + H - B) / 2})" ` +
    `text-anchor="middle">${esc(o.y)}</text>${lines.join('')}</svg>`
  );
}

/** A report page: its title, an introduction (HTML), the command that made it, then `body` (HTML). */
export function page(title: string, intro: string, command: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;max-width:1200px}table{border-collapse:collapse;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child,th:first-child{text-align:left}
th{background:#f4f4f4}</style></head><body>
<h1>${esc(title)}</h1>
<p>${intro}</p>
<pre>${esc(command)}</pre>
${body}
</body></html>
`;
}

/** Writes a report's files into `dir` as one commit: `json` (with the command), and where given the
 *  Markdown table and the HTML page; returns their paths. */
export function writeReport(
  dir: string,
  r: { json: object; md?: string; html?: string; command: string },
  names: { json: string; md?: string; html?: string } = { json: 'report.json', md: 'table.md', html: 'index.html' },
): { json: string; md?: string; html?: string } {
  const files = {
    json: join(dir, names.json),
    ...(r.md !== undefined && names.md && { md: join(dir, names.md) }),
    ...(r.html !== undefined && names.html && { html: join(dir, names.html) }),
  };
  commitFiles([
    { path: files.json, data: `${JSON.stringify({ command: r.command, ...r.json }, null, 2)}\n` },
    ...(files.md ? [{ path: files.md, data: `${r.md}\n` }] : []),
    ...(files.html ? [{ path: files.html, data: r.html! }] : []),
  ]);
  return files;
}
