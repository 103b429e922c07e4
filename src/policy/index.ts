// policy: VLA and AutoResearch agent networks, sampling, action tokens. Must not import concrete envs or trainer.
// Browser-safe: everything but the Node-only (fs) model.ts and bc-checkpoint.ts; sampler runs on any ORT binding.
export * from './tokenizer.ts';
export * from './vla.ts';
export * from './sampler.ts';
export * from './model-bytes.ts';
export * from './model.ts';
export * from './spec-config.ts';
export * from './presets.ts';
