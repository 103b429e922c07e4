// The study commands as a user runs them: --help, and bad input (a config field, a corrupt cache, an old
// runs folder) exits 2 naming the flag or the file and the field, before anything trains.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentEvalKey, RESEARCH_BASE_AGENT, writeCache } from '../../src/experiment/index.ts';
import { wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-cli-experiment-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const REPO = join(import.meta.dirname, '../..');
const wmrl = (...args: string[]) => wmrlProcess(REPO, ...args);
const file = (name: string, data: unknown) => {
  const path = join(tmp, name);
  writeFileSync(path, typeof data === 'string' ? data : JSON.stringify(data));
  return path;
};
const clean = (r: { stderr: string }) => expect(r.stderr).not.toMatch(/TypeError|RangeError|\n\s+at /);

describe('wmrl experiment', () => {
  it.each([
    ['speedup', /iterations: policy updates of real.*--suite autoresearch fields:.*evalEvery: keep the policy/s],
    ['corrections', /Study fields \(--config file\.json\):.*finalEpisodes: held-out episodes per task of each run/s],
    ['research', /Study fields \(--config file\.json\):.*base: the agent every row starts from/s],
  ])('%s --help lists its flags and the fields of its file', { timeout: 60_000 }, async (command, fields) => {
    const r = await wmrl('experiment', command, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--runs <dir>');
    expect(r.stdout).toMatch(fields);
  });

  it('speedup: a config field out of range exits 2 naming it', { timeout: 60_000 }, async () => {
    const r = await wmrl('experiment', 'speedup', '--config', file('bad.json', { iterations: { real: -1, model: 2 } }));
    expect(r.stderr).toMatch(/experiment config: iterations\.real: Too small/);
    clean(r);
    expect(r.code).toBe(2);
  });

  it('speedup --suite autoresearch: a corrupt evaluation cache exits 2 naming the file and the field', {
    timeout: 60_000,
  }, async () => {
    const runs = join(tmp, 'research-speedup');
    const cache = join(runs, 'base-eval-seed0.json');
    // written for these settings (8 episodes, seed 0), its second task's positions edited by hand
    const task = { task: 't', episodes: 1, testPosition: 0.5, ciLow: 0, ciHigh: 1, validShare: 1, reward: 1 };
    const value = [
      { ...task, statuses: {}, executions: 1, perEpisode: [0.5] },
      { ...task, statuses: {}, executions: 1, perEpisode: ['0.5'] },
    ];
    writeCache(cache, agentEvalKey(RESEARCH_BASE_AGENT, { episodes: 8, seed: 0 }), value);
    const r = await wmrl(
      'experiment',
      'speedup',
      '--suite',
      'autoresearch',
      '--runs',
      runs,
      '--report',
      join(tmp, 'rep'),
    );
    expect(r.stderr).toContain(`${cache}: $.value[1].perEpisode[0]: Invalid input: expected number, received string`);
    clean(r);
    expect(r.code).toBe(2);
  });

  it('corrections: a runs folder stamped by an older version exits 2 naming its stamp and the field', {
    timeout: 60_000,
  }, async () => {
    const runs = join(tmp, 'old-runs');
    mkdirSync(runs);
    writeFileSync(join(runs, 'study.json'), JSON.stringify({ study: { rows: [] }, policy: 'p' }));
    const config = file('study.json', { tasks: ['tabletop/push'], rows: [{ name: 'a', mode: 'mix' }] });
    const r = await wmrl('experiment', 'corrections', '--config', config, '--runs', runs, '--no-train');
    expect(r.stderr).toContain(
      `${join(runs, 'study.json')}: $.rows: Invalid input: expected array, received undefined`,
    );
    clean(r);
    expect(r.code).toBe(2);
  });
});
