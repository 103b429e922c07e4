// The timeline: a track of frames (physics, optionally the world model's and per-step images), played at
// the control rate or scrubbed by hand.
import type { Frame, Replay } from '../../src/protocol/index.ts';

export interface Track {
  physics: Frame[];
  worldModel?: Frame[];
  divergence?: Replay['divergence'];
  /** Per step, every camera the policy reads as it saw it (in-page runs). */
  images?: PolicyView[][];
  /** The scene cameras the track's policy reads (a replay's run policy); frames may name their own. */
  cameras?: string[];
}

/** One camera image as the policy saw it. */
export interface PolicyView {
  camera: string;
  data: Uint8Array;
  width: number;
  height: number;
}

const STEP_MS = 100;

export class Player {
  private track: Track = { physics: [] };
  private t = 0;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly draw: (track: Track, t: number) => void) {}

  get paused(): boolean {
    return this.timer === null;
  }

  get length(): number {
    return Math.max(this.track.physics.length, this.track.worldModel?.length ?? 0);
  }

  setTrack(track: Track, t = 0): void {
    this.track = track;
    this.seek(t);
  }

  seek(t: number): void {
    this.t = Math.max(0, Math.min(t, this.length - 1));
    const scrub = document.getElementById('scrub') as HTMLInputElement;
    scrub.max = String(Math.max(0, this.length - 1));
    scrub.value = String(this.t);
    if (this.length) this.draw(this.track, this.t);
  }

  redraw(): void {
    this.seek(this.t);
  }

  play(): void {
    this.stop();
    if (this.t >= this.length - 1) this.t = 0;
    document.getElementById('play')!.textContent = '❚❚';
    this.timer = setInterval(() => {
      if (this.t >= this.length - 1) return this.stop();
      this.seek(this.t + 1);
    }, STEP_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    document.getElementById('play')!.textContent = '▶';
  }
}
