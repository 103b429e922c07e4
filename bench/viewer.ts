// npm run bench:viewer [-- --quick] — what watching costs: ms per env step of a 16-world physics env
// and a 64-env world-model env, plain vs tapped with a real socket.io viewer (a separate process, as a
// browser is) connected over loopback, timed in alternating batches side by side; and the frames/s
// the viewer received.
import { spawn } from 'node:child_process';
import { sceneContract } from '../src/demos/index.ts';
import { type Env, type FrameSource, tapFrames } from '../src/env/index.ts';
import { createTabletopEnv, fixedCameras, tabletopSpec } from '../src/physics/index.ts';
import { PROTOCOL_VERSION } from '../src/protocol/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { startServer } from '../src/server/index.ts';
import { openWorldModelEnv } from '../src/worldmodel/index.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emit, round, stepper, timePair } from './timing.ts';

const quick = process.argv.includes('--quick');
const MIN_MS = quick ? 500 : 4000;
const TASK = 'tabletop/pick-place';
const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const server = await startServer({
  runRoot: mkdtempSync(join(tmpdir(), 'wmrl-bench-')),
  scene,
  port: 0,
  replay: { scene, contract: sceneContract(scene) },
  mounts: [],
});
// the viewer: subscribes, acknowledges every batch, prints the running frame count
const viewer = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `
  import { io } from 'socket.io-client';
  const s = io(${JSON.stringify(server.url)}, { auth: { protocol: ${PROTOCOL_VERSION} }, transports: ['websocket'] });
  let n = 0;
  s.on('frame:batch', (b, ack) => { n += b.frames.length; ack(); console.log(n); });
  s.on('connect', () => s.emit('live:subscribe', {}, () => console.log('ready')));
`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
let received = 0;
await new Promise<void>((ready) =>
  viewer.stdout.on('data', (d: Buffer) => {
    for (const line of d.toString().trim().split('\n')) line === 'ready' ? ready() : (received = Number(line));
  }),
);

async function compare(figure: string, make: () => Promise<Env & FrameSource>): Promise<void> {
  const plain = await make();
  const watched = tapFrames(await make(), server.hub, figure);
  await plain.reset({ seed: 0 });
  await watched.reset({ seed: 0 });
  let watchedS = 0;
  const before = received;
  const stepWatched = stepper(watched, 2);
  const timed = async () => {
    const t0 = performance.now();
    await stepWatched();
    watchedS += (performance.now() - t0) / 1000;
  };
  const [plainMs, watchedMs] = await timePair(stepper(plain, 1), timed, 20, MIN_MS);
  await new Promise((r) => setTimeout(r, 300)); // the last batch in flight
  emit({
    figure,
    plain_ms: round(plainMs),
    watched_ms: round(watchedMs),
    ratio: round(watchedMs / plainMs),
    viewer_frames_per_s: round((received - before) / watchedS, 1),
    numEnvs: plain.numEnvs,
  });
  plain.close();
  watched.close();
}

await compare('physics_16_envs_step', () => createTabletopEnv({ scene, taskId: TASK, numEnvs: 16 }));
await compare('world_model_64_envs_step', () =>
  openWorldModelEnv('models/wm-base.onnx', {
    scene,
    spec: tabletopSpec(scene, TASK, fixedCameras(scene)),
    numEnvs: 64,
  }),
);
viewer.kill();
await server.close();
