import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { fixedCameras, tabletopSpec } from '../../src/physics/index.ts';
import { readEpisodeData } from '../../src/worldmodel/index.ts';
import { A, S, editJson, poke, scene, writeFakeRun } from '../rollout/fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-wmdata-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const spec = tabletopSpec(scene, 'tabletop/push', fixedCameras(scene));
let n = 0;
function run(o: { states?: boolean } = {}): string {
  const dir = join(tmp, `r${n++}`);
  writeFakeRun(dir, 3, o);
  return dir;
}

function readError(dirs: string[]): string {
  try {
    readEpisodeData(dirs, scene, spec);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error('read without an error');
}

describe('readEpisodeData checks run folders against the scene and the spec', () => {
  it('reads valid folders', () => {
    const got = readEpisodeData([run(), run()], scene, spec);
    expect(got).toHaveLength(6);
    expect(got[0].states.length).toBe(5 * S);
  });

  it('NaN states, out-of-range tokens, folders without states and unknown tasks are InputErrors', () => {
    const nan = run();
    poke(join(nan, 'episodes.bin'), 4 * A + 4 + 3, NaN, 'float');
    expect(readError([run(), nan])).toMatch(
      /r\d+\/episodes\.bin: record 0 \(\$\.episodes\[0\]\), state 0 \(initial\): tcp_yaw is NaN/,
    );
    const token = run();
    poke(join(token, 'episodes.bin'), 1, spec.action[1].kind === 'discrete' ? spec.action[1].n : 0);
    expect(readError([token])).toMatch(/record 0 .*step 0: action dy = \d+ is not a bin/);
    expect(readError([run({ states: false })])).toMatch(
      /index\.json: \$\.stateNames: the folder has no recorded states/,
    );
    const task = run();
    editJson(join(task, 'index.json'), (j) => (j.episodes[2].task = 'tabletop/juggle'));
    expect(readError([task])).toMatch(/index\.json: \$\.episodes\[2\]\.task: unknown task "tabletop\/juggle"/);
    const long = run();
    editJson(join(long, 'index.json'), (j) => (j.episodes[0].length = 100000));
    expect(readError([long])).toMatch(/\$\.episodes\[0\]\.length: 100000 steps, more than the \d+ of tabletop\/push/);
  });
});
