// env: the batched Env contract, checkEnv, wrappers, the registry and toy envs for tests.
// Must not import engines (physics, worldmodel, autoresearch).
export * from './types.ts';
