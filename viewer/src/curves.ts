// Training curves from runs' metrics.jsonl rows, one panel per metric group: success by source, held-out
// success with its 95% interval, the debias bias before/after, the denoiser's weight w, seconds per
// component per iteration. Several runs overlay in one panel (a colour per run, a dash per metric); a
// panel whose metrics no run has is hidden. Lines are smoothed (TensorBoard's EMA) over faint raw values.
import { TRAIN_CLOCK_KEYS, type TrainMetricKey } from '../../src/core/metrics.ts';
import type { MetricsRow } from '../../src/protocol/index.ts';
import { COLOURS, DASHES, drawChart, type Series, smooth } from './plot.ts';

export interface RunRows {
  run: string;
  rows: readonly MetricsRow[];
}

export interface CurveOptions {
  /** EMA weight in [0, 1): 0 draws the raw values. */
  smoothing: number;
  /** iteration: the iteration number; seconds: the training clock summed over the rows so far. */
  x: 'iteration' | 'seconds';
}

interface Panel {
  id: string;
  title: string;
  /** Each metric and its legend label (typed: a metric renamed in the trainer's schema fails here). */
  keys: readonly [TrainMetricKey, string][];
  /** Rates: the y axis always shows 0..1. */
  rate?: boolean;
  /** Held-out evaluations: sparse measurements with their interval, drawn as measured (never smoothed). */
  heldOut?: boolean;
  /** Hidden when every value is the same (a correction the run does not apply stays at its neutral value). */
  hideFlat?: boolean;
  /** A metric that is 0 on every line is left out (a part of the clock the run never used). */
  dropZero?: boolean;
  /** With several runs, one line per run: the sum of these metrics (each part for each run is too many). */
  overlaySum?: { label: string; keys: readonly TrainMetricKey[] };
}

const PANELS: Panel[] = [
  {
    id: 'success',
    title: 'success by source',
    keys: [
      ['success/anchor', 'anchors (physics)'],
      ['success/wm', 'world model'],
    ],
    rate: true,
  },
  {
    id: 'heldout',
    title: 'held-out success, 95% interval',
    keys: [['eval/success', 'held-out']],
    rate: true,
    heldOut: true,
  },
  {
    id: 'debias',
    title: 'debias: reward bias',
    keys: [
      ['debias/bias_before', 'before'],
      ['debias/bias_after', 'after'],
    ],
    hideFlat: true,
  },
  { id: 'weight', title: 'denoise weight w', keys: [['denoise/w', 'w']], hideFlat: true },
  {
    id: 'time',
    title: 'seconds per iteration',
    keys: [
      ['time/physics_s', 'physics'],
      ['time/world_model_s', 'world model'],
      ['time/training_s', 'updates'],
      ['time/refresh_s', 'wm refresh'],
      ['time/policy_inference_s', 'policy inference'],
      ['time/fidelity_s', 'fidelity'],
    ],
    dropZero: true,
    overlaySum: { label: 'training clock', keys: TRAIN_CLOCK_KEYS },
  },
];

const num = (r: MetricsRow, k: string) => (typeof r[k] === 'number' ? (r[k] as number) : undefined);

/** Each row's x: its iteration (the line number when it has none), or the training clock at its end. */
function xs(rows: readonly MetricsRow[], axis: CurveOptions['x']): number[] {
  let clock = 0;
  return rows.map((r, n) => {
    clock += TRAIN_CLOCK_KEYS.reduce((s, k) => s + (num(r, k) ?? 0), 0);
    return axis === 'seconds' ? clock : (num(r, 'iteration') ?? n + 1);
  });
}

/** The held-out measurements of a run: before training (x 0) and after the iterations that evaluated. */
function heldOut(
  rows: readonly MetricsRow[],
  x: number[],
): { points: [number, number][]; band: [number, number, number][] } {
  const points: [number, number][] = [];
  const band: [number, number, number][] = [];
  const first = rows[0];
  const take = (prefix: string, r: MetricsRow, at: number) => {
    const y = num(r, `${prefix}/success`);
    if (y === undefined) return;
    points.push([at, y]);
    band.push([at, num(r, `${prefix}/ci_low`) ?? y, num(r, `${prefix}/ci_high`) ?? y]);
  };
  if (first) take('eval_initial', first, 0);
  rows.forEach((r, i) => take('eval', r, x[i]));
  return { points, band };
}

/** A drawn line and what it shows: run index and metric index (for the legend). */
type Line = Series & { run: number; metric: number };

/** The metrics a panel draws: each one's label and its value on a line. */
function metricsOf(panel: Panel, many: boolean): { label: string; value: (r: MetricsRow) => number | undefined }[] {
  const sum = panel.overlaySum;
  if (many && sum)
    return [
      {
        label: sum.label,
        value: (r) =>
          sum.keys.some((k) => num(r, k) !== undefined)
            ? sum.keys.reduce((t, k) => t + (num(r, k) ?? 0), 0)
            : undefined,
      },
    ];
  return panel.keys.map(([key, label]) => ({ label, value: (r) => num(r, key) }));
}

function seriesOf(panel: Panel, runs: readonly RunRows[], o: CurveOptions): Line[] {
  const many = runs.length > 1;
  const names = shortNames(runs.map((r) => r.run));
  const out: Line[] = [];
  runs.forEach(({ rows }, r) => {
    const x = xs(rows, o.x);
    metricsOf(panel, many).forEach(({ label, value }, k) => {
      const line = {
        run: r,
        metric: k,
        label: many ? `${names[r]} · ${label}` : label,
        colour: COLOURS[(many ? r : k) % COLOURS.length],
        dash: many ? DASHES[k % DASHES.length] : undefined,
      };
      if (panel.heldOut) {
        const { points, band } = heldOut(rows, x);
        if (points.length) out.push({ ...line, points, band, markers: true });
        return;
      }
      const raw = rows.flatMap((row, i): [number, number][] => {
        const y = value(row);
        return y === undefined ? [] : [[x[i], y]];
      });
      if (!raw.length || (panel.dropZero && raw.every(([, y]) => y === 0))) return;
      const points = o.smoothing > 0 ? smooth(raw, o.smoothing) : raw;
      out.push({ ...line, points, ...(o.smoothing > 0 && { faint: raw }) });
    });
  });
  return out;
}

/** Run ids without the folders they all share ("speedup/real-seed0", "speedup/wmrl-seed0": "real-seed0", ...). */
export function shortNames(ids: readonly string[]): string[] {
  if (ids.length < 2) return [...ids];
  const parts = ids.map((id) => id.split('/'));
  let common = 0;
  while (parts.every((p) => p.length > common + 1 && p[common] === parts[0][common])) common++;
  return parts.map((p) => p.slice(common).join('/'));
}

const isFlat = (series: Series[]) => {
  const ys = series.flatMap((s) => (s.faint ?? s.points).map((p) => p[1]));
  return ys.every((y) => y === ys[0]);
};

/** The panels' figures (made once, in PANELS order) inside `root`. */
function figures(root: HTMLElement): Map<string, HTMLElement> {
  const found = new Map<string, HTMLElement>();
  for (const panel of PANELS) {
    let fig = root.querySelector<HTMLElement>(`figure[data-curve="${panel.id}"]`);
    if (!fig) {
      fig = document.createElement('figure');
      fig.className = 'panel';
      fig.dataset.curve = panel.id;
      fig.innerHTML =
        '<figcaption></figcaption><div class="plot"><canvas class="chart"></canvas><ul class="legend"></ul></div>';
      root.appendChild(fig);
    }
    found.set(panel.id, fig);
  }
  return found;
}

function legendItem(label: string, colour: string, dash: number[] = []): HTMLLIElement {
  const li = document.createElement('li');
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('width', '18');
  svg.setAttribute('height', '8');
  const l = document.createElementNS('http://www.w3.org/2000/svg', 'line');
  for (const [k, v] of Object.entries({ x1: 0, y1: 4, x2: 18, y2: 4, stroke: colour, 'stroke-width': 2 }))
    l.setAttribute(k, String(v));
  if (dash.length) l.setAttribute('stroke-dasharray', dash.join(' '));
  svg.appendChild(l);
  li.append(svg, document.createTextNode(label));
  li.title = label;
  return li;
}

/** One entry per line for one run; with several runs, one per run (its colour, its full id on hover) and,
 *  when the panel draws more than one metric, one per metric (its dash). */
function legend(ul: HTMLElement, panel: Panel, runs: readonly RunRows[], lines: Line[]): void {
  if (runs.length <= 1) {
    ul.replaceChildren(...lines.map((s) => legendItem(s.label, s.colour, s.dash)));
    return;
  }
  const names = shortNames(runs.map((r) => r.run));
  const shownRuns = [...new Set(lines.map((l) => l.run))].sort((a, b) => a - b);
  const shownMetrics = [...new Set(lines.map((l) => l.metric))].sort((a, b) => a - b);
  const metrics = metricsOf(panel, true);
  ul.replaceChildren(
    ...shownRuns.map((r) => {
      const li = legendItem(names[r], COLOURS[r % COLOURS.length]);
      li.title = runs[r].run;
      return li;
    }),
    ...(shownMetrics.length > 1
      ? shownMetrics.map((k) => legendItem(metrics[k].label, '#666', DASHES[k % DASHES.length]))
      : []),
  );
}

/** Draws every panel that has something to show for `runs` into `root`; returns how many lines were drawn
 *  and which panels show. */
export function drawCurves(
  root: HTMLElement,
  runs: readonly RunRows[],
  o: CurveOptions,
): { series: number; panels: string[] } {
  const figs = figures(root);
  const drawn = PANELS.map((panel) => ({ panel, fig: figs.get(panel.id)!, series: seriesOf(panel, runs, o) })).filter(
    ({ panel, fig, series }) => {
      fig.hidden = series.length === 0 || (panel.hideFlat === true && isFlat(series));
      return !fig.hidden;
    },
  );
  // every panel's visibility first: the visible ones share the width, so canvases are sized after that
  for (const { panel, fig, series } of drawn) {
    fig.querySelector('figcaption')!.textContent =
      runs.length === 1 ? `${panel.title} · ${runs[0].run}` : `${panel.title} · ${runs.length} runs`;
    legend(fig.querySelector('ul')!, panel, runs, series);
    drawChart(fig.querySelector('canvas')!, series, {
      x: o.x === 'seconds' ? 'seconds' : 'integer',
      yRange: panel.rate ? [0, 1] : undefined,
    });
  }
  return { series: drawn.reduce((n, d) => n + d.series.length, 0), panels: drawn.map((d) => d.panel.id) };
}
