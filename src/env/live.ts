// A tap that streams env 0 of a running env to live viewers: its body poses and what it reported, each
// reset and step, only while someone watches. The env is otherwise untouched (results do not change).
import type { BatchAction, BodyPose, Env, FrameSource, ResetInfo, StepResult } from './types.ts';

/** One step of one stream (the viewer protocol's Frame). */
export interface LiveFrame {
  stream: string;
  task: string;
  source: 'physics' | 'world-model';
  step: number;
  instruction: string;
  bodies: BodyPose[];
  reward: number;
  progress: number;
  success: boolean;
  done: boolean;
  terms: Record<string, number>;
}

export interface FrameSink {
  /** Whether a frame of `stream` would be sent now; `boundary` marks an episode's first or last frame. */
  wanted(stream: string, boundary?: boolean): boolean;
  publish(frame: LiveFrame): void;
}

type Tappable = Env & FrameSource;

/** A tapped step yields to the event loop at least this often (ms): an env whose steps never wait
 *  (physics with a scripted policy) would otherwise starve the server's sockets. */
export const YIELD_EVERY_MS = 20;
const yieldToEventLoop = () => new Promise<void>((done) => (globalThis.setImmediate ?? setTimeout)(done));

/** `env` with reset, resetFrom (branching) and step reporting env 0 to `sink` as `stream`. Every other
 *  property is the env's own, so the tapped env behaves exactly like the env. */
export function tapFrames<E extends Tappable>(env: E, sink: FrameSink, stream: string): E {
  let step = 0;
  let instruction = '';
  let lastYield = 0;
  const source = (s: string): LiveFrame['source'] => (s === 'world-model' ? 'world-model' : 'physics');
  const base = () => ({ stream, task: env.spec.id, instruction, bodies: env.frame(0) });
  const started = (info: ResetInfo | undefined, mask?: ArrayLike<boolean | number> | null) => {
    if (mask && !mask[0]) return;
    step = 0;
    instruction = info?.instruction?.[0] ?? '';
    if (info && sink.wanted(stream, true)) sink.publish({ ...base(), source: source(info.source), step, reward: 0, progress: 0, success: false, done: false, terms: {} });
  };
  const stepped = (r: StepResult) => {
    step++;
    const done = r.terminated[0] === 1 || r.truncated[0] === 1;
    if (!sink.wanted(stream, done)) return;
    const terms = Object.fromEntries(Object.entries(r.info.terms).map(([k, v]) => [k, v[0]]));
    sink.publish({ ...base(), source: source(r.info.source), step, reward: r.reward[0], progress: r.info.progress[0], success: r.info.success[0] === 1, done, terms });
  };
  const wrapped: Record<string | symbol, unknown> = {
    reset: async (options?: Parameters<Env['reset']>[0]) => {
      const out = await env.reset(options);
      started(out.info, options?.mask);
      return out;
    },
    step: async (action: BatchAction) => {
      const r = await env.step(action);
      stepped(r);
      if (Date.now() - lastYield >= YIELD_EVERY_MS) {
        await yieldToEventLoop();
        lastYield = Date.now();
      }
      return r;
    },
  };
  const resetFrom = (env as { resetFrom?: (starts: readonly unknown[]) => Promise<{ info?: ResetInfo }> }).resetFrom;
  if (resetFrom) {
    wrapped.resetFrom = async (starts: readonly unknown[]) => {
      const out = await resetFrom.call(env, starts);
      started(out?.info, starts.map((s) => s !== null));
      return out;
    };
  }
  return new Proxy(env, {
    get(target, key) {
      if (key in wrapped) return wrapped[key];
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
