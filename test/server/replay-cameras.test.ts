// The cameras a replay names: those the run folder's policy reads (its policy.json), for the viewer's panel.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCameras } from '../../src/server/replay.ts';
import { SCENE } from './fixture.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-replay-cameras-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const run = (name: string, sidecar?: unknown) => {
  const dir = join(tmp, name);
  if (sidecar !== undefined) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'policy.json'), typeof sidecar === 'string' ? sidecar : JSON.stringify(sidecar));
  }
  return dir;
};

describe('runCameras', () => {
  it("reads the run policy's cameras; anything else leaves the default", () => {
    expect(runCameras(SCENE, run('two', { config: { cameras: ['image_front', 'image_wrist'] } }))).toEqual([
      'front',
      'wrist',
    ]);
    expect(runCameras(SCENE, run('front', { config: { cameras: ['image_front'] } }))).toEqual(['front']);
    expect(runCameras(SCENE, run('none'))).toBeUndefined();
    expect(runCameras(SCENE, run('side', { config: { cameras: ['image_side'] } }))).toBeUndefined();
    expect(runCameras(SCENE, run('junk', '{not json'))).toBeUndefined();
    expect(runCameras(SCENE, run('agent', { config: { cameras: [] } }))).toBeUndefined();
  });
});
