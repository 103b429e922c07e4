import { describe, expect, it } from 'vitest';
import {
  EpisodeRequestSchema,
  FrameBatchSchema,
  FrameSchema,
  HandshakeSchema,
  ReplaySchema,
  RunRequestSchema,
  isRunId,
  okReply,
} from '../../src/protocol/index.ts';
import { z } from 'zod';

const frame = {
  stream: 'push physics 1',
  task: 'tabletop/push',
  source: 'physics',
  step: 3,
  instruction: 'push the red cube to the orange zone',
  bodies: [{ name: 'red_cube', pos: [0.1, 0.2, 0.02], quat: [0, 0, 0, 1] }],
  reward: 0,
  progress: 0.4,
  success: false,
  done: false,
  terms: { success: 0 },
};

describe('protocol payloads', () => {
  it('a frame, a batch and a replay survive a JSON round trip unchanged', () => {
    const batch = { frames: [frame, { ...frame, step: 4 }], dropped: 2 };
    expect(FrameBatchSchema.parse(JSON.parse(JSON.stringify(batch)))).toEqual(batch);
    const replay = {
      run: 'speedup/wmrl-seed1',
      episode: {
        index: 0,
        task: 'tabletop/push',
        seed: 5,
        policy: 'expert',
        instruction: 'x',
        length: 1,
        success: true,
        return: 1,
      },
      physics: [frame],
      worldModel: [frame],
      divergence: { tcp_m: [0], objects_m: [0] },
    };
    expect(ReplaySchema.parse(JSON.parse(JSON.stringify(replay)))).toEqual(replay);
  });

  it('rejects frames with a wrong field, naming it', () => {
    const bad = FrameSchema.safeParse({ ...frame, bodies: [{ name: 'red_cube', pos: [0, 0], quat: [0, 0, 0, 1] }] });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0].path).toEqual(['bodies', 0, 'pos']);
    expect(FrameSchema.safeParse({ ...frame, source: 'mp4' }).success).toBe(false);
    expect(FrameSchema.safeParse({ ...frame, reward: Number.NaN }).success).toBe(false);
  });

  it('run ids are relative paths inside the run folder', () => {
    for (const ok of ['.', 'speedup', 'speedup/wmrl-seed1', 'a.b/c-d']) expect(isRunId(ok), ok).toBe(true);
    for (const bad of ['', '..', '../x', 'a/../../b', '/etc', 'a//b', 'a/./b', 'a\\b']) {
      expect(isRunId(bad), bad).toBe(false);
      expect(RunRequestSchema.safeParse({ run: bad }).success, bad).toBe(false);
    }
    expect(EpisodeRequestSchema.safeParse({ run: 'x', index: -1 }).success).toBe(false);
  });

  it('handshake and replies', () => {
    expect(HandshakeSchema.safeParse({ protocol: 1 }).success).toBe(true);
    expect(HandshakeSchema.safeParse({ protocol: '1' }).success).toBe(false);
    const reply = okReply(z.array(z.string()));
    expect(reply.parse({ ok: true, data: ['a'] })).toEqual({ ok: true, data: ['a'] });
    expect(reply.parse({ ok: false, error: 'no' })).toEqual({ ok: false, error: 'no' });
    expect(reply.safeParse({ ok: true, data: [1] }).success).toBe(false);
  });
});
