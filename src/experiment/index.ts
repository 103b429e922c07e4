// experiment: the tabletop and AutoResearch wired to the trainer, the main job, and the studies over
// trainer runs: one study core (study*.ts) and four configurations of it (speedup, corrections, research
// speedup, research study); tabletop runs are `wmrl train` child processes on purpose, for isolation.
// Must not import server, protocol or cli.
export * from './tabletop.ts';
export * from './speedup.ts';
export * from './speedup-report.ts';
export * from './main-job.ts';
export * from './research.ts';
export * from './research-speedup.ts';
export * from './research-speedup-report.ts';
export * from './research-runner.ts';
export * from './remote.ts';
export * from './registry.ts';
export * from './brew.ts';
export * from './ablation.ts';
export * from './corrections.ts';
export * from './corrections-report.ts';
export * from './research-study.ts';
export * from './research-study-report.ts';
export * from './study.ts';
export * from './study-cache.ts';
export * from './study-child.ts';
export * from './study-report.ts';
export * from './study-speedup.ts';
export * from './study-stats.ts';
