// Starts on the scripted expert's own trajectory: the noise-free expert runs the episode of a seed in
// physics, and the state with a given share of its trajectory still to do is captured exactly (the
// Rapier snapshot), so resetFrom continues from it as if the episode had got there itself.
import type { EpisodeStart } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import { splitOf } from '../task/index.ts';
import { createTabletopEnv } from './env.ts';
import { ScriptedExpert } from './expert.ts';

/** The exact state of the expert's episode of `seed` with `remaining` (0, 1] of its steps to go (the
 *  steps until it succeeds, or until the episode ends; 1 is the initial state), and the physics steps
 *  the expert's pass took to find it (the whole episode: its length decides the state). */
export async function expertStart(
  scene: Scene,
  taskId: string,
  seed: number,
  remaining: number,
): Promise<{ start: EpisodeStart; steps: number }> {
  if (!(remaining > 0 && remaining <= 1))
    throw new RangeError(`expertStart: remaining must be in (0, 1], got ${remaining}`);
  // a training start: validation and held-out seeds may name reserved pairs
  if (splitOf(scene, seed) !== 'train')
    throw new RangeError(
      `expertStart: seed ${seed} is a ${splitOf(scene, seed)} seed; starts come from the train split`,
    );
  const env = await createTabletopEnv({ scene, taskId, numEnvs: 1, render: false });
  try {
    await env.reset({ seed: [seed] });
    const expert = new ScriptedExpert(env);
    const states = [env.capture(0, { exact: true })];
    for (;;) {
      const r = await env.step(expert.act());
      states.push(env.capture(0, { exact: true }));
      if (r.terminated[0] || r.truncated[0]) break;
    }
    const length = states.length - 1;
    return { start: states[Math.min(length - 1, Math.round(length * (1 - remaining)))], steps: length };
  } finally {
    env.close();
  }
}
