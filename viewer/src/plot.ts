// Small line charts on a 2D canvas: one per metric group, a legend, the y range from the data.
export interface Series {
  label: string;
  colour: string;
  points: [number, number][];
}

export const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

export function drawChart(canvas: HTMLCanvasElement, title: string, series: Series[], marker?: number): void {
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  const w = (canvas.width = canvas.clientWidth || 320),
    h = (canvas.height = canvas.clientHeight || 160);
  ctx.clearRect(0, 0, w, h);
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillStyle = '#222';
  ctx.fillText(title, 6, 12);
  const pts = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (pts.length === 0) {
    ctx.fillStyle = '#888';
    ctx.fillText('no data yet', 6, h / 2);
    return;
  }
  let [x0, x1, y0, y1] = [
    Math.min(...pts.map((p) => p[0])),
    Math.max(...pts.map((p) => p[0])),
    Math.min(...pts.map((p) => p[1])),
    Math.max(...pts.map((p) => p[1])),
  ];
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) [y0, y1] = [y0 - 0.5, y1 + 0.5];
  const L = 40,
    R = 8,
    T = 18,
    B = 16;
  const sx = (x: number) => L + ((x - x0) / (x1 - x0)) * (w - L - R);
  const sy = (y: number) => h - B - ((y - y0) / (y1 - y0)) * (h - T - B);
  ctx.strokeStyle = '#ccc';
  ctx.strokeRect(L, T, w - L - R, h - T - B);
  ctx.fillStyle = '#555';
  ctx.fillText(fmt(y1), 2, T + 8);
  ctx.fillText(fmt(y0), 2, h - B);
  ctx.fillText(fmt(x0), L, h - 3);
  ctx.fillText(fmt(x1), w - R - 30, h - 3);
  series.forEach((s, k) => {
    ctx.strokeStyle = s.colour;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    s.points.forEach(([x, y], i) => (i ? ctx.lineTo(sx(x), sy(y)) : ctx.moveTo(sx(x), sy(y))));
    ctx.stroke();
    ctx.fillStyle = s.colour;
    ctx.fillText(s.label, L + 6 + (k % 3) * ((w - L) / 3), T + 12 + Math.floor(k / 3) * 12);
  });
  if (marker !== undefined) {
    ctx.strokeStyle = '#000';
    ctx.setLineDash([3, 3]);
    ctx.beginPath();
    ctx.moveTo(sx(marker), T);
    ctx.lineTo(sx(marker), h - B);
    ctx.stroke();
    ctx.setLineDash([]);
  }
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toPrecision(2);
}
