// worldmodel: learned dynamics, WorldModelEnv, shadow mode, the resumable training run (trainWorldModel).
// Must not import physics (specs arrive as data) or trainer. Browser-safe (what the viewer runs): env, dynamics,
// features, robot-pose, model-bytes; *-file.ts, dataset, trainer, refresh, train-run are Node-only.
export * from './features.ts';
export * from './dynamics.ts';
export * from './robot-pose.ts';
export * from './env.ts';
export * from './dataset.ts';
export * from './trainer.ts';
export * from './evaluate.ts';
export * from './model-file.ts';
export * from './shadow.ts';
export * from './plot.ts';
export * from './loss.ts';
export * from './refresh.ts';
export * from './checkpoint-file.ts';
export * from './branching.ts';
export * from './train-run.ts';
export * from './verdict.ts';
export * from './verdict-misses.ts';
