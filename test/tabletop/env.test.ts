import { describe, expect, it } from 'vitest';
import { checkEnv } from '../../src/env/check.ts';
import type { BatchAction, BodyPose, EpisodeStart } from '../../src/env/types.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../../src/scene/load-file.ts';
import { fixedCameras, TabletopCore, tabletopSpec, type TabletopEngine } from '../../src/tabletop/index.ts';
import { stateSize, unpackState } from '../../src/task/state.ts';
import type { TabletopState, TaskInstance } from '../../src/task/types.ts';
import { offTable } from '../../src/task/verify.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const spec = tabletopSpec(scene, 'tabletop/push', fixedCameras(scene));

/** A third engine in a few lines: the task's object slides by the commanded dx, dy (no arm motion). */
class SlideEngine implements TabletopEngine {
  readonly source = 'physics';
  private states: TabletopState[] = [];
  private tasks: TaskInstance[] = [];
  place(slots: readonly number[], tasks: readonly TaskInstance[], starts: readonly (EpisodeStart | null)[]): void {
    slots.forEach((i, j) => {
      const t = tasks[j];
      this.tasks[i] = t;
      const start = starts[j];
      this.states[i] = start
        ? unpackState(start.row, scene.objects.length)
        : {
            eePos: [...t.initEe],
            eeYaw: 0,
            fingers: [0.04, 0.04],
            objects: t.initObjects.map((o) => ({ pos: [...o.pos], quat: [0, 0, 0, 1], linVel: [0, 0, 0] })),
          };
    });
  }
  advance(slots: readonly number[], action: BatchAction): void {
    for (const i of slots) {
      const o = this.states[i].objects[this.tasks[i].object];
      o.pos[0] += (action.dx[i] - 5) * 0.05;
      o.pos[1] += (action.dy[i] - 5) * 0.05;
    }
  }
  state(i: number) {
    return this.states[i];
  }
  grip() {
    return 0;
  }
  joints() {
    return new Float64Array(6);
  }
  poses(i: number): BodyPose[] {
    return this.states[i].objects.map((o, k) => ({ name: scene.objects[k].name, pos: [...o.pos], quat: [...o.quat] }));
  }
  snapshot() {
    return { states: structuredClone(this.states), tasks: this.tasks.slice() };
  }
  restore(d: unknown) {
    const s = d as ReturnType<SlideEngine['snapshot']>;
    this.states = structuredClone(s.states);
    this.tasks = s.tasks.slice();
  }
  close() {}
}

const still = (n: number, dx = 5): BatchAction => ({
  dx: new Int32Array(n).fill(dx),
  dy: new Int32Array(n).fill(5),
  dz: new Int32Array(n).fill(5),
  dyaw: new Int32Array(n).fill(5),
  grip: new Int32Array(n),
});

describe('the tabletop core', () => {
  it('runs any engine that makes the next state, under the whole Env contract', async () => {
    const env = new TabletopCore({ scene, spec, numEnvs: 3, render: false }, new SlideEngine());
    const ran = await checkEnv(env, { steps: 3 });
    expect(ran).toEqual(
      expect.arrayContaining([
        'spec',
        'shapes',
        'seed-determinism',
        'mask-reset',
        'mask-step',
        'snapshot',
        'branching',
        'frame',
      ]),
    );
  });

  it('ends an episode as a failure when an object leaves the table (info.offTable), then freezes it', async () => {
    const env = new TabletopCore({ scene, spec, numEnvs: 2, render: false }, new SlideEngine());
    await env.reset({ seed: 5 });
    const steps: number[] = [];
    for (let t = 1; t <= 30; t++) {
      const r = await env.step(still(2, 10)); // +0.25 m in x per step: past the table edge within a few steps
      expect(r.info.offTable).toBeInstanceOf(Uint8Array);
      if (r.info.offTable![0]) {
        steps.push(t);
        expect([r.terminated[0], r.truncated[0], r.info.success[0], r.reward[0]]).toEqual([1, 0, 0, 0]);
      }
    }
    expect(steps.length).toBe(30 - steps[0] + 1); // reported on every later step (frozen) ...
    expect(env.elapsed(0)).toBe(steps[0]); // ... which took no more steps
    expect(offTable(scene, env.state(0))).toBe(true);
  });

  it('resetFrom checks its starts, naming the start and the field', async () => {
    const env = new TabletopCore({ scene, spec, numEnvs: 2, render: false }, new SlideEngine());
    await env.reset({ seed: 1 });
    const start = env.capture(0);
    expect(start.row.length).toBe(stateSize(scene.objects.length) + 7);
    await expect(env.resetFrom([0, 0], [start, start])).rejects.toThrow(/slots\[1\] = 0 is not a distinct env index/);
    await expect(env.resetFrom([1], [{ ...start, row: [1, 2] }])).rejects.toThrow(/starts\[0\]\.row has 2 values/);
    await expect(env.resetFrom([1], [{ ...start, seed: 0.5 }])).rejects.toThrow(/starts\[0\]\.seed must be an integer/);
    await expect(env.resetFrom([2], [start])).rejects.toThrow(/slots\[0\] = 2/);
  });

  it('asks the engine only for the slots in the step mask, which need not have been reset', async () => {
    const engine = new SlideEngine();
    const advanced: number[][] = [];
    const advance = engine.advance.bind(engine);
    engine.advance = (slots, action) => {
      advanced.push([...slots]);
      advance(slots, action);
    };
    const env = new TabletopCore({ scene, spec, numEnvs: 4, render: false }, engine);
    await env.reset({ seed: 3, mask: [1, 0, 1, 0] });
    await expect(env.step(still(4))).rejects.toThrow(/step\(\) before env 1 was reset/);
    const r = await env.step(still(4, 7), { mask: [1, 0, 0, 0] });
    await env.step(still(4, 7), { mask: [0, 0, 1, 0] });
    expect(advanced).toEqual([[0], [2]]);
    expect([env.elapsed(0), env.elapsed(2)]).toEqual([1, 1]);
    expect(Array.from(r.reward)).toEqual([0, 0, 0, 0]);
  });
});
