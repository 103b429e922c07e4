import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import {
  canBranch,
  ChainEnv,
  checkEnv,
  type Env,
  type FrameSink,
  hasSnapshot,
  type LiveFrame,
  LiveTap,
  randomAction,
} from '../../src/env/index.ts';

const sink = () => {
  const frames: LiveFrame[] = [];
  const s: FrameSink = { wanted: () => true, publish: (f) => frames.push(f) };
  return { s, frames };
};

describe('LiveTap', () => {
  it('offers exactly the inner env capabilities and changes no result (checkEnv passes through it)', async () => {
    const { s, frames } = sink();
    const tap = new LiveTap(new ChainEnv(3), s, 'chain');
    expect(canBranch(tap) && hasSnapshot(tap)).toBe(true);
    const ran = await checkEnv(tap, { steps: 3 });
    expect(ran).toEqual(expect.arrayContaining(['snapshot', 'branching', 'frame']));
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.every((f) => f.stream === 'chain' && f.task === 'toy/chain' && f.source === 'physics')).toBe(true);

    const plain = new ChainEnv(1);
    const bare: Env & Pick<ChainEnv, 'frame'> = {
      spec: plain.spec,
      numEnvs: 1,
      reset: (o) => plain.reset(o),
      step: (a) => plain.step(a),
      close: () => plain.close(),
      frame: (i) => plain.frame(i),
    };
    const tapped = new LiveTap(bare, s, 'bare');
    expect(canBranch(tapped) || hasSnapshot(tapped)).toBe(false);
  });

  it('reports env 0 from reset, resetFrom and step: a branch into slot 0 starts a new stream episode', async () => {
    const { s, frames } = sink();
    const env = new ChainEnv(2);
    const tap = new LiveTap(env, s, 'chain');
    await tap.reset({ seed: 1 });
    await tap.step(randomAction(env.spec, 2, new Rng(1)));
    const start = env.capture(0);
    await tap.resetFrom!([1], [start]);
    expect(frames.map((f) => f.step)).toEqual([0, 1]);
    await tap.resetFrom!([0], [start]);
    expect(frames.map((f) => f.step)).toEqual([0, 1, 0]);
    await tap.step(randomAction(env.spec, 2, new Rng(2)));
    expect(frames.at(-1)!.step).toBe(1);
  });
});
