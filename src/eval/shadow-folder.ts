// The shadow-mode run folder: shadow.json (the report) and shadow.png (mean divergence per step, one
// line per state group), committed as one unit. Node-only.
import { join } from 'node:path';
import { encodePng } from '../render/png-file.ts';
import { commitFiles } from '../store/index.ts';
import { DIVERGENCE_KEYS, linePlot, type ShadowReport } from '../worldmodel/index.ts';

const COLOURS: Record<string, [number, number, number]> = {
  ee_m: [220, 40, 40],
  fingers_m: [40, 160, 40],
  objects_m: [40, 80, 220],
  task_object_m: [230, 150, 20],
};

export interface ShadowFiles {
  json: string;
  png: string;
  png_y_max_m: number;
  png_series: string[];
}

/** Writes `summary` (a shadow report plus what was run) and its divergence plot into `dir`. */
export function writeShadowFolder(dir: string, summary: ShadowReport & Record<string, unknown>): ShadowFiles {
  const keys = DIVERGENCE_KEYS.filter((k) => k !== 'image_mae');
  const plot = linePlot(keys.map((k) => ({ name: k, values: summary.curves[k], colour: COLOURS[k] })));
  const files = {
    json: join(dir, 'shadow.json'),
    png: join(dir, 'shadow.png'),
    png_y_max_m: plot.yMax,
    png_series: keys.map((k) => `${k} rgb(${COLOURS[k].join(',')})`),
  };
  commitFiles([
    { path: files.json, data: `${JSON.stringify({ ...summary, plot: files }, null, 2)}\n` },
    { path: files.png, data: encodePng(plot.rgb, plot.width, plot.height) },
  ]);
  return files;
}
