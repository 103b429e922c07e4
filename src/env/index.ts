// env: the batched Env contract, checkEnv, wrappers, the registry and toy envs for tests.
// Must not import engines (physics, worldmodel, autoresearch).
export * from './types.ts';
export * from './check.ts';
export * from './wrappers.ts';
export * from './registry.ts';
export * from './toys.ts';
export * from './seeds.ts';
export * from './action.ts';
export * from './batch.ts';
export * from './live.ts';
