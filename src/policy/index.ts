// policy: VLA and AutoResearch agent networks, sampling, action tokens. Must not import concrete envs or trainer.
// Browser-safe: tokenizer, vla. Node-only: sampler (onnxruntime-node), model (fs).
export * from './tokenizer.ts';
export * from './vla.ts';
export * from './sampler.ts';
export * from './model.ts';
export * from './spec-config.ts';
export * from './presets.ts';
