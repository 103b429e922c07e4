import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/trainer/index.ts';

describe('resolveConfig', () => {
  it('the default preset turns environment evolution on; smoke and the schema leave it off', () => {
    expect(resolveConfig('default').evolution.enabled).toBe(true);
    expect(resolveConfig('smoke').evolution.enabled).toBe(false);
  });

  it('layers merge nested objects field by field (a file changing one field keeps the preset’s others)', () => {
    const cfg = resolveConfig('default', { evolution: { window: 16 } }, { debias: { warmup: 8 } });
    expect(cfg.evolution).toMatchObject({ enabled: true, window: 16 });
    expect(cfg.debias.warmup).toBe(8);
    expect(resolveConfig('default', { evolution: { enabled: false } }).evolution.enabled).toBe(false);
    expect(resolveConfig('default', { evolution: { levels: [0.5, 1] } }).evolution.levels).toEqual([0.5, 1]);
  });
});
