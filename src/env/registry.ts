import type { Env } from './types.ts';
import { ChainEnv, CodeLockEnv } from './toys.ts';

export interface EnvOptions {
  numEnvs: number;
}
export type EnvFactory = (options: EnvOptions) => Promise<Env>;

export interface RegisteredEnv {
  /** Registry key: the spec id for physics and toys, "<engine>:<spec id>" for learned models of them. */
  id: string;
  /** The spec.id the built env must carry (a world model copies its physics env's spec). */
  specId: string;
  description: string;
  factory: EnvFactory;
}

/** Env ids -> factories. Concrete engines are registered by src/cli (the only place that wires them). */
export class EnvRegistry {
  private readonly entries = new Map<string, RegisteredEnv>();

  register(id: string, description: string, factory: EnvFactory, specId = id): void {
    if (this.entries.has(id)) throw new Error(`env "${id}" is already registered`);
    this.entries.set(id, { id, specId, description, factory });
  }

  list(): RegisteredEnv[] {
    return [...this.entries.values()];
  }

  async make(id: string, options: EnvOptions): Promise<Env> {
    const entry = this.entries.get(id);
    if (!entry) throw new Error(`unknown env "${id}"; registered: ${[...this.entries.keys()].join(', ')}`);
    const env = await entry.factory(options);
    if (env.spec.id !== entry.specId)
      throw new Error(`factory for "${id}" built an env with spec.id "${env.spec.id}", expected "${entry.specId}"`);
    return env;
  }
}

export function registerToyEnvs(registry: EnvRegistry): void {
  registry.register(
    'toy/chain',
    'walk right along a 10-cell chain (oracle 100%, random ~0%)',
    async ({ numEnvs }) => new ChainEnv(numEnvs),
  );
  registry.register(
    'toy/code-lock',
    'enter the 4-digit code from the instruction (oracle 100%, random 0.08%)',
    async ({ numEnvs }) => new CodeLockEnv(numEnvs),
  );
}
