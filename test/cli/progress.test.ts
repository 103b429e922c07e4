import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { budgetProgress, clockText, progressBar, trainProgressText } from '../../src/cli/progress.ts';
import { wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-progress-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A log file as a stream: no terminal. */
function logStream() {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, lines: () => text.trim().split('\n').filter(Boolean) };
}

describe('progress without a terminal', () => {
  it('prints the first and the last tick, marked ticks, and otherwise at most one line per interval', () => {
    const log = logStream();
    const bar = progressBar('train', 10, { stream: log.stream, progressEvery: 3600 });
    for (let i = 1; i <= 10; i++) bar.tick(1, `step ${i}`, i === 4);
    bar.stop();
    const lines = log.lines();
    expect(lines.map((l) => l.split(' ')[1])).toEqual(['1/10', '4/10', '10/10']);
    expect(lines[1]).toMatch(/^train 4\/10 \(40%\) \| .* \| elapsed \d+:\d\d \| left .* \| step 4$/);
    expect(lines[2]).toMatch(/left 0:00 \| step 10$/);
  });

  it('prints every tick when the interval is 0, a last line on stop, nothing when quiet', () => {
    const log = logStream();
    const bar = progressBar('eval', 5, { stream: log.stream, progressEvery: 0 });
    bar.tick(2);
    bar.tick(1);
    bar.stop();
    expect(log.lines().map((l) => l.split(' ')[1])).toEqual(['2/5', '3/5']);
    const quiet = logStream();
    const q = progressBar('eval', 5, { stream: quiet.stream, quiet: true });
    q.tick(5);
    q.stop();
    expect(quiet.lines()).toEqual([]);
  });

  it('formats clocks and training text (smoothed anchor success, the last held-out interval)', () => {
    expect([clockText(5), clockText(65), clockText(3725), clockText(Number.NaN)]).toEqual([
      '0:05',
      '1:05',
      '1:02:05',
      '?',
    ]);
    const text = trainProgressText();
    expect(text({ iteration: 1, 'success/anchor': 1 }).text).toBe('anchor success 1.00 (EMA)');
    const second = text({
      iteration: 2,
      'success/anchor': 0,
      'eval/success': 0.25,
      'eval/ci_low': 0.2,
      'eval/ci_high': 0.3,
    });
    expect(second).toEqual({ text: 'anchor success 0.90 (EMA) | held-out 25.0% [20.0%, 30.0%] at 2', mark: true });
    // an iteration without anchors (null) leaves the EMA alone instead of pulling it toward 0
    expect(text({ iteration: 3, 'success/anchor': null }).text).toBe(
      'anchor success 0.90 (EMA) | held-out 25.0% [20.0%, 30.0%] at 2',
    );
  });

  it('a budget-stopped run (npm start) shows iterations, it/s, elapsed, time left and held-out success', () => {
    const log = logStream();
    const bar = budgetProgress(600, { stream: log.stream, progressEvery: 30 });
    const held = { 'eval_initial/success': 0.3, 'eval_initial/ci_low': 0.2, 'eval_initial/ci_high': 0.4 };
    bar.tick({ iteration: 1, 'success/anchor': 1, ...held }, 2);
    for (let i = 2; i <= 8; i++) bar.tick({ iteration: i, 'success/anchor': 1 }, 2 * i); // within 30 s: none
    bar.tick({ iteration: 9, 'eval/success': 0.5, 'eval/ci_low': 0.4, 'eval/ci_high': 0.6 }, 18); // marked
    bar.tick({ iteration: 10 }, 20);
    bar.stop();
    expect(log.lines()).toEqual([
      'train 1 iteration | 0.50 it/s | elapsed 0:02 | left 9:58 | anchor success 1.00 (EMA) | held-out 30.0% [20.0%, 40.0%] at 0',
      'train 9 iterations | 0.50 it/s | elapsed 0:18 | left 9:42 | anchor success 1.00 (EMA) | held-out 50.0% [40.0%, 60.0%] at 9',
      'train 10 iterations | 0.50 it/s | elapsed 0:20 | left 9:40 | anchor success 1.00 (EMA) | held-out 50.0% [40.0%, 60.0%] at 9',
    ]);
    const quiet = logStream();
    const q = budgetProgress(600, { stream: quiet.stream, quiet: true });
    q.tick({ iteration: 1 }, 1);
    q.stop();
    expect(quiet.lines()).toEqual([]);
  });

  it('on a terminal the budget bar shows the same fields and no seconds-of-budget counts', () => {
    const tty = logStream();
    Object.assign(tty.stream, { isTTY: true, columns: 200 });
    const bar = budgetProgress(600, { stream: tty.stream });
    bar.tick({ iteration: 8, 'eval_initial/success': 0.3 }, 16);
    bar.stop();
    const text = tty.lines().join('\n');
    expect(text).toMatch(/train \[.*\] 8 iterations \| 0\.50 it\/s \| elapsed 0:16 \| left 9:44 \| held-out 30\.0%/);
    expect(text).not.toMatch(/\d+\/600|seconds of budget/);
  });

  it('wmrl train writing to a log prints i/N lines with the held-out success; --quiet prints none; evaluating changes no result', {
    timeout: 180_000,
  }, async () => {
    const config = join(tmp, 'eval.json');
    writeFileSync(config, JSON.stringify({ evalEvery: 2, evalEpisodes: 2 }));
    const args = ['train', '--preset', 'smoke', '--task', 'tabletop/pick-place', '--config', config];
    const r = await wmrlProcess(process.cwd(), ...args, '--out', join(tmp, 'run'), '--iterations', '4');
    expect(r.code).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('train '));
    // the first line has the held-out success before training
    expect(lines[0]).toMatch(
      /^train 1\/4 \(25%\) \| .* \| anchor success \d\.\d\d \(EMA\) \| held-out \d+\.\d% \[.*\] at 0$/,
    );
    expect(lines.some((l) => /^train 2\/4 .* held-out \d+\.\d% \[\d+\.\d%, \d+\.\d%\] at 2$/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^train 4\/4 \(100%\) .* left 0:00 /);
    const off = join(tmp, 'off.json');
    writeFileSync(off, JSON.stringify({ evalEvery: 0 }));
    const quietArgs = [...args.slice(0, -1), off, '--out', join(tmp, 'quiet'), '--iterations', '4', '--quiet'];
    const quiet = await wmrlProcess(process.cwd(), ...quietArgs);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toMatch(/^train /m);
    // the same run without held-out evaluations trains the same policy
    const policy = (dir: string) => readFileSync(join(tmp, dir, 'policy.onnx'));
    expect(policy('quiet').equals(policy('run'))).toBe(true);
  });
});
