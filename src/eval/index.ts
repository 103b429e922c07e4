// eval: the evaluation protocol: held-out physics runs of the policies a user can name (expert, random,
// a model file), Wilson intervals, paired comparisons, reports and charts. Must not import trainer or cli.
export * from './summary.ts';
export * from './report.ts';
export * from './chart.ts';
export * from './policies.ts';
export * from './run.ts';
export * from './physics-dynamics.ts';
export * from './shadow-folder.ts';
export * from './handover.ts';
export * from './wm-verdict.ts';
export * from './stages.ts';
export * from './teacher.ts';
