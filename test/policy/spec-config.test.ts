import { describe, expect, it } from 'vitest';
import { EnvSpecSchema, type EnvSpec } from '../../src/core/spec.ts';
import { VLA_SIZES_TINY, specInterfaceHash, vlaConfigFromSpec } from '../../src/policy/spec-config.ts';
import { TOKENIZER } from './fixtures.ts';

const spec: EnvSpec = EnvSpecSchema.parse({
  id: 'tabletop/push',
  observation: [
    { kind: 'image', name: 'image_front', shape: [64, 64, 3] },
    { kind: 'image', name: 'image_wrist', shape: [64, 64, 3] },
    { kind: 'box', name: 'proprio', shape: [7], low: -2, high: 2 },
    { kind: 'text', name: 'instruction', maxLength: 96 },
  ],
  action: [
    { kind: 'discrete', name: 'dx', n: 11, low: -0.02, high: 0.02 },
    { kind: 'discrete', name: 'grip', n: 2, low: 0, high: 1 },
  ],
  maxEpisodeSteps: 80,
  rewardTerms: ['success'],
});

describe('vlaConfigFromSpec', () => {
  it('takes cameras, proprio, instruction and action heads from the spec entries', () => {
    const c = vlaConfigFromSpec(spec, TOKENIZER.config, VLA_SIZES_TINY);
    expect(c.cameras).toEqual(['image_front', 'image_wrist']);
    expect(c.proprio).toEqual({ name: 'proprio', dim: 7, hidden: VLA_SIZES_TINY.proprioHidden });
    expect(c.actions).toEqual([
      { name: 'dx', n: 11 },
      { name: 'grip', n: 2 },
    ]);
    expect(c.instruction).toBe('instruction');
  });

  it('names what it cannot handle', () => {
    const boxAction = { ...spec, action: [{ kind: 'box' as const, name: 'move', shape: [3], low: -1, high: 1 }] };
    expect(() => vlaConfigFromSpec(boxAction, TOKENIZER.config, VLA_SIZES_TINY)).toThrow(
      /action "move" is not discrete/,
    );
    const odd = {
      ...spec,
      observation: [
        ...spec.observation.slice(0, 1),
        { kind: 'image' as const, name: 'image_wrist', shape: [32, 32, 3] as [number, number, 3] },
        ...spec.observation.slice(2),
      ],
    };
    expect(() => vlaConfigFromSpec(odd, TOKENIZER.config, VLA_SIZES_TINY)).toThrow(/"image_wrist" is 32x32/);
  });

  it('hashes only the observation/action interface', () => {
    expect(specInterfaceHash({ ...spec, id: 'tabletop/stack', maxEpisodeSteps: 5 })).toBe(specInterfaceHash(spec));
    expect(specInterfaceHash({ ...spec, action: spec.action.slice(0, 1) })).not.toBe(specInterfaceHash(spec));
  });
});
