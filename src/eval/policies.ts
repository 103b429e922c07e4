// The policies a user can name: the privileged scripted expert (optionally with token noise), uniform
// random tokens, or a VLA model file. Every random draw derives from (seed, episode key, step).
import { existsSync, statSync } from 'node:fs';
import { InputError } from '../core/errors.ts';
import { camerasOf, ScriptedExpert, type TabletopEnv } from '../physics/index.ts';
import { loadPolicy } from '../policy/model.ts';
import { PolicySampler, samplerPolicy } from '../policy/sampler.ts';
import { specInterfaceHash } from '../policy/spec-config.ts';
import { type Policy, randomPolicy, takeSlots, withTokenNoise } from '../rollout/index.ts';

export interface PolicySource {
  /** "expert", "random" or the model path. */
  name: string;
  kind: 'expert' | 'random' | 'model';
  /** The scene cameras the policy reads (a model: its config's, e.g. ["front", "wrist"]); the envs it acts
   *  in must render exactly these. Undefined: it reads no image (expert, random), any env will do. */
  cameras?: string[];
  /** The policy acting in `env` (stateless across envs: any number of envs may share the source). */
  make(env: TabletopEnv): Policy;
  close(): Promise<void>;
}

export interface PolicySourceOptions {
  /** Seed of the policy's random draws (sampling, noise); default 0. */
  seed?: number;
  /** Expert only: probability of replacing each executed token by a uniform one. */
  noise?: number;
  /** Model only: logits are divided by this before sampling; 0 = greedy (argmax). Default 1. */
  temperature?: number;
  /** Flag named in error messages (default --policy). */
  flag?: string;
}

/** The scripted expert acting on the env's privileged state, with optional token noise. */
export function expertPolicy(env: TabletopEnv, noise = 0, seed = 0): Policy {
  const expert = new ScriptedExpert(env);
  return withTokenNoise({ act: (_obs, ctx) => ({ actions: expert.act(ctx.keys) }) }, env.spec, noise, seed);
}

async function modelSource(path: string, o: PolicySourceOptions, flag: string): Promise<PolicySource> {
  if (!existsSync(path)) throw new InputError(`${flag}: model file "${path}" does not exist`);
  if (!statSync(path).isFile()) throw new InputError(`${flag}: "${path}" is a folder, expected a model file (.onnx)`);
  const model = await loadPolicy(path).catch((e: Error) => {
    throw new InputError(`${flag}: ${e.message}`);
  });
  const sampler = await PolicySampler.create(model.config, model.params);
  const policy = samplerPolicy(sampler, { seed: o.seed ?? 0, temperature: o.temperature ?? 1 });
  const cameras = (() => {
    try {
      return camerasOf(model.config.cameras);
    } catch (e) {
      throw new InputError(`${flag}: ${path}: ${(e as Error).message}`);
    }
  })();
  return {
    name: path,
    kind: 'model',
    cameras,
    make(env) {
      if (model.sidecar.specHash !== specInterfaceHash(env.spec))
        throw new InputError(
          `${flag}: ${path} was made for a different observation/action interface than ${env.spec.id}`,
        );
      return policy;
    },
    close: () => sampler.close(),
  };
}

/** Resolves --policy: expert, random, or a model file (.onnx with its .json sidecar). */
export async function policySource(name: string, o: PolicySourceOptions = {}): Promise<PolicySource> {
  const flag = o.flag ?? '--policy';
  const seed = o.seed ?? 0;
  if (name === 'expert')
    return { name, kind: name, make: (env) => expertPolicy(env, o.noise ?? 0, seed), close: async () => {} };
  if (name === 'random')
    return { name, kind: name, make: (env) => randomPolicy(env.spec, seed), close: async () => {} };
  if (name.endsWith('.onnx')) return modelSource(name, o, flag);
  throw new InputError(`${flag}: unknown policy "${name}"; use expert, random, or a model file (.onnx)`);
}

/** The handover probe: the scripted expert acts for the first `k` steps of every episode, then `policy`
 *  from the state the expert reached. The policy is not asked while every running env is the expert's.
 *  The expert's tokens have no log-probability: NaN in `logp` (none at all on the expert's steps), so
 *  an episode's logp keeps one entry per token. */
export function handoverPolicy(env: TabletopEnv, policy: Policy, k: number): Policy {
  const expert = new ScriptedExpert(env);
  return {
    onReset: policy.onReset?.bind(policy),
    async act(obs, ctx) {
      const early = Array.from(ctx.steps, (step, i) => ctx.keys[i] >= 0 && step < k);
      if (!early.includes(true)) return policy.act(obs, ctx);
      const guided = expert.act(ctx.keys);
      if (early.every((e, i) => e || ctx.keys[i] < 0)) return { actions: guided };
      const own = await policy.act(obs, ctx);
      const logp =
        own.logp &&
        Object.fromEntries(Object.entries(own.logp).map(([d, l]) => [d, l.map((x, i) => (early[i] ? Number.NaN : x))]));
      return { actions: takeSlots(own.actions, guided, early), ...(logp && { logp }) };
    },
  };
}
