import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/trainer/index.ts';

describe('resolveConfig', () => {
  it('the default preset turns frontier starts on (moved by world-model groups too); smoke and the schema leave them off', () => {
    const cfg = resolveConfig('default');
    expect(cfg.frontier).toMatchObject({ enabled: true, worldModel: true });
    expect(cfg.branchShare).toBe(0.5);
    expect(cfg.evolution.enabled).toBe(false);
    expect(resolveConfig('smoke').frontier.enabled).toBe(false);
    expect(resolveConfig('smoke').evolution.enabled).toBe(false);
  });

  it('layers merge nested objects field by field (a file changing one field keeps the preset’s others)', () => {
    const cfg = resolveConfig('default', { frontier: { window: 8 } }, { debias: { warmup: 8 } });
    expect(cfg.frontier).toMatchObject({ enabled: true, worldModel: true, window: 8 });
    expect(cfg.debias.warmup).toBe(8);
    expect(resolveConfig('default', { frontier: { enabled: false } }).frontier.enabled).toBe(false);
    expect(resolveConfig('default', { frontier: { band: [0.1, 0.5] } }).frontier.band).toEqual([0.1, 0.5]);
  });
});
