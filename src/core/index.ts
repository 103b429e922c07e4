// core: typed arrays, zod specs, seeded RNG and deterministic math shared by every other folder.
// Must not import anything else in src.
export * from './rng.ts';
export * from './dmath.ts';
export * from './spec.ts';
export * from './stats.ts';
export * from './hash.ts';
export * from './errors.ts';
