// task: task families, instruction sampling, verifiers and the process score on plain TabletopState.
// Browser-safe and engine-free so physics, world model and viewer share one verifier;
// must not import rapier, three, nn.
export * from './types.ts';
export * from './families.ts';
export * from './sample.ts';
export * from './verify.ts';
export * from './geometry.ts';
export * from './state.ts';
export * from './instructions.ts';
export * from './wordings.ts';
export * from './difficulty.ts';
