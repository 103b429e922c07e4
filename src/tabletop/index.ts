// tabletop: the episode core every tabletop engine shares (spec, tasks from seeds, observations, verifier
// reward, termination, branching, snapshots); engines supply only the next state. Browser-safe; must not
// import physics, worldmodel, nn, policy or trainer.
export * from './spec.ts';
export * from './env.ts';
