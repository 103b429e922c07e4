// A tap that streams env 0 of a running env to live viewers: its body poses and what it reported, each
// reset and step, only while someone watches. The env is otherwise untouched (results do not change).
import {
  type BatchAction,
  type BatchObs,
  type BodyPose,
  type Branchable,
  canBranch,
  type Env,
  type FrameSource,
  hasSnapshot,
  type ResetInfo,
  type ResetOptions,
  type Snapshottable,
  type StepOptions,
  type StepResult,
} from './types.ts';
import { inMask } from './batch.ts';

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
  /** An object left the table (the episode ended as a failure). */
  offTable?: boolean;
  /** The cameras the env renders for its policy: its image observations, image_<camera> named by the
   *  camera (absent: the env has no image observation). */
  cameras?: string[];
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

/** An env that reports env 0 of `inner` to `sink` as `stream` on every reset, resetFrom and step; it
 *  offers exactly the inner env's capabilities (snapshots, branching) and changes no result. */
export class LiveTap implements Env, FrameSource {
  readonly spec: Env['spec'];
  readonly numEnvs: number;
  readonly snapshot?: Snapshottable['snapshot'];
  readonly restore?: Snapshottable['restore'];
  readonly capture?: Branchable['capture'];
  readonly resetFrom?: Branchable['resetFrom'];
  private step0 = 0;
  private instruction = '';
  private lastYield = 0;
  private readonly cameras: string[];

  constructor(
    private readonly inner: Tappable,
    private readonly sink: FrameSink,
    private readonly stream: string,
  ) {
    this.spec = inner.spec;
    this.numEnvs = inner.numEnvs;
    this.cameras = inner.spec.observation.filter((e) => e.kind === 'image').map((e) => e.name.replace(/^image_/, ''));
    if (hasSnapshot(inner)) {
      this.snapshot = () => inner.snapshot();
      this.restore = (s) => inner.restore(s);
    }
    if (canBranch(inner)) {
      this.capture = (slot, options) => inner.capture(slot, options);
      this.resetFrom = async (slots, starts) => {
        const out = await inner.resetFrom(slots, starts);
        if (slots.includes(0)) this.started(out.info);
        return out;
      };
    }
  }

  async reset(options?: ResetOptions): Promise<{ obs: BatchObs; info: ResetInfo }> {
    const out = await this.inner.reset(options);
    if (inMask(options?.mask, 0)) this.started(out.info);
    return out;
  }

  async step(action: BatchAction, options: StepOptions = {}): Promise<StepResult> {
    const r = await this.inner.step(action, options);
    if (inMask(options.mask, 0)) this.stepped(r);
    if (Date.now() - this.lastYield >= YIELD_EVERY_MS) {
      await yieldToEventLoop();
      this.lastYield = Date.now();
    }
    return r;
  }

  frame(index?: number): BodyPose[] {
    return this.inner.frame(index);
  }

  close(): void {
    this.inner.close();
  }

  private base() {
    return {
      stream: this.stream,
      task: this.spec.id,
      instruction: this.instruction,
      bodies: this.inner.frame(0),
      ...(this.cameras.length && { cameras: this.cameras }),
    };
  }

  private started(info: ResetInfo): void {
    this.step0 = 0;
    this.instruction = info.instruction?.[0] ?? '';
    if (this.sink.wanted(this.stream, true))
      this.sink.publish({
        ...this.base(),
        source: sourceOf(info.source),
        step: 0,
        reward: 0,
        progress: 0,
        success: false,
        done: false,
        terms: {},
      });
  }

  private stepped(r: StepResult): void {
    this.step0++;
    const done = r.terminated[0] === 1 || r.truncated[0] === 1;
    if (!this.sink.wanted(this.stream, done)) return;
    const terms = Object.fromEntries(Object.entries(r.info.terms).map(([k, v]) => [k, v[0]]));
    const offTable = r.info.offTable?.[0] === 1;
    this.sink.publish({
      ...this.base(),
      source: sourceOf(r.info.source),
      step: this.step0,
      reward: r.reward[0],
      progress: r.info.progress[0],
      success: r.info.success[0] === 1,
      done,
      terms,
      ...(offTable && { offTable }),
    });
  }
}

const sourceOf = (s: string): LiveFrame['source'] => (s === 'world-model' ? 'world-model' : 'physics');

/** `env` streaming env 0 to `sink` as `stream` (see LiveTap). */
export function tapFrames(env: Tappable, sink: FrameSink, stream: string): LiveTap {
  return new LiveTap(env, sink, stream);
}
