import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tabletopTrainSetup } from '../../src/experiment/index.ts';
import { camerasOf } from '../../src/physics/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { FrameSchema } from '../../src/protocol/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';
import { LiveHub } from '../../src/server/index.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';

const tmp = mkdtempSync(join(tmpdir(), 'wmrl-live-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const scene = loadSceneFile(DEFAULT_SCENE_PATH);

/** metrics.jsonl without its time fields. */
const metrics = (dir: string) =>
  readFileSync(join(dir, 'metrics.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => Object.fromEntries(Object.entries(JSON.parse(l)).filter(([k]) => !k.startsWith('time/'))));

describe('training watched live', () => {
  it('streams frames of every env the trainer makes and changes no result (same metrics, same policy.onnx bytes)', {
    timeout: 240_000,
  }, async () => {
    const model = await loadPolicy('models/vla-base.onnx');
    const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 3 });
    const run = async (dir: string, live?: LiveHub) => {
      const { tasks, worldModel } = await tabletopTrainSetup(scene, ['tabletop/pick-place'], {
        mode: 'wmrl',
        worldModel: 'models/wm-base.onnx',
        seed: 0,
        live,
        cameras: camerasOf(model.config.cameras),
      });
      await train(
        { tasks, worldModel, policy: { config: model.config, params: model.params, specHash: model.sidecar.specHash } },
        cfg,
        join(tmp, dir),
      );
      await worldModel?.close();
    };
    const hub = new LiveHub();
    const frames: unknown[] = [];
    hub.subscribe({
      send: (batch, done) => {
        frames.push(...batch.frames);
        setTimeout(done, 5);
      },
    }); // a slowish viewer
    await run('watched', hub);
    await run('plain');
    expect(metrics(join(tmp, 'watched'))).toEqual(metrics(join(tmp, 'plain')));
    expect(
      readFileSync(join(tmp, 'watched', 'policy.onnx')).equals(readFileSync(join(tmp, 'plain', 'policy.onnx'))),
    ).toBe(true);
    const streams = new Set(frames.map((f) => FrameSchema.parse(f).stream));
    expect([...streams].some((s) => s.includes('physics'))).toBe(true);
    expect([...streams].some((s) => s.includes('world model'))).toBe(true);
  });
});
