// experiment: the tabletop and AutoResearch wired to the trainer, and experiments over trainer runs (the
// speedup experiment, whose runs are `wmrl train` child processes on purpose, for isolation; the main job).
// Must not import server, protocol or cli.
export * from './tabletop.ts';
export * from './speedup.ts';
export * from './speedup-report.ts';
export * from './main-job.ts';
export * from './research.ts';
export * from './research-speedup.ts';
export * from './remote.ts';
export * from './registry.ts';
export * from './brew.ts';
export * from './ablation.ts';
export * from './corrections.ts';
export * from './corrections-report.ts';
export * from './research-study.ts';
export * from './research-study-report.ts';
