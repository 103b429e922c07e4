// demos: scripted-expert demonstrations for behaviour cloning (noisy execution, DART labels,
// counterfactual instructions), their folder format, and re-simulation into a BC dataset.
// Must not import worldmodel, trainer or cli.
export * from './demos.ts';
export * from './folder.ts';
export * from './pretrain.ts';
