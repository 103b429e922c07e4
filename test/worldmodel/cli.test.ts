import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { wmrlProcess } from '../cli/helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-wmcli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const wmrl = (...args: string[]) => wmrlProcess(tmp, ...args);

describe('wmrl wm / shadow CLI', () => {
  it('wm train: trains on a run folder, writes the model, its sidecars and JSONL metrics; prints one JSON object', async () => {
    const roll = await wmrl(
      'rollout',
      '--task',
      'push',
      '--episodes',
      '4',
      '--noise',
      '0.2',
      '--out',
      'data',
      '--json',
    );
    expect(roll.code).toBe(0);
    const r = await wmrl(
      'wm',
      'train',
      '--data',
      'data',
      '--out',
      'm/wm.onnx',
      '--members',
      '2',
      '--hidden',
      '16',
      '--steps',
      '20',
      '--batch',
      '16',
      '--eval-every',
      '10',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.steps).toBe(20);
    expect(out.heldout.open_loop).toHaveProperty('H5');
    expect(out.heldout.reward).toHaveProperty('hallucinated_success_rate');
    for (const f of ['m/wm.onnx', 'm/wm.json', 'm/wm.wm.json']) expect(existsSync(join(tmp, f)), f).toBe(true);
    const lines = readFileSync(join(tmp, 'm/wm.metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.kind)).toEqual(['train', 'train', 'heldout']);
    expect(lines[0].valMse).toBeGreaterThan(0);
    const ev = await wmrl('wm', 'eval', '--model', 'm/wm.onnx', '--data', 'data', '--json');
    expect(ev.code, ev.stderr).toBe(0);
    expect(JSON.parse(ev.stdout).transitions).toBe(out.val_transitions + out.train_transitions);
  });

  it('shadow against the physics itself: zero divergence, JSON + PNG plot', async () => {
    const r = await wmrl(
      'shadow',
      '--model',
      'physics',
      '--task',
      'stack',
      '--episodes',
      '2',
      '--noise',
      '0.1',
      '--out',
      'sh',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.episodes).toBe(2);
    expect(out.mean.objects_m).toBe(0);
    expect(out.hallucinated_success_rate).toBe(0);
    const png = PNG.sync.read(readFileSync(join(tmp, 'sh/shadow.png')));
    expect([png.width, png.height]).toEqual([480, 240]);
    expect(JSON.parse(readFileSync(join(tmp, 'sh/shadow.json'), 'utf8')).curves.ee_m.length).toBeGreaterThan(0);
  });

  it('rejects bad flags naming the flag (exit 2)', async () => {
    const r = await wmrl('wm', 'train', '--data', 'nowhere', '--out', 'x.bin');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--out: must end in \.onnx/);
    const s = await wmrl('shadow', '--sampling', 'best');
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(/--sampling/);
  });
});
