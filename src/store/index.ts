// store: run state on disk — one commit for a multi-part state (redo journal + recovery), output locks,
// output-path checks, the resumable-run helper (checkpoint commit, resume check, metrics, stop flag).
// Node-only. Must not import anything in src except core.
export * from './commit.ts';
export * from './lock.ts';
export * from './paths.ts';
export * from './run.ts';
export * from './code-version.ts';
