import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { commitFiles, journalPath, recoverFolder, SimulatedCrash, type Part } from '../../src/store/index.ts';

const root = mkdtempSync(join(tmpdir(), 'wmrl-commit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `d${n++}`);

const NAMES = ['model.onnx', 'model.json', 'model.wm.json'];
const version = (dir: string, v: string): Part[] =>
  NAMES.map((name, i) => ({ path: join(dir, name), data: `${v}:${name}:${'x'.repeat(100 * (i + 1) + v.length)}` }));
const read = (dir: string) => NAMES.map((name) => readFileSync(join(dir, name), 'utf8'));
const texts = (parts: Part[]) => parts.map((p) => p.data);

/** The boundaries of one commit, by index. */
function boundaries(): string[] {
  const labels: string[] = [];
  const dir = freshDir();
  commitFiles(version(dir, 'probe'), { fault: (_k, what) => labels.push(what) });
  return labels;
}

/** A dead process id (a child that has exited). */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

describe('commitFiles: one commit for a multi-part state', () => {
  const labels = boundaries();

  it('has a boundary before every write and rename, the journal rename being the commit point', () => {
    expect(labels).toEqual([
      'write model.onnx',
      'write model.json',
      'write model.wm.json',
      'write journal',
      'commit',
      'rename model.onnx',
      'rename model.json',
      'rename model.wm.json',
      'delete journal',
    ]);
  });

  it('a crash at every boundary k leaves, after recovery, exactly the old or exactly the new files and no temp files', () => {
    const commitAt = labels.indexOf('commit');
    for (let k = 0; k <= labels.length; k++) {
      const dir = freshDir();
      commitFiles(version(dir, 'old'));
      const crash = () =>
        commitFiles(version(dir, 'new'), {
          fault: (b) => {
            if (b === k) throw new SimulatedCrash(`crash at ${k}`);
          },
        });
      if (k < labels.length) expect(crash, `k=${k}`).toThrow(SimulatedCrash);
      else crash();
      recoverFolder(dir);
      // before the journal rename nothing changed; from it on, the new state is rolled forward
      const want = k <= commitAt ? texts(version(dir, 'old')) : texts(version(dir, 'new'));
      expect(read(dir), `crash at boundary ${k} (${labels[k] ?? 'none'})`).toEqual(want);
      expect(readdirSync(dir).sort(), `k=${k}`).toEqual([...NAMES].sort());
      recoverFolder(dir); // idempotent
      expect(read(dir)).toEqual(want);
    }
  });

  it('a writer rolls an earlier interrupted commit forward before its own', () => {
    const dir = freshDir();
    commitFiles(version(dir, 'old'));
    expect(() =>
      commitFiles(version(dir, 'mid'), {
        fault: (b) => {
          if (labels[b] === 'rename model.json') throw new SimulatedCrash();
        },
      }),
    ).toThrow(SimulatedCrash);
    // a mix on disk until someone recovers: the new .onnx beside the old .json
    expect(readFileSync(join(dir, 'model.onnx'), 'utf8')).toMatch(/^mid:/);
    expect(readFileSync(join(dir, 'model.json'), 'utf8')).toMatch(/^old:/);
    commitFiles([{ path: join(dir, 'other.txt'), data: 'x' }]);
    expect(read(dir)).toEqual(texts(version(dir, 'mid')));
  });

  it('a real error before the commit point removes its own temp files', () => {
    const dir = freshDir();
    commitFiles(version(dir, 'old'));
    expect(() =>
      commitFiles(version(dir, 'new'), {
        fault: (b) => {
          if (b === 2) throw new Error('disk full');
        },
      }),
    ).toThrow('disk full');
    expect(readdirSync(dir).sort()).toEqual([...NAMES].sort());
    expect(read(dir)).toEqual(texts(version(dir, 'old')));
  });

  it('deletes stale temp files of dead writers, keeps those of live ones', () => {
    const dir = freshDir();
    commitFiles(version(dir, 'old'));
    const dead = deadPid();
    const stale = [
      `.model.onnx.${dead}.0.tmp`,
      `.model.onnx.commit.${dead}.3.tmp`,
      `.model.json.${dead}.1764547200000.tmp`,
    ];
    for (const f of stale) writeFileSync(join(dir, f), 'torn');
    const live = `.model.onnx.${process.ppid}.7.tmp`;
    writeFileSync(join(dir, live), 'in flight');
    recoverFolder(dir);
    expect(readdirSync(dir).sort()).toEqual([live, ...NAMES].sort());
    expect(read(dir)).toEqual(texts(version(dir, 'old')));
  });

  it('refuses a journal that does not match its parts, naming the file', () => {
    const dir = freshDir();
    commitFiles(version(dir, 'old'));
    expect(() =>
      commitFiles(version(dir, 'new'), {
        fault: (b) => {
          if (labels[b] === 'rename model.onnx') throw new SimulatedCrash();
        },
      }),
    ).toThrow(SimulatedCrash);
    const temp = readdirSync(dir).find((f) => f.startsWith('.model.json.') && f.endsWith('.tmp'))!;
    writeFileSync(join(dir, temp), 'edited');
    expect(() => recoverFolder(dir)).toThrow(InputError);
    expect(() => recoverFolder(dir)).toThrow(
      `${join(dir, temp)}: does not match the sha256 in commit journal ${journalPath(join(dir, 'model.onnx'))}`,
    );
    writeFileSync(journalPath(join(dir, 'model.onnx')), '{"format": 1');
    expect(() => recoverFolder(dir)).toThrow(/unreadable commit journal/);
  });

  it('takes one folder per commit', () => {
    expect(() =>
      commitFiles([
        { path: join(root, 'a', 'x'), data: '' },
        { path: join(root, 'b', 'y'), data: '' },
      ]),
    ).toThrow(/one commit, one folder/);
  });
});
