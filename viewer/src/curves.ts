// Training curves from a run's metrics.jsonl rows: success by source, debias bias before/after, the
// denoiser's weight w, and seconds per component per iteration.
import type { TrainMetricKey } from '../../src/core/metrics.ts';
import type { MetricsRow } from '../../src/protocol/index.ts';
import { COLOURS, drawChart, type Series } from './plot.ts';

/** The row's keys among `keys` (typed: a metric renamed in the trainer's schema fails here). */
const among = (keys: readonly TrainMetricKey[]) => (k: string) => (keys as readonly string[]).includes(k);

const GROUPS: Record<string, { title: string; keys: (k: string) => boolean }> = {
  success: { title: 'success by source', keys: among(['success/anchor', 'success/wm', 'eval/success']) },
  debias: { title: 'debias: bias before / after', keys: among(['debias/bias_before', 'debias/bias_after']) },
  weight: { title: 'denoise weight w', keys: among(['denoise/w']) },
  time: {
    title: 'seconds per iteration',
    keys: (k) => k.startsWith('time/') && k !== ('time/eval_s' satisfies TrainMetricKey),
  },
};

export function drawCurves(rows: readonly MetricsRow[], run: string): void {
  for (const canvas of document.querySelectorAll<HTMLCanvasElement>('canvas[data-curve]')) {
    const group = GROUPS[canvas.dataset.curve ?? ''];
    if (!group) continue;
    const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))].filter(group.keys).sort();
    const series: Series[] = keys.map((key, i) => ({
      label: key.replace(/^(time|debias|denoise)\//, ''),
      colour: COLOURS[i % COLOURS.length],
      points: rows.flatMap((r, n) =>
        typeof r[key] === 'number'
          ? [[typeof r.iteration === 'number' ? r.iteration : n, r[key] as number] as [number, number]]
          : [],
      ),
    }));
    drawChart(canvas, `${group.title} · ${run}`, series);
  }
}
