import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPolicy } from '../../src/policy/model.ts';
import { wmrlProcess } from './helpers.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-brew-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const ROOT = join(import.meta.dirname, '../..');

describe('wmrl brew', () => {
  it('fine-tunes the policy on its stored rollouts (AgentBrew with PMI rows) and names bad flags', {
    timeout: 180_000,
  }, async () => {
    const data = join(tmp, 'rollouts');
    const rollout = ['rollout', '--task', 'put-in-bin', '--policy', 'models/vla-base.onnx', '--episodes', '6'];
    expect((await wmrlProcess(ROOT, ...rollout, '--split', 'train', '--out', data)).code).toBe(0);
    const out = join(tmp, 'brewed.onnx');
    const r = await wmrlProcess(ROOT, 'brew', '--data', data, '--out', out, '--pmi', '--steps', '3', '--json');
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ out, episodes: 6 });
    expect(summary.kept).toBeGreaterThan(0);
    expect((await loadPolicy(out)).sidecar.provenance.notes).toMatch(/^agentbrew \+ PMI weights on/);

    const bad = await wmrlProcess(ROOT, 'brew', '--data', data, '--out', join(tmp, 'x.onnx'), '--method', 'best');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--method/);
    const heldout = join(tmp, 'heldout');
    expect((await wmrlProcess(ROOT, ...rollout, '--split', 'heldout', '--out', heldout)).code).toBe(0);
    const leak = await wmrlProcess(ROOT, 'brew', '--data', heldout, '--out', join(tmp, 'y.onnx'));
    expect(leak.code).toBe(2);
    expect(leak.stderr).toMatch(/heldout split/);
    expect(existsSync(join(tmp, 'y.onnx'))).toBe(false);
  });
});
