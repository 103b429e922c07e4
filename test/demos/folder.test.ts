import { mkdtempSync, readdirSync, rmSync, truncateSync, appendFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { readDemoFolder } from '../../src/demos/index.ts';
import { SimulatedCrash } from '../../src/store/index.ts';
import { sampleTask, splitSeed, usesReservedPair } from '../../src/task/index.ts';
import { A, editJson, poke, scene, writeFakeDemos } from '../rollout/fixtures.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-demofolder-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function demos(): string {
  const dir = join(tmp, `d${n++}`);
  writeFakeDemos(dir, 2);
  return dir;
}
const R = 3 + A; // counterfactual record: episode, step, object, tokens

/** An episode of the fake folder (push, train seeds 0..9) and an object that makes a reserved pair with
 *  its target. */
function reservedObject(): [number, number] {
  for (let ei = 0; ei < 10; ei++) {
    const task = sampleTask(scene, 'tabletop/push', splitSeed(scene, 'train', ei));
    const o = scene.objects.findIndex((_, o) => o !== task.object && usesReservedPair(scene, { ...task, object: o }));
    if (o >= 0) return [ei, o];
  }
  throw new Error('no push train seed of 0..9 has a target of a reserved pair');
}

function readError(dir: string): string {
  try {
    readDemoFolder(dir);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error(`${dir} was read without an error`);
}

describe('demonstration folders are validated on read', () => {
  it('reads back labels and counterfactual records', () => {
    const dir = demos();
    const { demos: got, meta } = readDemoFolder(dir);
    expect(meta.noise).toBe(0);
    expect(got).toHaveLength(2);
    expect(got[1].labels).toEqual(got[1].actions);
    expect(got[0].counterfactual).toEqual([expect.objectContaining({ step: 1, tokens: [1, 1, 1, 1, 0] })]);
  });

  it('labels outside their bins name labels.bin, the record, the step and the action', () => {
    const dir = demos();
    poke(join(dir, 'labels.bin'), 4 * A + A + 3, 99); // record 1, step 1, dyaw
    expect(readError(dir)).toMatch(
      /labels\.bin: record 1 \(\$\.episodes\[1\]\), step 1: label dyaw = 99 is not a bin in \[0, \d+\)/,
    );
  });

  it("labels.bin must be whole 4-byte tokens of exactly the episodes' length", () => {
    const odd = demos();
    truncateSync(join(odd, 'labels.bin'), 8 * A * 4 - 2);
    expect(readError(odd)).toMatch(/labels\.bin: \d+ bytes is not a whole number of 4-byte values/);
    const short = demos();
    truncateSync(join(short, 'labels.bin'), (8 * A - 1) * 4);
    expect(readError(short)).toMatch(
      /labels\.bin: 39 labels, but the 2 episodes of index\.json have 8 steps x 5 actions = 40/,
    );
    const long = demos();
    appendFileSync(join(long, 'labels.bin'), Buffer.alloc(4));
    expect(readError(long)).toMatch(/labels\.bin: 41 labels/);
  });

  it('counterfactual records need a real episode, step, object and tokens', () => {
    const cases: [number, number, RegExp][] = [
      [0, 5, /counterfactual\.bin: record 0: episode 5 does not exist \(the folder has 2\)/],
      [R + 1, 4, /record 1: step 4 is outside episode 1 \(4 steps\)/],
      [2, 77, /record 0: object 77 is not an object of the scene/],
      [R + 3 + 4, 3, /record 1: token grip = 3 is not a bin in \[0, 2\)/],
    ];
    for (const [word, value, message] of cases) {
      const dir = demos();
      poke(join(dir, 'counterfactual.bin'), word, value);
      expect(readError(dir)).toMatch(message);
    }
    const own = demos();
    poke(join(own, 'counterfactual.bin'), 2, sampleTask(scene, 'tabletop/push', splitSeed(scene, 'train', 0)).object);
    expect(readError(own)).toMatch(/record 0: object \d \(\w+\) is what episode 0 already manipulates or targets/);
    const reserved = demos();
    const [ei, object] = reservedObject();
    poke(join(reserved, 'counterfactual.bin'), ei * R + 2, object);
    expect(readError(reserved)).toMatch(
      new RegExp(
        `record ${ei}: object ${object} \\(\\w+\\) with episode ${ei}'s target is a pair reserved for held-out`,
      ),
    );
    const ragged = demos();
    appendFileSync(join(ragged, 'counterfactual.bin'), Buffer.alloc(4));
    expect(readError(ragged)).toMatch(/counterfactual\.bin: 17 values is not a whole number of 8-value records/);
  });

  it('an edited seed or instruction, demos.json naming a missing scene, and the episode checks', () => {
    const seed = demos();
    editJson(join(seed, 'index.json'), (j) => (j.episodes[1].seed = -5));
    expect(readError(seed)).toMatch(/index\.json: \$\.episodes\[1\]\.seed: seed -5 is in (neither|no) split/);
    const text = demos();
    editJson(join(text, 'index.json'), (j) => (j.episodes[0].instruction = 'juggle the cubes'));
    expect(readError(text)).toMatch(
      /index\.json: \$\.episodes\[0\]\.instruction: "juggle the cubes", but seed \d+ of tabletop\/push says/,
    );
    const sceneless = demos();
    editJson(join(sceneless, 'demos.json'), (j) => (j.scene = join(tmp, 'no-scene.json')));
    expect(readError(sceneless)).toMatch(
      /demos\.json: \$\.scene: the scene it names cannot be loaded:\n.*no-scene\.json: \$: cannot read scene file: file not found/,
    );
    const shifted = demos();
    editJson(join(shifted, 'index.json'), (j) => (j.episodes[1].offset -= 4));
    expect(readError(shifted)).toMatch(/index\.json: \$\.episodes\[1\]\.offset/);
    const rollout = demos();
    rmSync(join(rollout, 'demos.json'));
    expect(readError(rollout)).toMatch(
      /demos\.json: cannot read demonstration metadata: no such file or directory \(is .* a folder written by wmrl collect\?\)/,
    );
    expect(readFileSync(join(demos(), 'run.json'), 'utf8')).toContain('wmrl collect --fake');
  });

  it('is written as one unit: a crash at any write boundary leaves the old folder or the new one', () => {
    const boundaries: string[] = [];
    writeFakeDemos(join(tmp, 'probe'), 2, { fault: (_k, what) => boundaries.push(what) });
    expect(boundaries.length).toBeGreaterThan(6); // 6 parts, the commit, the renames
    for (let k = 0; k <= boundaries.length; k++) {
      const dir = join(tmp, `crash${k}`);
      writeFakeDemos(dir, 2);
      const write = () =>
        writeFakeDemos(dir, 3, {
          fault: (b) => {
            if (b === k) throw new SimulatedCrash();
          },
        });
      if (k < boundaries.length) expect(write).toThrow(SimulatedCrash);
      else write();
      const { demos } = readDemoFolder(dir);
      const committed = k > boundaries.indexOf('commit');
      expect(demos.length, `crash at ${boundaries[k] ?? 'none'}`).toBe(committed ? 3 : 2);
      expect(readdirSync(dir).sort()).toEqual([
        'counterfactual.bin',
        'demos.json',
        'episodes.bin',
        'index.json',
        'labels.bin',
        'run.json',
      ]);
    }
  });
});
