import { existsSync } from 'node:fs';
import { dexp } from '../core/dmath.ts';
import { Rng } from '../core/rng.ts';
import { randomAction } from '../env/index.ts';
import { ScriptedExpert, type TabletopEnv } from '../physics/index.ts';
import { loadPolicy } from '../policy/model.ts';
import { PolicySampler } from '../policy/sampler.ts';
import { specInterfaceHash } from '../policy/spec-config.ts';
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

export interface PolicySource {
  /** "expert", "random" or the model path. */
  name: string;
  kind: 'expert' | 'random' | 'model';
  /** A fresh policy for an env (sampling streams restart from the seed). */
  make(env: TabletopEnv): Policy;
  close(): Promise<void>;
}

export interface PolicySourceOptions {
  seed: number;
  /** Expert only: token noise. */
  noise?: number;
  /** Model only: logits are divided by this before sampling; 0 = greedy (argmax). */
  temperature?: number;
  /** Flag name used in error messages. */
  flag?: string;
}

/** Draws one bin from log-probabilities at a temperature (0: argmax) with the project's Rng. */
function pick(logp: Float32Array, offset: number, n: number, temperature: number, rng: Rng): number {
  let best = 0;
  for (let k = 1; k < n; k++) if (logp[offset + k] > logp[offset + best]) best = k;
  if (temperature === 0) return best;
  let total = 0;
  const p = new Float64Array(n);
  for (let k = 0; k < n; k++) total += p[k] = dexp((logp[offset + k] - logp[offset + best]) / temperature);
  let u = rng.uniform() * total;
  for (let k = 0; k < n; k++) if ((u -= p[k]) < 0) return k;
  return n - 1;
}

/** A VLA model file as a Policy: one sampler shared by every env it is made for. */
async function modelSource(path: string, o: PolicySourceOptions): Promise<PolicySource> {
  const flag = o.flag ?? '--policy';
  if (!existsSync(path)) throw new UsageError(`${flag}: model file "${path}" does not exist`);
  const model = await loadPolicy(path).catch((e: Error) => {
    throw new UsageError(`${flag}: ${e.message}`);
  });
  const sampler = await PolicySampler.create(model.config, model.params);
  const temperature = o.temperature ?? 1;
  return {
    name: path,
    kind: 'model',
    make(env) {
      if (model.sidecar.specHash !== specInterfaceHash(env.spec)) throw new UsageError(`${flag}: ${path} was made for a different observation/action interface than ${env.spec.id}`);
      const rng = new Rng(o.seed, 0x501c);
      return {
        async act(obs) {
          const f = await sampler.forward(obs, env.numEnvs);
          const out: Record<string, Int32Array> = {};
          for (const a of model.config.actions) {
            out[a.name] = new Int32Array(env.numEnvs);
            for (let i = 0; i < env.numEnvs; i++) out[a.name][i] = pick(f.logp[a.name], i * a.n, a.n, temperature, rng);
          }
          return out;
        },
      };
    },
    close: () => sampler.close(),
  };
}

/** Resolves --policy: expert, random, or a model file (.onnx with its .json sidecar). */
export async function policySource(name: string, o: PolicySourceOptions): Promise<PolicySource> {
  if (name === 'expert' || name === 'random') {
    return { name, kind: name, make: (env) => builtinPolicy(name, env, o.seed, o.noise ?? 0), close: async () => {} };
  }
  if (name.endsWith('.onnx')) return modelSource(name, o);
  throw new UsageError(`${o.flag ?? '--policy'}: unknown policy "${name}"; use expert, random, or a model file (.onnx)`);
}
