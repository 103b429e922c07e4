// trainer: the WMRL loop, anchor and world-model groups (branching, grading), group advantages, debias,
// denoise, start selection, environment evolution, AgentBrew, the repeat penalty, losses, checkpoints,
// the transport contract. Must not import physics,
// worldmodel, autoresearch.
export * from './debias.ts';
export * from './denoise.ts';
export * from './calibrate.ts';
export * from './advantages.ts';
export * from './loss.ts';
export * from './policy-trainer.ts';
export * from './config.ts';
export * from './rollouts.ts';
export * from './types.ts';
export * from './loop.ts';
export * from './measure.ts';
export * from './refresh-state.ts';
export * from './starts.ts';
export * from './hybrid.ts';
export * from './evolution.ts';
export * from './agentbrew.ts';
export * from './repeat.ts';
export * from './samples.ts';
export * from './transport.ts';
