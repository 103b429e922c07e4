import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cooperate, handleInterrupt, interrupted, resetInterrupt } from '../../src/cli/interrupt.ts';
import { progressBar } from '../../src/cli/progress.ts';

/** A stream that says it is a terminal and records what is written to it. */
function fakeTerminal(): Writable & {
  isTTY: boolean;
  columns: number;
  text: () => string;
  cursorTo: () => boolean;
  clearLine: () => boolean;
  moveCursor: () => boolean;
} {
  let text = '';
  const s = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      cb();
    },
  }) as ReturnType<typeof fakeTerminal>;
  Object.assign(s, {
    isTTY: true,
    columns: 100,
    text: () => text,
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
  });
  return s;
}

const HIDE_CURSOR = '\x1b[?25l',
  SHOW_CURSOR = '\x1b[?25h',
  WRAP_OFF = '\x1b[?7l',
  WRAP_ON = '\x1b[?7h';

afterEach(() => {
  resetInterrupt();
  vi.restoreAllMocks();
});

describe('Ctrl-C', () => {
  it('stops progress bars, restoring the cursor and line wrap; a cooperating command only sees the flag', () => {
    const term = fakeTerminal();
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const bar = progressBar('train', 10, { stream: term });
    bar.tick(3);
    expect(term.text()).toContain(HIDE_CURSOR);
    expect(term.text()).toContain(WRAP_OFF);
    const release = cooperate();
    handleInterrupt();
    expect(interrupted()).toBe(true);
    expect(exit).not.toHaveBeenCalled();
    const after = term.text().slice(term.text().lastIndexOf(WRAP_OFF));
    expect(after).toContain(SHOW_CURSOR);
    expect(after).toContain(WRAP_ON);
    expect(stderr.mock.calls.map((c) => String(c[0])).join('')).toMatch(/writing a checkpoint/);
    const length = term.text().length;
    bar.tick(1);
    bar.stop(); // already stopped: nothing more is drawn
    expect(term.text().length).toBe(length);
    release();
  });

  it('exits at once with code 130 outside a cooperating command, or on a second Ctrl-C', () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const exit = vi.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const term = fakeTerminal();
    progressBar('collect', 5, { stream: term });
    handleInterrupt();
    expect(exit).toHaveBeenCalledWith(130);
    expect(term.text()).toContain(SHOW_CURSOR);
    resetInterrupt();
    exit.mockClear();
    const release = cooperate();
    handleInterrupt();
    expect(exit).not.toHaveBeenCalled();
    handleInterrupt();
    expect(exit).toHaveBeenCalledWith(130);
    release();
  });
});
