// scene: the zod scene schema, the loader with path-naming errors, and body geometry. Browser-safe:
// must not import rapier, three, Node-only modules (the Node file loader lives in load-file.ts).
export * from './schema.ts';
export * from './bodies.ts';
export * from './load.ts';
