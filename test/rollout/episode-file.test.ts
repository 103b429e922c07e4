import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { sceneContract } from '../../src/demos/index.ts';
import { EPISODE_FORMAT, readEpisodeFolder, type EpisodeContract } from '../../src/rollout/index.ts';
import { A, S, editJson, poke, scene, writeFakeRun } from './fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-epfile-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

let n = 0;
/** A fresh valid run folder of 3 four-step episodes. */
function run(o: { states?: boolean } = {}): string {
  const dir = join(tmp, `run${n++}`);
  writeFakeRun(dir, 3, o);
  return dir;
}
const contract = sceneContract(scene);
const L = 4;
const RECORD = L * A + L + (L + 1) * S; // words per record

/** The InputError a read throws, checking it names every expected part. */
function readError(dir: string, c: EpisodeContract = contract): string {
  try {
    readEpisodeFolder(dir, c);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error(`${dir} was read without an error`);
}

describe('episode folders (wmrl-episodes/2)', () => {
  it('index.json is byte-identical for the same episodes whatever the time and command; run.json keeps both', () => {
    const a = join(tmp, 'same-a');
    const b = join(tmp, 'same-b');
    vi.useFakeTimers({ now: new Date('2030-01-01T00:00:00Z') });
    writeFakeRun(a, 3, { command: 'wmrl rollout --num-envs 1' });
    vi.setSystemTime(new Date('2031-06-01T12:00:00Z'));
    writeFakeRun(b, 3, { command: 'wmrl rollout --num-envs 8' });
    expect(readFileSync(join(a, 'index.json'))).toEqual(readFileSync(join(b, 'index.json')));
    expect(readFileSync(join(a, 'episodes.bin'))).toEqual(readFileSync(join(b, 'episodes.bin')));
    const index = JSON.parse(readFileSync(join(a, 'index.json'), 'utf8'));
    expect(Object.keys(index)).toEqual(['format', 'actionNames', 'stateNames', 'episodes']);
    expect(index.format).toBe(EPISODE_FORMAT);
    expect(JSON.parse(readFileSync(join(b, 'run.json'), 'utf8'))).toEqual({
      command: 'wmrl rollout --num-envs 8',
      createdAt: '2031-06-01T12:00:00.000Z',
    });
  });

  it('reads back what it wrote, and a folder without run.json reads the same', () => {
    const dir = run();
    rmSync(join(dir, 'run.json'));
    const { index, episodes } = readEpisodeFolder(dir, contract);
    expect(index.episodes.map((e) => e.offset)).toEqual([0, 4 * RECORD, 8 * RECORD]);
    expect(episodes[1].states!.length).toBe((L + 1) * S);
    expect(Array.from(episodes[2].actions.subarray(0, 3))).toEqual([2, 0, 1]);
  });

  it('an old wmrl-episodes/1 index says what it found and how it was made', () => {
    const dir = run();
    editJson(join(dir, 'index.json'), (j) =>
      Object.assign(j, { format: 'wmrl-episodes/1', createdAt: 'x', command: 'wmrl rollout --task push' }),
    );
    expect(readError(dir)).toMatch(
      /index\.json: \$\.format: found "wmrl-episodes\/1", this wmrl reads "wmrl-episodes\/2".*made by: wmrl rollout --task push/,
    );
  });

  it('records must tile episodes.bin: an edited offset, a gap, an overlap, trailing bytes', () => {
    const shifted = run();
    editJson(join(shifted, 'index.json'), (j) => (j.episodes[1].offset += 4));
    expect(readError(shifted)).toMatch(
      /index\.json: \$\.episodes\[1\]\.offset: \d+, but the previous record ends at byte \d+/,
    );
    const overlap = run();
    editJson(join(overlap, 'index.json'), (j) => (j.episodes[2].offset = j.episodes[1].offset));
    expect(readError(overlap)).toMatch(/\$\.episodes\[2\]\.offset/);
    const shorter = run();
    editJson(join(shorter, 'index.json'), (j) => (j.episodes[0].length = 3));
    expect(readError(shorter)).toMatch(/\$\.episodes\[1\]\.offset/);
    const trailing = run();
    appendFileSync(join(trailing, 'episodes.bin'), Buffer.alloc(8));
    expect(readError(trailing)).toMatch(/episodes\.bin: 8 bytes after the last record/);
    const dropped = run();
    editJson(join(dropped, 'index.json'), (j) => j.episodes.pop());
    expect(readError(dropped)).toMatch(/episodes\.bin: \d+ bytes after the last record/);
  });

  it('a truncated episodes.bin, or one of odd length, names the file and the record', () => {
    const odd = run();
    truncateSync(join(odd, 'episodes.bin'), 12 * RECORD - 2);
    expect(readError(odd)).toMatch(/episodes\.bin: \d+ bytes is not a whole number of 4-byte values/);
    const cut = run();
    truncateSync(join(cut, 'episodes.bin'), 4 * (3 * RECORD - 1));
    expect(readError(cut)).toMatch(
      /index\.json: \$\.episodes\[2\]\.length: 4 steps end at byte \d+, past the end of episodes\.bin/,
    );
  });

  it('tokens outside their bins, non-finite rewards and states name the record, step and field', () => {
    const token = run();
    poke(join(token, 'episodes.bin'), RECORD + 2 * A + 4, 2); // record 1, step 2, grip (2 bins)
    expect(readError(token)).toMatch(
      /episodes\.bin: record 1 \(\$\.episodes\[1\]\), step 2: action grip = 2 is not a bin in \[0, 2\)/,
    );
    const negative = run();
    poke(join(negative, 'episodes.bin'), 0, -1);
    expect(readError(negative)).toMatch(/record 0 .*step 0: action dx = -1/);
    const reward = run();
    poke(join(reward, 'episodes.bin'), 2 * RECORD + L * A + 3, NaN, 'float');
    expect(readError(reward)).toMatch(/episodes\.bin: record 2 .*step 3: reward is NaN/);
    const state = run();
    poke(join(state, 'episodes.bin'), L * A + L + S + 6, Infinity, 'float'); // record 0, state 1, 7th entry
    expect(readError(state)).toMatch(
      new RegExp(
        `episodes\\.bin: record 0 .*state 1 \\(after step 0\\): ${contract.states[6].replace('.', '\\.')} is Infinity`,
      ),
    );
  });

  it('checks the index against the contract: actions, states, tasks and their step limits', () => {
    const dir = run();
    expect(readError(dir, { ...contract, actions: contract.actions.slice(0, 4) })).toMatch(
      /index\.json: \$\.actionNames: \[dx,dy,dz,dyaw,grip\], expected \[dx,dy,dz,dyaw\]/,
    );
    expect(readError(dir, { ...contract, states: ['tcp_x', 'nope'] })).toMatch(
      /\$\.stateNames\[1\]: "tcp_y", the scene's state layout has "nope"/,
    );
    expect(readError(dir, { ...contract, maxSteps: { 'tabletop/push': 3 } })).toMatch(
      /\$\.episodes\[0\]\.length: 4 steps, more than the 3 of tabletop\/push/,
    );
    expect(readError(dir, { ...contract, maxSteps: { 'tabletop/stack': 100 } })).toMatch(
      /\$\.episodes\[0\]\.task: unknown task "tabletop\/push"/,
    );
    expect(readError(run({ states: false }))).toMatch(/index\.json: \$\.stateNames: the folder has no recorded states/);
    expect(readEpisodeFolder(run({ states: false }), { actions: contract.actions }).episodes[0].states).toBeUndefined();
  });

  it('missing folders and files, a file for the folder, garbage JSON and bad fields are InputErrors naming the path', () => {
    expect(readError(join(tmp, 'nowhere'))).toMatch(/nowhere: cannot read a run folder .*: no such file or directory/);
    const dir = run();
    expect(readError(join(dir, 'index.json'))).toMatch(/index\.json: is a file, not a run folder/);
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    expect(readError(empty)).toMatch(
      /empty\/index\.json: cannot read the episode index: no such file or directory \(is .*empty a folder written by wmrl rollout or collect\?\)/,
    );
    const garbage = run();
    writeFileSync(join(garbage, 'index.json'), '{"format": "wmrl-episodes/2", ');
    expect(readError(garbage)).toMatch(/index\.json: the episode index is not valid JSON: /);
    const field = run();
    editJson(join(field, 'index.json'), (j) => (j.episodes[1].seed = 'seven'));
    expect(readError(field)).toMatch(/index\.json: \$\.episodes\[1\]\.seed: /);
    const noBin = run();
    rmSync(join(noBin, 'episodes.bin'));
    expect(readError(noBin)).toMatch(/episodes\.bin: cannot read episode records: no such file/);
    expect(existsSync(join(dir, 'run.json'))).toBe(true);
  });
});
