// A careless user: edited, truncated and missing files, wrong kinds of paths. Every case exits 2 with
// a message naming the file (and the record and field) or the flag, never a raw JS error.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { A, S, editJson, poke, writeFakeDemos, writeFakeRun } from '../rollout/fixtures.ts';
import { wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-badinput-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const wmrl = (...args: string[]) => wmrlProcess(tmp, ...args);
const WM = join(import.meta.dirname, '../../models/wm-base.onnx');
const RECORD = 4 * A + 4 + 5 * S; // words per four-step fake record

/** A run folder (states recorded) named `name` under tmp, then `edit` breaks it. */
function run(name: string, edit: (dir: string) => void = () => {}, o: { states?: boolean } = {}): string {
  writeFakeRun(join(tmp, name), 3, o);
  edit(join(tmp, name));
  return name;
}
function study(name: string, data: unknown): string {
  writeFileSync(join(tmp, name), JSON.stringify(data));
  return name;
}
function demos(name: string, edit: (dir: string) => void): string {
  writeFakeDemos(join(tmp, name), 2);
  edit(join(tmp, name));
  return name;
}

beforeAll(() => {
  writeFileSync(join(tmp, 'a-file'), 'not a folder');
  mkdirSync(join(tmp, 'empty'));
  mkdirSync(join(tmp, 'folder.onnx'));
});

const cases: [string, () => string[], RegExp][] = [
  [
    'eval: --handover lists a step twice',
    () => ['eval', '--policy', 'random', '--handover', '0,20,20', '--out', 'ev'],
    /--handover: the steps of the list must differ \(got "0,20,20"\)/,
  ],
  [
    'eval: --handover is not a list of integers',
    () => ['eval', '--policy', 'random', '--handover', '10,-5', '--out', 'ev'],
    /--handover: must be K or a comma-separated list of integers >= 0/,
  ],
  [
    'eval: --policy names a folder',
    () => ['eval', '--policy', 'folder.onnx', '--task', 'push', '--episodes', '1', '--out', 'ev'],
    /--policy: "folder\.onnx" is a folder, expected a model file/,
  ],
  [
    'wm train: an edited offset in index.json',
    () => [
      'wm',
      'train',
      '--data',
      run('shifted', (d) => editJson(join(d, 'index.json'), (j) => (j.episodes[1].offset += 4))),
      '--out',
      'm.onnx',
    ],
    /shifted\/index\.json: \$\.episodes\[1\]\.offset: \d+, but the previous record ends at byte \d+/,
  ],
  [
    'wm train: episodes.bin of odd length',
    () => [
      'wm',
      'train',
      '--data',
      run('odd', (d) => truncateSync(join(d, 'episodes.bin'), 12 * RECORD - 3)),
      '--out',
      'm.onnx',
    ],
    /odd\/episodes\.bin: \d+ bytes is not a whole number of 4-byte values/,
  ],
  [
    'wm train: trailing bytes in episodes.bin',
    () => [
      'wm',
      'train',
      '--data',
      run('dropped', (d) => editJson(join(d, 'index.json'), (j) => j.episodes.pop())),
      '--out',
      'm.onnx',
    ],
    /dropped\/episodes\.bin: \d+ bytes after the last record/,
  ],
  [
    'wm train: garbage index.json',
    () => [
      'wm',
      'train',
      '--data',
      run('garbage', (d) => writeFileSync(join(d, 'index.json'), '{"format":')),
      '--out',
      'm.onnx',
    ],
    /garbage\/index\.json: the episode index is not valid JSON/,
  ],
  [
    'wm train: an old-format folder',
    () => [
      'wm',
      'train',
      '--data',
      run('old', (d) => editJson(join(d, 'index.json'), (j) => (j.format = 'wmrl-episodes/1'))),
      '--out',
      'm.onnx',
    ],
    /old\/index\.json: \$\.format: found "wmrl-episodes\/1", this wmrl reads "wmrl-episodes\/2"/,
  ],
  [
    'wm train: --data names no folder',
    () => ['wm', 'train', '--data', 'nowhere', '--out', 'm.onnx'],
    /nowhere: cannot read a run folder .*: no such file or directory/,
  ],
  [
    'wm train: --data names a file',
    () => ['wm', 'train', '--data', 'a-file', '--out', 'm.onnx'],
    /a-file: is a file, not a run folder/,
  ],
  [
    'wm train: --val names an empty folder',
    () => ['wm', 'train', '--data', run('ok'), '--val', 'empty', '--out', 'm.onnx'],
    /empty\/index\.json: cannot read the episode index: no such file or directory/,
  ],
  [
    'wm eval: NaN states',
    () => [
      'wm',
      'eval',
      '--model',
      WM,
      '--data',
      run('nan', (d) => poke(join(d, 'episodes.bin'), RECORD + 4 * A + 4 + 6, NaN, 'float')),
    ],
    /nan\/episodes\.bin: record 1 \(\$\.episodes\[1\]\), state 0 \(initial\): \w+\.x is NaN/,
  ],
  [
    'wm eval: a rollout folder without states',
    () => ['wm', 'eval', '--model', WM, '--data', run('stateless', () => {}, { states: false })],
    /stateless\/index\.json: \$\.stateNames: the folder has no recorded states/,
  ],
  [
    'wm eval: a token outside its bins',
    () => [
      'wm',
      'eval',
      '--model',
      WM,
      '--data',
      run('token', (d) => poke(join(d, 'episodes.bin'), 2 * RECORD + 9, 7)),
    ],
    /token\/episodes\.bin: record 2 \(\$\.episodes\[2\]\), step 1: action grip = 7 is not a bin in \[0, 2\)/,
  ],
  [
    'wm eval: --model does not exist',
    () => ['wm', 'eval', '--model', 'nope.onnx', '--data', 'ok'],
    /--model: world-model file "nope\.onnx" does not exist/,
  ],
  ['wm eval: no --data', () => ['wm', 'eval', '--model', WM], /--data: required/],
  [
    'pretrain: a label outside its bins',
    () => ['pretrain', '--data', demos('label', (d) => poke(join(d, 'labels.bin'), 3, 99)), '--out', 'p.onnx'],
    /label\/labels\.bin: record 0 \(\$\.episodes\[0\]\), step 0: label dyaw = 99 is not a bin/,
  ],
  [
    'pretrain: labels.bin of odd length',
    () => [
      'pretrain',
      '--data',
      demos('labels-odd', (d) => truncateSync(join(d, 'labels.bin'), 10)),
      '--out',
      'p.onnx',
    ],
    /labels-odd\/labels\.bin: 10 bytes is not a whole number of 4-byte values/,
  ],
  [
    'pretrain: a counterfactual object that does not exist',
    () => ['pretrain', '--data', demos('cf', (d) => poke(join(d, 'counterfactual.bin'), 2, 77)), '--out', 'p.onnx'],
    /cf\/counterfactual\.bin: record 0: object 77 is not an object of the scene/,
  ],
  [
    'pretrain: a rollout folder instead of demonstrations',
    () => ['pretrain', '--data', run('not-demos'), '--out', 'p.onnx'],
    /not-demos\/demos\.json: cannot read demonstration metadata: no such file or directory \(is .* a folder written by wmrl collect\?\)/,
  ],
  [
    'rollout: --out names a file',
    () => ['rollout', '--task', 'push', '--episodes', '1', '--out', 'a-file'],
    /--out: a-file is a file, expected a folder/,
  ],
  [
    'render: --out inside a file',
    () => ['render', '--task', 'push', '--out', 'a-file/x.png'],
    /a-file: is a file, not a folder/,
  ],
  [
    'shadow: --model does not exist',
    () => ['shadow', '--model', 'missing.onnx', '--episodes', '1'],
    /--model: world-model file "missing\.onnx" does not exist/,
  ],
  [
    'experiment research: a row with an unknown mode',
    () => [
      'experiment',
      'research',
      '--config',
      study('mode.json', { rows: [{ name: 'a', mode: 'x', iterations: 1 }] }),
    ],
    /mode\.json: rows\.0\.mode: Invalid option/,
  ],
  [
    'experiment research: a base agent that does not exist',
    () => [
      'experiment',
      'research',
      '--config',
      study('base.json', { base: 'no.onnx', rows: [{ name: 'a', mode: 'real', iterations: 1 }] }),
    ],
    /base: agent policy file "no\.onnx" does not exist/,
  ],
];

describe('bad input exits 2 with a message naming the file or flag', () => {
  it.each(cases)('%s', async (_name, args, message) => {
    const r = await wmrl(...args());
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/Cannot read properties|TypeError|RangeError|\n\s+at /);
    expect(r.code).toBe(2);
  });
});

describe('episode folders are byte-identical whatever --num-envs and the time', () => {
  it('rollout at --num-envs 1 and 3 writes the same index.json and episodes.bin; run.json keeps the command', async () => {
    for (const n of ['1', '3']) {
      const r = await wmrl(
        'rollout',
        '--task',
        'stack',
        '--episodes',
        '3',
        '--num-envs',
        n,
        '--out',
        `same-${n}`,
        '--json',
      );
      expect(r.code, r.stderr).toBe(0);
    }
    for (const f of ['index.json', 'episodes.bin'])
      expect(readFileSync(join(tmp, 'same-1', f)).equals(readFileSync(join(tmp, 'same-3', f))), f).toBe(true);
    const info = JSON.parse(readFileSync(join(tmp, 'same-3', 'run.json'), 'utf8'));
    expect(info.command).toContain('--num-envs 3');
    expect(Date.parse(info.createdAt)).not.toBeNaN();
  });
});
