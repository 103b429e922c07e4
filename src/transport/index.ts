// transport: rollout groups off the trainer's thread. Helper threads on this machine (rollouts split by
// key, and data-parallel update slices) and jobs on BullMQ + Redis (docs/scale-out.md): the trainer's
// side, the worker's side, the exact codec and the Redis URL rules. Must not import the engines,
// experiment or cli.
export * from './codec.ts';
export * from './redis.ts';
export * from './queue.ts';
export * from './worker.ts';
export * from './build.ts';
export * from './thread.ts';
export * from './thread-serve.ts';
