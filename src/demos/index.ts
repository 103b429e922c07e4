// demos: scripted-expert labels for behaviour cloning (DART demonstrations, counterfactual instructions,
// expert-corrected DAgger rounds), their folder format, re-simulation into rows on disk, and the resumable
// BC pretraining run with validation selection (pretrain). Must not import worldmodel, trainer or cli.
export * from './demos.ts';
export * from './folder.ts';
export * from './pretrain.ts';
export * from './labels.ts';
export * from './dagger.ts';
export * from './select.ts';
