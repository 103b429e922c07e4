// Success rates with their Wilson 95% interval, mean length and final process score.
import { wilson } from '../core/stats.ts';

export interface SuccessSummary {
  success_rate: number;
  ci_low: number;
  ci_high: number;
  episodes: number;
  mean_length: number;
  mean_progress: number;
}

/** Success rate with its Wilson 95% interval, mean episode length and final process score. */
export function summarise(episodes: readonly { success: boolean; length: number; progress: number }[]): SuccessSummary {
  const n = episodes.length;
  const wins = episodes.filter((e) => e.success).length;
  const w = wilson(wins, n);
  const mean = (f: (e: (typeof episodes)[number]) => number) => (n ? episodes.reduce((s, e) => s + f(e), 0) / n : 0);
  return { success_rate: w.rate, ci_low: w.low, ci_high: w.high, episodes: n, mean_length: mean((e) => e.length), mean_progress: mean((e) => e.progress) };
}

export function formatSummary(name: string, s: SuccessSummary): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return `${name.padEnd(22)} success ${pct(s.success_rate).padStart(6)}  95% CI [${pct(s.ci_low)}, ${pct(s.ci_high)}]  n=${s.episodes}  len ${s.mean_length.toFixed(1)}  progress ${s.mean_progress.toFixed(2)}`;
}
