// autoresearch: tasks on real tabular data, the proposal DSL, the trusted runner, the sandboxed executor,
// the AutoResearch env and its outcome world model. Must not import physics, worldmodel or trainer.
export * from './dsl.ts';
export * from './tasks.ts';
export * from './data-file.ts';
export * from './executor.ts';
export * from './proposal.ts';
export * from './env.ts';
export * from './outcome-model.ts';
export * from './online.ts';
export * from './leaderboard.ts';
export * from './row.ts';
