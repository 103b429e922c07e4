// A thread of `npm run bench:env`'s threaded figure: builds its own 16-world env, then on 'go' steps it
// for the given milliseconds and answers how many env steps it took.
import { parentPort, workerData } from 'node:worker_threads';
import { createTabletopEnv } from '../src/physics/index.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../src/scene/load-file.ts';
import { stepper } from './timing.ts';

const { worlds, ms, seed } = workerData as { worlds: number; ms: number; seed: number };
const env = await createTabletopEnv({
  scene: loadSceneFile(DEFAULT_SCENE_PATH),
  taskId: workerData.task,
  numEnvs: worlds,
});
await env.reset({ seed });
const step = stepper(env, seed);
for (let i = 0; i < 5; i++) await step();
parentPort!.once('message', async () => {
  let steps = 0;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    await step();
    steps += worlds;
  }
  env.close();
  parentPort!.postMessage(steps);
});
parentPort!.postMessage('ready');
