// demos: scripted-expert demonstrations for behaviour cloning (noisy execution, DART labels,
// counterfactual instructions), their folder format, re-simulation into a BC dataset, and the resumable
// BC pretraining run (pretrain). Must not import worldmodel, trainer or cli.
export * from './demos.ts';
export * from './folder.ts';
export * from './pretrain.ts';
export * from './labels.ts';
export * from './dagger.ts';
export * from './select.ts';
