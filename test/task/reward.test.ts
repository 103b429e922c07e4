// The trajectory reward's rules on verifier states: finishing pays clearly more than any failure, a cube
// let go over its target keeps what holding it there scored, a drop from height earns nothing, and a
// push's back-off keeps the score. (test/worldmodel/reward.test.ts checks both engines report it.)
import { describe, expect, it } from 'vitest';
import type { Vec3 } from '../../src/scene/schema.ts';
import { scoreTask, type TaskInstance, taskReward, TOL } from '../../src/task/index.ts';
import { H, makeState, makeTask, objIndex, OPEN, scene, tiltX } from './helpers.ts';

const red = objIndex('red_cube');
const green = objIndex('green_cube');
const zone = scene.zones[0];
const bin = scene.bins[0];
const reward = (task: TaskInstance, spec: Parameters<typeof makeState>[1]) =>
  taskReward(scoreTask(scene, task, makeState(task, spec)).progress);

const tasks = {
  pick_place: makeTask('tabletop/pick-place', 'red_cube', { kind: 'zone', name: zone.name }),
  stack: makeTask('tabletop/stack', 'red_cube', { kind: 'object', name: 'green_cube' }),
  put_in_bin: makeTask('tabletop/put-in-bin', 'red_cube', { kind: 'bin', name: bin.name }),
};
/** Where the cube rests when the task is done. */
function goal(task: TaskInstance): Vec3 {
  if (task.target.kind === 'zone') return [zone.centre[0], zone.centre[1], H];
  if (task.target.kind === 'bin') return [bin.centre[0], bin.centre[1], H + 0.001];
  const g = task.initObjects[green].pos;
  return [g[0], g[1], g[2] + 2 * H];
}
const up = (p: Vec3, dz: number): Vec3 => [p[0], p[1], p[2] + dz];
const held = (p: Vec3) => ({ ee: p, fingers: [H, H] as [number, number], objs: { [red]: { pos: p } } });
const free = (p: Vec3, extra: object = {}) => ({
  ee: up(p, 0.08),
  fingers: [OPEN, OPEN] as [number, number],
  objs: { [red]: { pos: p, ...extra } },
});

describe('taskReward', () => {
  it('is 1 on success and Φ/2 below it', () => {
    expect(taskReward(1)).toBe(1);
    expect(taskReward(0.8)).toBe(0.4);
    expect(taskReward(0)).toBe(0);
  });

  for (const [family, task] of Object.entries(tasks)) {
    describe(family, () => {
      const g = goal(task);
      const holding = reward(task, held(up(g, 0.04)));
      it('success scores clearly above any failure, holding over the target included', () => {
        expect(reward(task, free(g))).toBe(1);
        expect(holding).toBe(0.4);
      });
      it('a cube let go over its target, falling or settling, never scores below holding it there', () => {
        for (const dz of [0.04, 0.02, 0.005])
          expect(reward(task, free(up(g, dz), { linVel: [0, 0, -0.5] }))).toBeGreaterThanOrEqual(holding);
        // settled over the target but not quite at rest (still sliding)
        expect(reward(task, free(g, { linVel: [0.2, 0, 0] }))).toBeGreaterThanOrEqual(holding);
      });
      it('a cube dropped from height scores no more than one carried there: off the target or toppled', () => {
        const aside: Vec3 = [g[0] + 0.15, g[1] + 0.02, H];
        expect(reward(task, free(aside))).toBeLessThanOrEqual(reward(task, held(up(aside, 0.04))));
        if (family === 'put_in_bin') return; // a cube in a bin counts however it lies
        const toppled = { quat: tiltX(Math.PI / 4) };
        expect(reward(task, free(g, toppled))).toBeLessThanOrEqual(reward(task, held(up(g, 0.04))));
      });
    });
  }

  it('push: backing off from an object on its way to the goal keeps the score', () => {
    const task = makeTask('tabletop/push', 'red_cube', { kind: 'zone', name: zone.name });
    const p = task.initObjects[red].pos;
    const dir = [zone.centre[0] - p[0], zone.centre[1] - p[1]];
    const n = Math.hypot(dir[0], dir[1]);
    const moved = (d: number): Vec3 => [p[0] + (dir[0] / n) * d, p[1] + (dir[1] / n) * d, H];
    const behind = (q: Vec3): Vec3 => [q[0] - (dir[0] / n) * 0.04, q[1] - (dir[1] / n) * 0.04, H];
    for (const d of [TOL.pushed + 0.002, 0.015, 0.025]) {
      const pushing = reward(task, { ee: behind(moved(d)), fingers: [0, 0], objs: { [red]: { pos: moved(d) } } });
      const backedOff = reward(task, { ee: up(behind(moved(d)), 0.1), objs: { [red]: { pos: moved(d) } } });
      expect(pushing).toBeGreaterThan(0);
      expect(backedOff).toBe(pushing);
    }
    // an object that has not moved scores nothing once the TCP is away
    expect(reward(task, { ee: up(p, 0.1) })).toBe(0);
  });
});
