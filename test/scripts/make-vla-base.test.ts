// The base's recipe (scripts/make-vla-base.sh), scaled down: two runs in fresh folders write the same
// bytes, and the policy reads the front and wrist cameras through the light encoder with shifted images.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-recipe-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function makeBase(name: string): { onnx: Buffer; sidecar: Record<string, unknown>; demos: Buffer } {
  const dir = join(tmp, name);
  const small = { EPISODES: '1', STEPS: '16', SELECT_EVERY: '8', SELECT_EPISODES: '1' };
  const paths = { OUT: dir, MODEL: join(dir, 'base.onnx'), DEMOS: join(dir, 'demos') };
  execFileSync('bash', ['scripts/make-vla-base.sh'], {
    env: { ...process.env, ...small, ...paths },
    stdio: 'pipe',
  });
  const sidecar = JSON.parse(readFileSync(join(dir, 'base.json'), 'utf8'));
  const demos = readFileSync(join(paths.DEMOS, 'episodes.bin'));
  return { onnx: readFileSync(join(dir, 'base.onnx')), sidecar, demos };
}

describe('scripts/make-vla-base.sh', () => {
  it('re-runs byte-identically, on both cameras with the light encoder and shifted images', () => {
    const first = makeBase('first');
    const second = makeBase('second');
    expect(second.demos.equals(first.demos)).toBe(true);
    expect(second.onnx.equals(first.onnx)).toBe(true);
    // the sidecars differ only in the demonstrations' folder their notes name
    const renamed = JSON.stringify(first.sidecar).replaceAll(join(tmp, 'first'), join(tmp, 'second'));
    expect(second.sidecar).toEqual(JSON.parse(renamed));
    const config = first.sidecar.config as { cameras: string[]; secondConv?: unknown };
    expect(config.cameras).toEqual(['image_front', 'image_wrist']);
    expect(config.secondConv).toBeDefined();
    expect(JSON.stringify(first.sidecar.provenance)).toMatch(/shift 2/);
  }, 300_000);

  it('made the shipped base: its sidecar names the recipe', () => {
    const sidecar = JSON.parse(readFileSync('models/vla-base.json', 'utf8'));
    expect(sidecar.config.cameras).toEqual(['image_front', 'image_wrist']);
    expect(sidecar.config.secondConv).toBeDefined();
    expect(sidecar.provenance).toMatchObject({ producer: 'wmrl pretrain', seed: 0, steps: 20000 });
    expect(sidecar.provenance.notes).toMatch(/^behaviour cloning on 4000 demos .* from runs\/demos-1000 \(noise 0,/);
    expect(sidecar.provenance.notes).toMatch(/size roles16, light second-camera encoder, .*lr 0\.002, shift 2/);
  });
});
