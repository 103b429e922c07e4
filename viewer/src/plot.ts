// Small line charts on a 2D canvas: axes with round ticks (integers for iterations, minutes and seconds
// for clocks), lines with optional faint raw values behind them, interval whiskers and markers. Legends
// never overlap the lines: a row above the plot here, or an HTML list beside it (curves.ts).
export interface Series {
  label: string;
  colour: string;
  points: [number, number][];
  /** The raw values of a smoothed line, drawn faint behind it. */
  faint?: [number, number][];
  /** An interval per measurement: [x, low, high], drawn as whiskers. */
  band?: [number, number, number][];
  /** Line dash pattern (canvas setLineDash); solid when absent. */
  dash?: number[];
  /** Marks each point (sparse measurements). */
  markers?: boolean;
}

/** integer: iteration or step numbers; seconds: a clock; number: any value. */
export type AxisKind = 'integer' | 'seconds' | 'number';

export interface ChartOptions {
  /** Drawn at the top left of the canvas (curves.ts captions its panels in HTML instead). */
  title?: string;
  /** A row of swatches under the title (the charts of curves.ts list theirs beside the canvas). */
  legend?: boolean;
  x: AxisKind;
  /** A dashed vertical line at this x (the timeline's step). */
  marker?: number;
  /** A y range always shown (e.g. [0, 1] for rates); the data may widen it. */
  yRange?: [number, number];
}

export const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
export const DASHES: number[][] = [[], [6, 3], [2, 2], [8, 3, 2, 3]];

const FONT = '11px system-ui, sans-serif';
const LINE = 13;

/** TensorBoard's smoothing: an exponential moving average, debiased so that the first values are not
 *  pulled toward 0. weight 0 returns the points as they are. */
export function smooth(points: readonly [number, number][], weight: number): [number, number][] {
  let last = 0;
  let n = 0;
  return points.map(([x, y]) => {
    n++;
    last = last * weight + (1 - weight) * y;
    return [x, weight > 0 ? last / (1 - weight ** n) : y];
  });
}

/** Round tick values from lo to hi, at most `max` steps between the first and the last; integer and seconds
 *  axes get whole steps. */
export function ticks(lo: number, hi: number, max: number, kind: AxisKind): number[] {
  const span = hi - lo;
  if (!(span > 0) || max < 1) return [lo];
  const raw = span / max;
  let step: number;
  if (kind === 'seconds') {
    const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400];
    step = steps.find((s) => s >= raw) ?? Math.ceil(raw / 86400) * 86400;
  } else {
    const p = 10 ** Math.floor(Math.log10(raw));
    step = ([1, 2, 5, 10].find((m) => m * p >= raw) ?? 10) * p;
    if (kind === 'integer') step = Math.max(1, Math.round(step));
  }
  const first = Math.ceil(lo / step - 1e-9);
  const count = Math.floor(hi / step + 1e-9) - first + 1;
  if (!(count >= 1 && count <= 4 * max + 2)) return [lo, hi]; // a step lost in rounding (a span far below lo)
  return Array.from({ length: count }, (_, k) => (first + k) * step);
}

export function formatSeconds(s: number): string {
  const r = Math.round(s);
  if (r < 60) return `${r}s`;
  if (r < 3600) return r % 60 ? `${Math.floor(r / 60)}m${String(r % 60).padStart(2, '0')}s` : `${r / 60}m`;
  const m = Math.round(r / 60);
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** A tick label: as many decimals as the tick step needs. */
function tickLabel(v: number, step: number, kind: AxisKind): string {
  if (kind === 'seconds') return formatSeconds(v);
  if (kind === 'integer') return String(Math.round(v));
  const decimals = Math.max(0, Math.min(4, -Math.floor(Math.log10(step) + 1e-9)));
  return v.toFixed(decimals);
}

export function drawChart(canvas: HTMLCanvasElement, series: Series[], o: ChartOptions): void {
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const w = (canvas.width = canvas.clientWidth || 320),
    h = (canvas.height = canvas.clientHeight || 160);
  ctx.clearRect(0, 0, w, h);
  ctx.font = FONT;
  ctx.textBaseline = 'alphabetic';
  let T = 6;
  if (o.title) {
    ctx.fillStyle = '#222';
    ctx.fillText(o.title, 4, T + 9);
    T += LINE;
  }
  if (o.legend) T = legendRow(ctx, series, T, w);
  const finite = ([x, y]: [number, number]) => Number.isFinite(x) && Number.isFinite(y);
  const pts = series.flatMap((s) => [
    ...s.points,
    ...(s.faint ?? []),
    ...(s.band ?? []).flatMap(([x, lo, hi]): [number, number][] => [
      [x, lo],
      [x, hi],
    ]),
  ]);
  const shown = pts.filter(finite);
  if (shown.length === 0) {
    ctx.fillStyle = '#888';
    ctx.fillText('no data yet', 6, (T + h) / 2);
    return;
  }
  let [x0, x1] = [Math.min(...shown.map((p) => p[0])), Math.max(...shown.map((p) => p[0]))];
  let [y0, y1] = [Math.min(...shown.map((p) => p[1])), Math.max(...shown.map((p) => p[1]))];
  if (o.yRange) [y0, y1] = [Math.min(y0, o.yRange[0]), Math.max(y1, o.yRange[1])];
  // a span within rounding of the values (a smoothed constant) is flat
  const flat = (a: number, b: number) => b - a <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  if (flat(x0, x1)) x1 = x0 + 1;
  if (flat(y0, y1)) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const B = LINE + 4;
  T += 4;
  const yTicks = ticks(y0, y1, Math.max(2, Math.min(5, Math.floor((h - T - B) / 24))), 'number');
  const yStep = yTicks.length > 1 ? yTicks[1] - yTicks[0] : Math.abs(y1 - y0);
  const yLabels = yTicks.map((v) => tickLabel(v, yStep, 'number'));
  const L = 6 + Math.max(...yLabels.map((t) => ctx.measureText(t).width));
  const xLabelWidth = ctx.measureText(o.x === 'seconds' ? formatSeconds(x1) : String(Math.round(x1))).width;
  const R = Math.ceil(xLabelWidth / 2) + 2;
  const xTicks = ticks(x0, x1, Math.max(2, Math.floor((w - L - R) / (xLabelWidth + 12))), o.x);
  const xStep = xTicks.length > 1 ? xTicks[1] - xTicks[0] : 1;
  const sx = (x: number) => L + ((x - x0) / (x1 - x0)) * (w - L - R);
  const sy = (y: number) => h - B - ((y - y0) / (y1 - y0)) * (h - T - B);
  ctx.strokeStyle = '#eee';
  ctx.lineWidth = 1;
  ctx.fillStyle = '#555';
  ctx.textAlign = 'right';
  yTicks.forEach((v, i) => {
    ctx.beginPath();
    ctx.moveTo(L, Math.round(sy(v)) + 0.5);
    ctx.lineTo(w - R, Math.round(sy(v)) + 0.5);
    ctx.stroke();
    ctx.fillText(yLabels[i], L - 3, sy(v) + 4);
  });
  ctx.textAlign = 'center';
  for (const v of xTicks) ctx.fillText(tickLabel(v, xStep, o.x), sx(v), h - 4);
  ctx.textAlign = 'left';
  ctx.strokeStyle = '#bbb';
  ctx.strokeRect(L + 0.5, T + 0.5, w - L - R, h - T - B);
  ctx.save();
  ctx.beginPath();
  ctx.rect(L, T - 3, w - L - R, h - T - B + 6);
  ctx.clip();
  for (const s of series) {
    ctx.strokeStyle = s.colour;
    ctx.fillStyle = s.colour;
    if (s.faint) {
      ctx.globalAlpha = 0.25;
      ctx.lineWidth = 1;
      line(ctx, s.faint.filter(finite), sx, sy, s.dash);
      ctx.globalAlpha = 1;
    }
    for (const [x, lo, hi] of s.band ?? []) {
      if (![x, lo, hi].every(Number.isFinite)) continue;
      ctx.globalAlpha = 0.6;
      ctx.lineWidth = 1;
      ctx.beginPath();
      const X = sx(x);
      for (const [ax, ay, bx, by] of [
        [X, sy(lo), X, sy(hi)],
        [X - 3, sy(lo), X + 3, sy(lo)],
        [X - 3, sy(hi), X + 3, sy(hi)],
      ]) {
        ctx.moveTo(ax, ay);
        ctx.lineTo(bx, by);
      }
      ctx.stroke();
      ctx.globalAlpha = 1;
    }
    ctx.lineWidth = 1.5;
    line(ctx, s.points.filter(finite), sx, sy, s.dash);
    if (s.markers)
      for (const [x, y] of s.points.filter(finite)) {
        ctx.beginPath();
        ctx.arc(sx(x), sy(y), 2.5, 0, 2 * Math.PI);
        ctx.fill();
      }
  }
  ctx.restore();
  if (o.marker !== undefined) {
    ctx.strokeStyle = '#000';
    ctx.lineWidth = 1;
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(sx(o.marker), T);
    ctx.lineTo(sx(o.marker), h - B);
    ctx.stroke();
    ctx.setLineDash([]);
  }
}

function line(
  ctx: CanvasRenderingContext2D,
  points: [number, number][],
  sx: (x: number) => number,
  sy: (y: number) => number,
  dash: number[] = [],
): void {
  ctx.setLineDash(dash);
  ctx.beginPath();
  points.forEach(([x, y], i) => (i ? ctx.lineTo(sx(x), sy(y)) : ctx.moveTo(sx(x), sy(y))));
  ctx.stroke();
  ctx.setLineDash([]);
}

/** Swatches and labels in rows from y = top, wrapping at the canvas width; the y below them. */
function legendRow(ctx: CanvasRenderingContext2D, series: Series[], top: number, w: number): number {
  let x = 4;
  let y = top;
  for (const s of series) {
    const width = 16 + ctx.measureText(s.label).width;
    if (x > 4 && x + width > w - 4) {
      x = 4;
      y += LINE;
    }
    ctx.fillStyle = s.colour;
    ctx.fillRect(x, y + 5, 10, 3);
    ctx.fillText(s.label, x + 13, y + 10);
    x += width + 10;
  }
  return y + LINE;
}
