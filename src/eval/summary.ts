// Success rates with their Wilson 95% interval, mean length and final process score.
import { wilson } from '../core/stats.ts';

export interface SuccessSummary {
  success_rate: number;
  ci_low: number;
  ci_high: number;
  episodes: number;
  mean_length: number;
  mean_progress: number;
  /** Episodes that ended with an object off the table (envs that report it). */
  off_table?: number;
}

/** Success rate with its Wilson 95% interval, mean episode length and final process score. */
export function summarise(
  episodes: readonly { success: boolean; length: number; progress: number; offTable?: boolean }[],
): SuccessSummary {
  const n = episodes.length;
  const wins = episodes.filter((e) => e.success).length;
  const w = wilson(wins, n);
  const mean = (f: (e: (typeof episodes)[number]) => number) => (n ? episodes.reduce((s, e) => s + f(e), 0) / n : 0);
  const s: SuccessSummary = {
    success_rate: w.rate,
    ci_low: w.low,
    ci_high: w.high,
    episodes: n,
    mean_length: mean((e) => e.length),
    mean_progress: mean((e) => e.progress),
  };
  if (episodes.some((e) => e.offTable !== undefined)) s.off_table = episodes.filter((e) => e.offTable).length;
  return s;
}

export function formatSummary(name: string, s: SuccessSummary): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return (
    `${name.padEnd(22)} success ${pct(s.success_rate).padStart(6)}  ` +
    `95% CI [${pct(s.ci_low)}, ${pct(s.ci_high)}]  n=${s.episodes}  ` +
    `len ${s.mean_length.toFixed(1)}  progress ${s.mean_progress.toFixed(2)}${offTableNote(s.off_table)}`
  );
}

/** "  off-table N" where episodes ended off the table. */
export function offTableNote(count: number | undefined): string {
  return count ? `  off-table ${count}` : '';
}
