import { describe, expect, it } from 'vitest';
import type { Frame, FrameBatch } from '../../src/protocol/index.ts';
import { LiveHub, MAX_FPS, QUEUE_LIMIT } from '../../src/server/index.ts';

const frame = (stream: string, step: number): Frame => ({
  stream,
  task: 't',
  source: 'physics',
  step,
  instruction: '',
  bodies: [],
  reward: 0,
  progress: 0,
  success: false,
  done: false,
  terms: {},
});

/** A client that holds each batch until release() is called (a slow browser). */
function slowClient() {
  const batches: FrameBatch[] = [];
  let pending: (() => void) | null = null;
  return {
    batches,
    send(batch: FrameBatch, done: () => void) {
      batches.push(batch);
      pending = done;
    },
    release() {
      const p = pending;
      pending = null;
      p?.();
    },
  };
}

describe('LiveHub backpressure', () => {
  it('one batch in flight per client; a slow client gets the newest frames and a count of the dropped ones', () => {
    const hub = new LiveHub();
    const slow = slowClient();
    hub.subscribe(slow);
    for (let t = 0; t < 100; t++) hub.publish(frame('a', t)); // publish never waits for the client
    expect(slow.batches).toHaveLength(1);
    expect(slow.batches[0].frames.map((f) => f.step)).toEqual([0]);
    slow.release();
    expect(slow.batches).toHaveLength(2);
    const second = slow.batches[1];
    expect(second.frames).toHaveLength(QUEUE_LIMIT);
    expect(second.frames.at(-1)!.step).toBe(99);
    expect(second.dropped).toBe(99 - QUEUE_LIMIT);
    slow.release();
    expect(slow.batches).toHaveLength(2); // nothing left to send
  });

  it('a fast client gets every frame; a subscription to one stream gets only that stream', () => {
    const hub = new LiveHub();
    const got: Frame[] = [];
    const only: Frame[] = [];
    hub.subscribe({
      send: (b, done) => {
        got.push(...b.frames);
        done();
      },
    });
    hub.subscribe(
      {
        send: (b, done) => {
          only.push(...b.frames);
          done();
        },
      },
      'b',
    );
    for (let t = 0; t < 50; t++) hub.publish(frame(t % 2 ? 'a' : 'b', t));
    expect(got.map((f) => f.step)).toEqual([...Array(50).keys()]);
    expect(only.every((f) => f.stream === 'b')).toBe(true);
    expect(only).toHaveLength(25);
    expect(hub.streams.sort()).toEqual(['a', 'b']);
  });

  it('a watched stream is wanted at most MAX_FPS times a second, its episode boundaries always', () => {
    const hub = new LiveHub();
    hub.subscribe({ send: (_b, done) => done() });
    hub.publish(frame('a', 0));
    expect(hub.wanted('a')).toBe(false); // just sent
    expect(hub.wanted('a', true)).toBe(true);
    expect(MAX_FPS).toBeLessThanOrEqual(60);
  });

  it('nobody watching: wanted() is false once a stream is known, so producers skip building frames', () => {
    const hub = new LiveHub();
    expect(hub.wanted('a')).toBe(true);
    hub.publish(frame('a', 0));
    expect(hub.wanted('a')).toBe(false);
    const c = { send: (_b: FrameBatch, done: () => void) => done() };
    hub.subscribe(c, 'a');
    expect(hub.wanted('a', true)).toBe(true);
    hub.unsubscribe(c);
    expect(hub.wanted('a')).toBe(false);
  });
});
