// A minimal line plot into an RGB buffer (no fonts: the caller reports the axis ranges and the colour
// of each series next to the image). Used for shadow-mode divergence plots.

export interface Series {
  name: string;
  values: readonly number[];
  colour: [number, number, number];
}

export interface Plot {
  rgb: Uint8Array;
  width: number;
  height: number;
  /** The y value at the top of the plot area (bottom is 0) and the x value at its right edge. */
  yMax: number;
  xMax: number;
}

const MARGIN = 12;

export function linePlot(series: readonly Series[], width = 480, height = 240): Plot {
  const rgb = new Uint8Array(width * height * 3).fill(255);
  const put = (x: number, y: number, c: readonly number[]) => {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    const k = 3 * (y * width + x);
    rgb[k] = c[0];
    rgb[k + 1] = c[1];
    rgb[k + 2] = c[2];
  };
  const xMax = Math.max(1, ...series.map((s) => s.values.length - 1));
  const finite = series.flatMap((s) => s.values.filter(Number.isFinite));
  const yMax = niceCeil(Math.max(1e-12, ...finite));
  const x0 = MARGIN,
    x1 = width - MARGIN,
    y0 = height - MARGIN,
    y1 = MARGIN;
  const px = (i: number) => Math.round(x0 + ((x1 - x0) * i) / xMax);
  const py = (v: number) => Math.round(y0 - ((y0 - y1) * Math.min(v, yMax)) / yMax);
  for (let g = 0; g <= 4; g++) {
    const y = Math.round(y0 - ((y0 - y1) * g) / 4);
    for (let x = x0; x <= x1; x++) put(x, y, g === 0 ? [0, 0, 0] : [225, 225, 225]);
  }
  for (let y = y1; y <= y0; y++) put(x0, y, [0, 0, 0]);
  series.forEach((s, k) => {
    for (let i = 1; i < s.values.length; i++) {
      if (!Number.isFinite(s.values[i - 1]) || !Number.isFinite(s.values[i])) continue;
      line(px(i - 1), py(s.values[i - 1]), px(i), py(s.values[i]), (x, y) => {
        put(x, y, s.colour);
        put(x, y + 1, s.colour);
      });
    }
    // legend swatch: a short bar per series along the top margin, in series order
    for (let x = 0; x < 16; x++) for (let y = 2; y < 6; y++) put(x0 + 4 + 22 * k + x, y, s.colour);
  });
  return { rgb, width, height, yMax, xMax };
}

/** The next 1, 2 or 5 times a power of ten at or above v. */
function niceCeil(v: number): number {
  let p = 1;
  while (p > v) p /= 10;
  while (p * 10 <= v) p *= 10;
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/** Bresenham line from (xa, ya) to (xb, yb). */
function line(xa: number, ya: number, xb: number, yb: number, plot: (x: number, y: number) => void): void {
  const dx = Math.abs(xb - xa),
    dy = -Math.abs(yb - ya);
  const sx = xa < xb ? 1 : -1,
    sy = ya < yb ? 1 : -1;
  let err = dx + dy;
  for (;;) {
    plot(xa, ya);
    if (xa === xb && ya === yb) return;
    const e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      xa += sx;
    }
    if (e2 <= dx) {
      err += dx;
      ya += sy;
    }
  }
}
