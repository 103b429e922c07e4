import { describe, expect, it } from 'vitest';
import { assertResetEnv, copyBatchObs, instructionsOf } from '../../src/env/batch.ts';

describe('batched-env helpers', () => {
  it('copies image and proprio buffers so later writes do not reach returned observations', () => {
    const img = new Uint8Array([1, 2, 3]);
    const proprio = new Float32Array([0.5]);
    const obs = copyBatchObs([['image_front', img]], proprio, [{ instruction: 'push it' }, null]);
    img[0] = 9;
    proprio[0] = 7;
    expect(Array.from(obs.image_front as Uint8Array)).toEqual([1, 2, 3]);
    expect(Array.from(obs.proprio as Float32Array)).toEqual([0.5]);
    expect(obs.instruction).toEqual(['push it', '']);
    expect(instructionsOf([null])).toEqual(['']);
  });

  it('names the bad index and the env that was never reset', () => {
    expect(() => assertResetEnv('tabletop/push', 2, 2, {})).toThrow(/env index 2 is outside \[0, 2\)/);
    expect(() => assertResetEnv('tabletop/push', 2, 1.5, {})).toThrow(/env index 1.5/);
    expect(() => assertResetEnv('tabletop/push', 2, 1, null)).toThrow('tabletop/push: env 1 has not been reset');
    expect(() => assertResetEnv('tabletop/push', 2, 1, {})).not.toThrow();
  });
});
