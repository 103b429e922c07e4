import RAPIER from '@dimforge/rapier3d-deterministic-compat';
import type { BatchAction, BodyPose, EpisodeStart } from '../env/types.ts';
import type { Scene } from '../scene/schema.ts';
import { TabletopCore, type TabletopEngine } from '../tabletop/env.ts';
import { fixedCameras, tabletopSpec } from '../tabletop/spec.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { binValue } from './actions.ts';
import { RobotRig } from './robot.ts';
import { decodeSimSnapshot, encodeSimSnapshot, TabletopSim, type SimSnapshot } from './sim.ts';

let rapierReady: Promise<typeof RAPIER> | null = null;
/** Rapier's WASM module, initialised once per process. */
export function loadRapier(): Promise<typeof RAPIER> {
  rapierReady ??= RAPIER.init().then(() => RAPIER);
  return rapierReady;
}

export interface TabletopEnvOptions {
  scene: Scene;
  /** A task id of the scene, e.g. "tabletop/push". */
  taskId: string;
  numEnvs: number;
  /** Cameras observed as image_<name> (default: every fixed camera). */
  cameras?: string[];
  /** false: image observations stay black (physics-only runs and benchmarks). Default true. */
  render?: boolean;
}

export async function createTabletopEnv(options: TabletopEnvOptions): Promise<TabletopEnv> {
  return new TabletopEnv(await loadRapier(), options);
}

/** The Rapier engine: one world per env, a kinematic IK arm with a force-limited two-finger gripper,
 *  tokenised Cartesian actions. Its rows are not the whole state (velocities, contacts), so exact
 *  branching carries the world's own snapshot. */
class RapierEngine implements TabletopEngine {
  readonly source = 'physics';
  readonly sims: TabletopSim[];
  /** Bin index -> value tables of the move dimensions, and grip token -> commanded opening. */
  private readonly moveTable: Float64Array;
  private readonly yawTable: Float64Array;
  private readonly gripTable: Float64Array;
  private readonly open: number;

  constructor(R: typeof RAPIER, scene: Scene, numEnvs: number) {
    const rig = new RobotRig(scene.robot);
    this.sims = Array.from({ length: numEnvs }, () => new TabletopSim(R, scene, rig));
    const c = scene.control;
    this.moveTable = Float64Array.from({ length: c.bins }, (_, t) => binValue(t, c.bins, c.maxTranslation));
    this.yawTable = Float64Array.from({ length: c.bins }, (_, t) => binValue(t, c.bins, c.maxYaw));
    this.open = scene.robot.finger.maxOpening;
    this.gripTable = Float64Array.from({ length: c.gripperBins }, (_, g) => this.open * (1 - g / (c.gripperBins - 1)));
  }

  place(slots: readonly number[], tasks: readonly TaskInstance[], starts: readonly (EpisodeStart | null)[]): void {
    slots.forEach((i, j) => {
      const start = starts[j];
      if (!start) this.sims[i].reset(tasks[j]);
      else if (start.exact) this.sims[i].restore(decodeSimSnapshot(start.exact));
      else
        throw new RangeError(
          `physics resetFrom: starts[${j}] has no exact snapshot (capture it with { exact: true }); ` +
            'a row alone leaves velocities and contacts unknown',
        );
    });
  }

  advance(slots: readonly number[], action: BatchAction): void {
    const m = this.moveTable;
    for (const i of slots)
      this.sims[i].control(
        m[action.dx[i]],
        m[action.dy[i]],
        m[action.dz[i]],
        this.yawTable[action.dyaw[i]],
        this.gripTable[action.grip[i]],
      );
  }

  state(i: number): TabletopState {
    return this.sims[i].state();
  }

  grip(i: number): number {
    return 1 - this.sims[i].grip / this.open;
  }

  joints(i: number): Float64Array {
    return this.sims[i].q;
  }

  poses(i: number, out?: BodyPose[]): BodyPose[] {
    return this.sims[i].poses(out);
  }

  exact(i: number): Uint8Array {
    return encodeSimSnapshot(this.sims[i].snapshot());
  }

  snapshot(): (SimSnapshot | null)[] {
    return this.sims.map((s) => (s.world ? s.snapshot() : null));
  }

  restore(data: unknown): void {
    (data as (SimSnapshot | null)[]).forEach((s, i) => (s ? this.sims[i].restore(s) : this.sims[i].free()));
  }

  close(): void {
    for (const sim of this.sims) sim.free();
  }
}

/** The batched Rapier tabletop: the tabletop core over the Rapier engine. */
export class TabletopEnv extends TabletopCore<RapierEngine> {
  readonly cameras: readonly string[];

  constructor(R: typeof RAPIER, options: TabletopEnvOptions) {
    const { scene, taskId, numEnvs } = options;
    if (!Number.isInteger(numEnvs) || numEnvs < 1)
      throw new RangeError(`numEnvs must be a positive integer, got ${numEnvs}`);
    const cameras = options.cameras ?? fixedCameras(scene);
    super(
      { scene, spec: tabletopSpec(scene, taskId, cameras), numEnvs, render: options.render },
      new RapierEngine(R, scene, numEnvs),
    );
    this.cameras = cameras;
  }

  /** The Rapier world of env i (for benchmarks and debugging; do not keep it across restore()). */
  world(i: number): RAPIER.World {
    this.check(i);
    return this.engine.sims[i].world!;
  }
}
