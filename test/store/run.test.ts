import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import {
  appendMetrics,
  checkpointDue,
  commitCheckpoint,
  hasCheckpoint,
  resumeCheckpoint,
  runKeyDiff,
  SimulatedCrash,
  startMetrics,
  StopFlag,
} from '../../src/store/index.ts';

const root = mkdtempSync(join(tmpdir(), 'wmrl-run-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const folder = (name: string) => {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** A checkpoint whose json part is the run key and step (what a loader would read back). */
const save = (dir: string, step: number, run: Record<string, unknown>) =>
  commitCheckpoint(dir, new Uint8Array([step]), { step, run });
const load = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8')) as { step: number; run: Record<string, unknown> };

describe('resumable run: the resume check', () => {
  const key = { lr: 0.002, batch: 8, config: { seed: 1, tasks: ['push'] }, dataHash: 'a'.repeat(64) };

  it('continues a checkpoint of the same run and starts fresh without --resume', () => {
    const dir = folder('same');
    save(dir, 40, key);
    expect(resumeCheckpoint(dir, { ...key, config: { tasks: ['push'], seed: 1 } }, true, load)).toEqual({
      step: 40,
      run: key,
    });
    expect(resumeCheckpoint(dir, { ...key, lr: 1 }, false, load)).toBeNull();
  });

  it('refuses a checkpoint of another run with exit-2 input error naming every differing key', () => {
    const dir = folder('other');
    save(dir, 40, key);
    const other = { ...key, lr: 0.003, config: { seed: 1, tasks: ['push', 'pick'] }, dataHash: 'b'.repeat(64) };
    let err: unknown;
    try {
      resumeCheckpoint(dir, other, true, load);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as Error).message).toBe(
      `--resume: the checkpoint in ${dir} belongs to a run with different options or data: ` +
        'lr (0.002 in the checkpoint, 0.003 now), config.tasks (["push"] in the checkpoint, ["push","pick"] now), dataHash',
    );
    expect(runKeyDiff({ a: 1, gone: true }, { a: 1, added: 2 }).map((d) => d.key)).toEqual(['added', 'gone']);
    expect(() => resumeCheckpoint(dir, { ...key, shift: 2 }, true, load)).toThrow(
      /: shift \(unset in the checkpoint, 2 now\)$/,
    );
  });

  it('refuses --resume without a checkpoint, and rolls an interrupted commit forward before looking', () => {
    expect(() => resumeCheckpoint(folder('empty'), key, true, load)).toThrow(
      new InputError(`--resume: no checkpoint in ${join(root, 'empty')}`),
    );
    const dir = folder('torn');
    expect(() =>
      commitCheckpoint(
        dir,
        new Uint8Array([7]),
        { step: 7, run: key },
        {
          fault: (_b, what) => {
            if (what === 'rename checkpoint.bin') throw new SimulatedCrash();
          },
        },
      ),
    ).toThrow(SimulatedCrash);
    expect(readdirSync(dir)).not.toContain('checkpoint.json');
    expect(hasCheckpoint(dir)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['checkpoint.bin', 'checkpoint.json']);
    expect(resumeCheckpoint(dir, key, true, load)?.step).toBe(7);
  });
});

describe('resumable run: metrics, cadence and stopping', () => {
  it('a fresh run starts the metrics file (creating its folder); a resumed one keeps the lines up to its checkpoint', () => {
    const path = join(root, 'metrics', 'deeper', 'metrics.jsonl');
    startMetrics(path, null, '{"kind":"budget","step":0}\n');
    for (let step = 1; step <= 5; step++) appendMetrics(path, { step, loss: step / 10 });
    appendMetrics(path, { kind: 'heldout' });
    startMetrics(path, 3);
    expect(readFileSync(path, 'utf8')).toBe(
      '{"kind":"budget","step":0}\n{"step":1,"loss":0.1}\n{"step":2,"loss":0.2}\n{"step":3,"loss":0.3}\n',
    );
    startMetrics(path, null);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('checkpoints every n steps, after the last and when stopping', () => {
    const due = Array.from({ length: 10 }, (_, i) => i + 1).filter((s) => checkpointDue(s, 4, 10));
    expect(due).toEqual([4, 8, 10]);
    expect(checkpointDue(3, 4, 10, true)).toBe(true);
  });

  it('the stop flag is raised by request() or its hook, and stays raised', () => {
    let polls = 0;
    let ctrlC = false;
    const flag = new StopFlag(() => {
      polls++;
      return ctrlC;
    });
    expect(flag.requested).toBe(false);
    ctrlC = true;
    expect(flag.requested).toBe(true);
    ctrlC = false;
    expect(flag.requested).toBe(true);
    expect(polls).toBe(2);
    const manual = new StopFlag();
    expect(manual.requested).toBe(false);
    manual.request();
    expect(manual.requested).toBe(true);
  });
});
