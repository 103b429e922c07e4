import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-verdict-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const model = resolve('models/wm-base.onnx');

describe('wmrl shadow --verdict', () => {
  it("prints the shipped world model's verdict per family as JSON and writes verdict.json and verdict.md", async () => {
    const r = await wmrlProcess(
      tmp,
      'shadow',
      '--verdict',
      '--model',
      model,
      '--policy',
      'expert',
      '--task',
      'stack',
      '--split',
      'train',
      '--episodes',
      '2',
      '--out',
      'v',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out.families)).toEqual(['tabletop/stack']);
    const f = out.families['tabletop/stack'];
    expect(f.rollouts).toBe(2);
    expect(f.tp + f.fp + f.fn + f.tn).toBe(f.segments);
    expect(f.tp + f.fn).toBe(2 * f.physics_successes); // two segments end at each success (every 5, horizon 10)
    expect(JSON.parse(readFileSync(join(tmp, 'v/verdict.json'), 'utf8')).horizon).toBe(10);
    expect(readFileSync(join(tmp, 'v/verdict.md'), 'utf8')).toMatch(/^\| family \|.*\n.*\n\| stack \| 2 \(/);
  });

  it('refuses the physics twin and member sampling (exit 2, naming the flag)', async () => {
    const a = await wmrlProcess(tmp, 'shadow', '--verdict', '--model', 'physics');
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/--model/);
    const b = await wmrlProcess(tmp, 'shadow', '--verdict', '--model', model, '--sampling', 'member');
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/--sampling/);
  });
});
