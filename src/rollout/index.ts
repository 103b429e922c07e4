// rollout: episode collection with any policy on a batched Env, episode folders on disk, and policies
// defined by the spec alone (random, token noise). Must not import concrete envs.
export * from './collect.ts';
export * from './episode-file.ts';
export * from './policies.ts';
