import cliProgress from 'cli-progress';

/** A progress bar on stderr (stdout stays clean for --json); silent when stderr is not a terminal. */
export function progressBar(label: string, total: number): { tick(n?: number, extra?: string): void; stop(): void } {
  if (!process.stderr.isTTY) return { tick() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {value}/{total} {percentage}% | eta {eta_formatted} | {extra}`, stream: process.stderr, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { extra: '' });
  return {
    tick: (n = 1, extra = '') => bar.increment(n, { extra }),
    stop: () => bar.stop(),
  };
}
