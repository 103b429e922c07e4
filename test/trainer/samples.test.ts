import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeLockEnv } from '../../src/env/toys.ts';
import { readEpisodeFolder, type StoredEpisode } from '../../src/rollout/index.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { keptEvaluations, MAX_RECORDED_EVALUATIONS, SAMPLE_GROUP } from '../../src/trainer/samples.ts';
import { setup } from './code-lock.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-samples-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const contract = { actions: [{ name: 'digit', n: CodeLockEnv.DIGITS }] };
/** The code lock with its rows ([digits entered, steps taken]) recorded as the sample's states. */
const recording = () => {
  const s = setup();
  s.tasks[0].recordedStates = ['digits', 'steps'];
  return s;
};
const folder = (dir: string) => readEpisodeFolder(dir, contract).episodes;
const bytes = (dir: string) => ['index.json', 'episodes.bin'].map((f) => readFileSync(join(dir, f)));

describe('the run’s recorded episodes', () => {
  it('keep at most MAX_RECORDED_EVALUATIONS evaluations, the first and the latest among them, and never want back one they dropped', () => {
    let before = new Set<number>();
    for (let count = 1; count <= 300; count++) {
      const kept = keptEvaluations(count);
      expect(kept.size).toBeLessThanOrEqual(MAX_RECORDED_EVALUATIONS);
      expect(kept.has(0) && kept.has(count - 1)).toBe(true);
      for (const n of kept) if (n < count - 1) expect(before.has(n)).toBe(true);
      before = kept;
    }
    expect([...keptEvaluations(40)].sort((a, b) => a - b)).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 39]);
  });

  it('a wmrl run records, at every evaluation, the first held-out episode and a world-model group branched from its middle; a resumed run writes the same bytes', {
    timeout: 120_000,
  }, async () => {
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 4, evalEvery: 2, evalEpisodes: 4 });
    const whole = join(tmp, 'whole');
    await train(recording(), cfg, whole);
    const episodes = folder(whole);
    const physics = episodes.filter((e) => e.source !== 'world-model');
    expect(physics.map((e) => [e.iteration, e.policy, e.split])).toEqual([
      [0, 'iteration 0', 'heldout'],
      [2, 'iteration 2', 'heldout'],
      [4, 'iteration 4', 'heldout'],
    ]);
    for (const e of episodes.filter((x) => x.source === 'world-model')) {
      const twin: StoredEpisode = episodes[e.twin!];
      expect(twin.iteration).toBe(e.iteration);
      expect(twin.seed).toBe(e.seed);
      expect(e.start).toBe(Math.floor(twin.length / 2));
      expect(e.length).toBeLessThanOrEqual(cfg.horizon);
      // it starts from the twin's state at the branch point
      expect(Array.from(e.states!.subarray(0, 2))).toEqual(
        Array.from(twin.states!.subarray(2 * e.start!, 2 * e.start! + 2)),
      );
    }
    expect(episodes.filter((x) => x.source === 'world-model').length).toBe(3 * SAMPLE_GROUP);

    // stopped after iteration 3, with the folder as a crash after iteration 4's evaluation would leave it
    const cut = join(tmp, 'cut');
    let n = 0;
    await train(recording(), cfg, cut, { shouldStop: () => ++n >= 3 });
    expect(folder(cut).map((e) => e.iteration)).not.toContain(4);
    for (const f of ['index.json', 'episodes.bin']) copyFileSync(join(whole, f), join(cut, f));
    await train(recording(), cfg, cut, { resume: true });
    expect(bytes(cut)).toEqual(bytes(whole));
  });

  it('recording again at an iteration drops what was recorded at it and later, and thins older evaluations', {
    timeout: 120_000,
  }, async () => {
    const cfg = resolveConfig('smoke', { mode: 'real', iterations: 40, evalEvery: 2, evalEpisodes: 2 });
    const dir = join(tmp, 'long');
    await train(recording(), cfg, dir);
    const iterations = [...new Set(folder(dir).map((e) => e.iteration))];
    // 21 evaluations (0, 2, ..., 40): every second one and the latest
    expect(iterations).toEqual([...keptEvaluations(21)].sort((a, b) => a - b).map((k) => 2 * k));
    expect(iterations.length).toBeLessThanOrEqual(MAX_RECORDED_EVALUATIONS);
  });
});
