import cliProgress from 'cli-progress';
import { onInterrupt } from './interrupt.ts';

export interface ProgressBar {
  tick(n?: number, extra?: string): void;
  stop(): void;
}

/** A progress bar on stderr (stdout stays clean for --json); silent when the stream is not a terminal.
 *  Ctrl-C stops it, which shows the cursor again and turns line wrap back on. */
export function progressBar(
  label: string,
  total: number,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
): ProgressBar {
  if (!stream.isTTY) return { tick() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    {
      format: `${label} [{bar}] {value}/{total} {percentage}% | eta {eta_formatted} | {extra}`,
      stream,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { extra: '' });
  let active = true;
  const stop = () => {
    if (!active) return;
    active = false;
    unregister();
    bar.stop();
  };
  const unregister = onInterrupt(stop);
  return {
    tick: (n = 1, extra = '') => {
      if (active) bar.increment(n, { extra });
    },
    stop,
  };
}
