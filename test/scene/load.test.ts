import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseScene, parseSceneText, SceneError } from '../../src/scene/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { jsonErrorOffset } from '../../src/scene/json-error.ts';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/scenes/${name}`, import.meta.url));

function loadError(path: string): SceneError {
  try {
    loadSceneFile(path);
  } catch (err) {
    expect(err).toBeInstanceOf(SceneError);
    return err as SceneError;
  }
  throw new Error(`expected ${path} to fail`);
}

describe('loadSceneFile', () => {
  it('loads the shipped scene from the package root', () => {
    expect(DEFAULT_SCENE_PATH.endsWith('/scenes/tabletop.json')).toBe(true);
    const scene = loadSceneFile(DEFAULT_SCENE_PATH);
    expect(scene.name).toBe('tabletop');
    expect(scene.tasks.length).toBeGreaterThan(0);
  });

  const cases: [string, string, RegExp][] = [
    ['wrong-type.json', '$.table.friction', /expected number, received string/],
    ['missing-field.json', '$.control.hz', /expected number, received undefined/],
    ['bad-enum.json', '$.robot.joints[2].axis', /Invalid option: expected one of "x"\|"y"\|"z"/],
    ['unknown-object.json', '$.tasks[0].objects[1]', /unknown object "purple_cube"/],
    ['overlapping-splits.json', '$.splits.heldout', /overlap/],
  ];
  for (const [file, path, message] of cases) {
    it(`${file}: names the file and ${path}`, () => {
      const err = loadError(fixture(file));
      expect(err.source).toBe(fixture(file));
      expect(err.issues).toHaveLength(1);
      expect(err.issues[0].path).toBe(path);
      expect(err.issues[0].message).toMatch(message);
      expect(err.message).toBe(`${fixture(file)}: ${path}: ${err.issues[0].message}`);
    });
  }

  it('reports every bad field, one line each', () => {
    const err = loadError(fixture('two-errors.json'));
    expect(err.issues.map((i) => i.path).sort()).toEqual(['$.objects[0].halfExtents', '$.objects[1].colour']);
    const lines = err.message.split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.startsWith(`${fixture('two-errors.json')}: $.objects[`)).toBe(true);
  });

  it('JSON syntax errors give the file, line and column', () => {
    const err = loadError(fixture('invalid-syntax.json'));
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0].path).toBe('$');
    // the stray comma ends line 13; the parser fails at the "}" that follows it
    expect(err.message).toMatch(
      new RegExp(
        `^${fixture('invalid-syntax.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: \\$: invalid JSON at line 14 column 3: `,
      ),
    );
  });

  it('a missing file names the file', () => {
    const path = fixture('no-such-scene.json');
    const err = loadError(path);
    expect(err.message).toBe(`${path}: $: cannot read scene file: file not found`);
  });

  it('a directory is not a scene file', () => {
    const dir = fixture('');
    expect(loadError(dir).message).toMatch(/is a directory/);
  });
});

describe('parseScene', () => {
  const json = JSON.parse(readFileSync(DEFAULT_SCENE_PATH, 'utf8'));

  it('fills defaults and returns the scene', () => {
    const scene = parseScene(json, 'mem');
    expect(scene.cameras[0].up).toEqual([0, 0, 1]);
  });

  it('uses the given source name in messages', () => {
    const bad = structuredClone(json);
    bad.robot.joints[2].axis = 'w';
    expect(() => parseScene(bad, 'scenes/bad.json')).toThrow(
      'scenes/bad.json: $.robot.joints[2].axis: Invalid option: expected one of "x"|"y"|"z"',
    );
  });

  it('a non-object document is an error at $', () => {
    expect(() => parseScene([1, 2], 'x.json')).toThrow(/^x\.json: \$: /);
  });

  it('parseSceneText reports truncated text at its end', () => {
    const text = JSON.stringify(json, null, 2);
    const lines = text.split('\n');
    const cut = lines.slice(0, 5).join('\n');
    expect(() => parseSceneText(cut, 'cut.json')).toThrow(
      `cut.json: $: invalid JSON at line 5 column ${lines[4].length + 1}`,
    );
  });
});

describe('jsonErrorOffset', () => {
  it('agrees with JSON.parse on valid and broken texts', () => {
    const base = readFileSync(DEFAULT_SCENE_PATH, 'utf8');
    const samples = [
      '{}',
      '[]',
      '"a\\u00e9"',
      '-0.5e-3',
      'true',
      ' null ',
      '{"a":[1,{"b":false}]}',
      '',
      '{',
      '[1,]',
      '{"a" 1}',
      '01',
      '"\\x"',
      '"a\n"',
      'nul',
      '1 2',
      '{"a":1}}',
    ];
    // deterministic single-character corruptions of the real scene
    for (let k = 1; k < 200; k++) {
      const at = (k * 7919) % base.length;
      const ch = '{}[],:"0 -ex'[k % 12];
      samples.push(base.slice(0, at) + ch + base.slice(at + 1), base.slice(0, at));
    }
    for (const text of samples) {
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(jsonErrorOffset(text) === -1, JSON.stringify(text.slice(0, 40))).toBe(valid);
    }
  });

  it('points at the offending character', () => {
    expect(jsonErrorOffset('{"a": tru }')).toBe(9);
    expect(jsonErrorOffset('[1, 2,]')).toBe(6);
    expect(jsonErrorOffset('{"a": 1')).toBe(7);
  });
});

describe('browser safety', () => {
  it('src/scene (but load-file.ts) and src/task import nothing Node-only', async () => {
    const { readdirSync } = await import('node:fs');
    for (const dir of ['scene', 'task']) {
      const root = new URL(`../../src/${dir}/`, import.meta.url);
      for (const file of readdirSync(root).filter((f) => f.endsWith('.ts') && f !== 'load-file.ts')) {
        const text = readFileSync(new URL(file, root), 'utf8');
        expect(text, `src/${dir}/${file}`).not.toMatch(/from ['"](node:|fs|path|url|rapier|three|@dimforge)/);
        expect(text, `src/${dir}/${file}`).not.toMatch(/from ['"][^'"]*load-file/);
      }
    }
  });
});
