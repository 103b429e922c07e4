// Caches and stamps that know their code: an evaluation cache made by other code is made again; a run
// (tabletop stamp or research record) made by other code is refused, naming both versions, unless the
// study allows the change.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TRAIN_CLOCK_KEYS } from '../../src/core/metrics.ts';
import { InputError } from '../../src/core/errors.ts';
import {
  cached,
  checkStamp,
  childRunner,
  readCache,
  readFinished,
  type StudyRun,
  type TabletopSpec,
  writeCache,
  writeStamp,
} from '../../src/experiment/index.ts';
import { codeVersion } from '../../src/store/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-study-code-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
let made = 0;
const folder = () => {
  const dir = join(tmp, `case-${made++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
/** Rewrites a JSON file's code version as if other code (or, with null, code before versions) wrote it. */
function otherCode(path: string, code: object | null = { source: 'f00d'.repeat(16), commit: 'abc', clean: true }) {
  const j = JSON.parse(readFileSync(path, 'utf8'));
  if (code) j.code = code;
  else delete j.code;
  writeFileSync(path, JSON.stringify(j));
}
const HERE = codeVersion().source.slice(0, 12);

describe('study caches know their code', () => {
  const Value = z.object({ x: z.number() });
  const key = { policy: 'sha', episodes: 2 };

  it('an evaluation cache made by other code (or before versions) is stale: made again, then current', async () => {
    const path = join(folder(), 'eval.json');
    writeCache(path, key, { x: 1 });
    expect(JSON.parse(readFileSync(path, 'utf8')).code).toEqual(codeVersion());
    expect(readCache(path, key, Value)).toEqual({ x: 1 });
    for (const code of [undefined, null]) {
      otherCode(path, code);
      expect(readCache(path, key, Value)).toBeNull();
      expect(await cached(path, key, Value, async () => ({ x: 2 }))).toEqual({ x: 2 });
      expect(readCache(path, key, Value)).toEqual({ x: 2 });
    }
  });

  it("a finished run's record made by other code is refused, naming both versions, unless allowed", () => {
    const path = join(folder(), 'run.json');
    writeCache(path, key, { x: 1 });
    otherCode(path);
    expect(readFinished(path, key, Value, false)).toBeNull();
    expect(() => readFinished(path, key, Value, true)).toThrow(InputError);
    expect(() => readFinished(path, key, Value, true)).toThrow(
      new RegExp(
        `run\\.json: the run there was made by source f00df00df00d \\(commit abc, clean\\); this is source ${HERE} .*` +
          'refused; delete the run .* or pass --allow-code-change to keep it',
      ),
    );
    expect(readFinished(path, key, Value, true, true)).toEqual({ x: 1 });
    // other settings still refuse as before
    expect(() => readFinished(path, { ...key, episodes: 3 }, Value, true, true)).toThrow(/other settings \(episodes\)/);
  });
});

describe('run stamps know their code', () => {
  const run: StudyRun<object> = { name: 'mix-s0', row: 'mix', mode: 'mix', seed: 0, spec: { iterations: 4 } };

  it('a run stamped by other code, or before code versions, is refused naming both, unless allowed', () => {
    const path = join(folder(), 'mix-s0.stamp.json');
    writeStamp(path, run);
    expect(checkStamp(path, run)).toBe(true);
    otherCode(path);
    expect(() => checkStamp(path, run)).toThrow(
      new RegExp(
        `mix-s0\\.stamp\\.json: run mix-s0 \\(row mix, seed 0, mode mix\\) was made by source f00df00df00d ` +
          `\\(commit abc, clean\\); this is source ${HERE} .*--allow-code-change`,
      ),
    );
    expect(checkStamp(path, run, true)).toBe(true);
    otherCode(path, null);
    expect(() => checkStamp(path, run)).toThrow(/was made by unknown code \(made before code versions were recorded\)/);
  });

  it('a tabletop study refuses such a run before starting any child; allowed, a finished one is kept', async () => {
    const runs = folder();
    const spec = {
      mode: 'mix',
      seed: 0,
      iterations: 1,
      fields: {},
      tasks: [],
      preset: 'smoke',
      policy: 'p',
      scene: 's',
    };
    const tabletop: StudyRun<TabletopSpec> = { ...run, spec: spec as TabletopSpec };
    writeStamp(join(runs, 'mix-s0.stamp.json'), tabletop);
    otherCode(join(runs, 'mix-s0.stamp.json'));
    mkdirSync(join(runs, 'mix-s0'));
    writeFileSync(join(runs, 'mix-s0', 'policy.onnx'), 'weights');
    const line = Object.fromEntries(
      ['iteration', ...TRAIN_CLOCK_KEYS, 'steps/physics', 'steps/world_model'].map((k) => [k, 1]),
    );
    writeFileSync(join(runs, 'mix-s0', 'metrics.jsonl'), `${JSON.stringify(line)}\n`);
    // the bin would fail loudly if it were ever started
    const paths = { runs, report: runs, policy: 'p', worldModel: 'w', bin: join(runs, 'no-such-bin.mjs') };
    const log: string[] = [];
    expect(() => childRunner(paths).train(tabletop, (l) => log.push(l))).toThrow(
      /was made by source f00df00df00d .*refused/,
    );
    await childRunner({ ...paths, allowCodeChange: true }).train(tabletop, (l) => log.push(l));
    expect(log).toEqual([]);
  });
});
