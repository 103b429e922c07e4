import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { wmrlProcess } from './helpers.ts';
import { readEpisodeFolder } from '../../src/rollout/index.ts';
import { sceneContract } from '../../src/demos/index.ts';
import { loadScene } from '../../src/cli/scene.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const wmrl = (...args: string[]) => wmrlProcess(tmp, ...args);

describe('wmrl CLI', () => {
  it('prints help for every command', async () => {
    const top = await wmrl('--help');
    expect(top.code).toBe(0);
    for (const cmd of ['demo', 'tasks', 'rollout', 'render', 'brew']) {
      expect(top.stdout).toContain(cmd);
      const sub = await wmrl(cmd, '--help');
      expect(sub.code).toBe(0);
      expect(sub.stdout).toMatch(new RegExp(`Usage: wmrl ${cmd}`));
    }
  });

  it('tasks --json lists every family with its id and nothing else on stdout', async () => {
    const r = await wmrl('tasks', '--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.tasks.map((t: { id: string }) => t.id)).toEqual([
      'tabletop/push',
      'tabletop/pick-place',
      'tabletop/stack',
      'tabletop/put-in-bin',
    ]);
  });

  it('rollout --json reports a Wilson interval and writes a readable run folder', async () => {
    const out = join(tmp, 'run');
    const r = await wmrl(
      'rollout',
      '--task',
      'stack',
      '--policy',
      'expert',
      '--episodes',
      '3',
      '--split',
      'heldout',
      '--out',
      out,
      '--json',
    );
    expect(r.code).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res).toMatchObject({ episodes: 3, split: 'heldout', out });
    expect(res.ci_low).toBeLessThanOrEqual(res.success_rate);
    expect(res.ci_high).toBeGreaterThanOrEqual(res.success_rate);
    expect(Object.keys(res.tasks)).toEqual(['tabletop/stack']);
    const { index, episodes } = readEpisodeFolder(out, sceneContract(loadScene(undefined)));
    expect(index.episodes.map((e) => e.seed)).toEqual([1000000, 1000001, 1000002]);
    expect(episodes[0].states!.length).toBe((episodes[0].length + 1) * index.stateNames.length);
    expect(episodes[0].actions.length).toBe(episodes[0].length * 5);
  });

  it('render writes a PNG a person can look at', async () => {
    const png = join(tmp, 'obs.png');
    const r = await wmrl('render', '--task', 'tabletop/push', '--seed', '3', '--out', png, '--scale', '2', '--json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ width: 128, height: 128, task: 'tabletop/push' });
    const img = PNG.sync.read(readFileSync(png));
    expect([img.width, img.height]).toEqual([128, 128]);
  });

  it('bad flags exit 2 with an error naming the flag, and write nothing', async () => {
    const out = join(tmp, 'never');
    const cases: [string[], RegExp][] = [
      [['rollout', '--episodes', '0', '--out', out], /--episodes: must be >= 1/],
      [['rollout', '--split', 'test', '--out', out], /--split: .*"train"\|"validation"\|"heldout"/],
      [['rollout', '--task', 'juggle', '--out', out], /--task: unknown task "juggle"; valid: all, tabletop\/push/],
      [['render', '--task', 'push', '--out', join(tmp, 'x.jpg')], /--out: must end in \.png/],
      [['tasks', '--scene', join(tmp, 'missing.json')], /missing\.json: \$: cannot read scene file/],
    ];
    for (const [args, message] of cases) {
      const r = await wmrl(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(existsSync(out)).toBe(false);
  });
});
