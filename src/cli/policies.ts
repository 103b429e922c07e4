import { Rng } from '../core/rng.ts';
import { randomAction } from '../env/index.ts';
import { ScriptedExpert, type TabletopEnv } from '../physics/index.ts';
import type { Policy } from '../rollout/index.ts';
import { UsageError } from './options.ts';

/** The built-in policies: the privileged scripted expert (optionally with token noise) and uniform random tokens. */
export function builtinPolicy(name: string, env: TabletopEnv, seed: number, noise = 0): Policy {
  if (name === 'expert') {
    const expert = new ScriptedExpert(env, { noise, seed });
    return { act: () => expert.act() };
  }
  if (name === 'random') {
    const rng = new Rng(seed, 0x7a4d);
    return { act: () => randomAction(env.spec, env.numEnvs, rng) };
  }
  throw new UsageError(`--policy: unknown policy "${name}"; use expert, random, or a model file (.onnx)`);
}
