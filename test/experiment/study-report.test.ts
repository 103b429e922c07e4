// The study report writer: escaping, tables, charts, and the speedup report's page on a toy report
// (its rows, its numbers, a policy name that needs escaping).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chart,
  esc,
  markdownTable,
  markdownTableHtml,
  type SpeedupReport,
  withCi,
  writeReport,
  writeSpeedupReport,
} from '../../src/experiment/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-study-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the study report writer', () => {
  it('escapes text for HTML content and attributes', () => {
    expect(esc(`a<b & "c">`)).toBe('a&lt;b &amp; &quot;c&quot;&gt;');
  });

  it('a Markdown table, and the same as HTML with every cell escaped', () => {
    const md = markdownTable(
      ['row', 'x'],
      [
        ['a<&b', 1.5],
        ['c', 'n/a'],
      ],
    );
    expect(md).toBe('| row | x |\n|---|---|\n| a<&b | 1.5 |\n| c | n/a |');
    expect(markdownTableHtml(md)).toBe(
      '<table><tr><th>row</th><th>x</th></tr><tr><td>a&lt;&amp;b</td><td>1.5</td></tr><tr><td>c</td><td>n/a</td></tr></table>',
    );
  });

  it('a value with its interval; missing as n/a; fewer values than seeds counted', () => {
    const f = (x: number) => x.toFixed(1);
    expect(withCi({ mean: 0.5, low: 0.25, high: 0.75, values: [0.4, 0.6], n: 2 }, f, 2)).toBe('0.5 [0.3, 0.8]');
    expect(withCi({ mean: 0.5, low: null, high: null, values: [0.5], n: 1 }, f, 3)).toBe('0.5 (n 1)');
    expect(withCi({ mean: null, low: null, high: null, values: [], n: 0 }, f, 3)).toBe('n/a');
  });

  it('a chart draws a line per series through its points, names it in the legend, escaped', () => {
    const svg = chart(
      't<1',
      [
        {
          name: 'a&b',
          points: [
            [0, 0],
            [10, 1],
          ],
        },
      ],
      { x: 'iteration', y: 'success' },
    );
    expect(svg).toContain('<title>t&lt;1</title>');
    expect(svg).toContain('>a&amp;b</text>');
    // x 0..10 over 54..410, y 0..1 over 260..30
    expect(svg).toContain('d="M54.0,260.0L410.0,30.0"');
    expect(chart('empty', [], { x: 'x', y: 'y' })).toBe('');
  });

  it('writes its files as one commit, the command first in the JSON', () => {
    const dir = join(tmp, 'one');
    const files = writeReport(dir, { json: { a: 1 }, md: '| a |', html: '<p>a</p>', command: 'wmrl x' });
    expect(JSON.parse(readFileSync(files.json, 'utf8'))).toEqual({ command: 'wmrl x', a: 1 });
    expect(readFileSync(files.md!, 'utf8')).toBe('| a |\n');
    expect(readdirSync(dir).sort()).toEqual(['index.html', 'report.json', 'table.md']);
  });
});

const result = (success: number, n: number, diff = 0) => ({
  success,
  ci_low: success - 0.05,
  ci_high: success + 0.05,
  episodes: n,
  vs_base: { diff, ci_low: diff - 0.03, ci_high: diff + 0.03, episodes: n },
});
const point = (iteration: number, seconds: number, success: number) => ({
  iteration,
  seconds,
  physicsSteps: 1000 * iteration,
  success,
  low: 0,
  high: 1,
});
const interval = (estimate: number | null) => ({
  target: 0.4,
  real_at: 100,
  run_at: estimate && 100 / estimate,
  estimate,
  median: estimate ?? 0,
  low: 1.25,
  high: 3.5,
  reached: 0.93,
});
const row = (mode: string, success: number, speedup: number | null) => ({
  mode,
  seed: 0,
  iterations: 32,
  train_seconds: mode === 'real' ? 642 : 393,
  physics_steps: mode === 'real' ? 582000 : 116000,
  world_model_steps: 0,
  time: { world_model: 10 },
  final: {
    overall: result(success, 400, success - 0.25),
    seen: result(0.5, 300),
    reserved: result(0.1, 100),
    per_task: {},
  },
  vs_real: { diff: success - 0.325, ci_low: 0.017, ci_high: 0.073, episodes: 400 },
  cost_vs_real: { wall: 642 / (mode === 'real' ? 642 : 393), physics: 582000 / (mode === 'real' ? 582000 : 116000) },
  speedup_wall: mode === 'real' ? null : interval(speedup),
  speedup_physics: mode === 'real' ? null : interval(speedup && 2 * speedup),
  speedup_wall_ceiling: mode === 'real' ? null : 2.5,
  iteration_cost_vs_real: mode === 'real' ? 1 : 0.3,
  equal_reward_groups: mode === 'real' ? 0.42 : null,
  fidelity: {},
});

describe('the speedup report page', () => {
  it('holds every run as a table row with its numbers, the curves, and an escaped policy name', () => {
    const report = {
      format: 'wmrl-speedup/2',
      config: { tasks: ['tabletop/pick-place'], evalEpisodes: 100, finalEpisodes: 200 },
      policy: 'models/a<&b.onnx',
      world_model: 'models/wm-base.onnx',
      base: { overall: result(0.248, 400) },
      runs: [row('real', 0.325, null), row('wmrl', 0.37, 2.04), row('mix', 0.3, null)],
      curves: [
        { mode: 'real', seed: 0, points: [point(0, 0, 0.25), point(16, 300, 0.31)] },
        { mode: 'wmrl', seed: 0, points: [point(0, 0, 0.25), point(16, 100, 0.36)] },
      ],
    } as unknown as SpeedupReport;
    const files = writeSpeedupReport(join(tmp, 'speedup'), report, 'wmrl experiment speedup --runs "x<y"');
    const html = readFileSync(files.html!, 'utf8');
    expect(html).toContain('base policy models/a&lt;&amp;b.onnx: held-out success 24.8% [19.8, 29.8] (n 400)');
    expect(html).not.toContain('a<&b');
    expect(html).toContain('<pre>wmrl experiment speedup --runs &quot;x&lt;y&quot;</pre>');
    // one row per run: mode, seed, iterations, wall-clock, physics steps, success, vs base, ...
    expect(html).toContain(
      '<tr><td>real</td><td>0</td><td>32</td><td>642</td><td>582000</td><td>32.5 [27.5, 37.5]</td>',
    );
    expect(html).toContain('<td>wmrl</td><td>0</td><td>32</td><td>393</td><td>116000</td><td>37.0 [32.0, 42.0]</td>');
    expect(html).toContain('<td>4.5 [1.7, 7.3]</td><td>2.04 [1.25, 3.50] (93.0%)</td><td>4.1 [1.3, 3.5] (93.0%)</td>');
    expect(html).toContain('<td>2.50</td><td>1.63 / 5.0</td><td>0.30</td><td>n/a</td></tr>');
    expect(html).toContain('<td>not reached [1.25, 3.50] (93.0%)</td>');
    expect(html).toContain('<td>42.0%</td>');
    // the two charts, a line per curve from the base
    expect(html.match(/<svg/g)).toHaveLength(2);
    expect(html.match(/>wmrl s0<\/text>/g)).toHaveLength(2);
    const md = readFileSync(files.md!, 'utf8');
    expect(md.trim().split('\n')).toHaveLength(2 + 3);
    expect(JSON.parse(readFileSync(files.json, 'utf8')).runs[1].speedup_wall.estimate).toBe(2.04);
  });
});
