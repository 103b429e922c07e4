// rollout: collection, trajectories, groups, advantages. Must not import concrete envs.
export * from './collect.ts';
export * from './episode-file.ts';
export * from './policies.ts';
