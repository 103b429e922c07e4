// Φ as a dense score: along a kinematic expert path (the object moves with the TCP while held, is
// pushed ahead of it in push) every predicate turns true in order, Φ never drops and ends at 1.
import { describe, expect, it } from 'vitest';
import type { Vec3 } from '../../src/scene/schema.ts';
import {
  FAMILY_PREDICATES,
  sampleTask,
  scoreTask,
  splitSeed,
  type TabletopState,
  type TaskInstance,
} from '../../src/task/index.ts';
import { H, ID, OPEN, scene } from './helpers.ts';

const lerp = (a: Vec3, b: Vec3, t: number): Vec3 => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
];

/** Records states while moving the TCP (and a carried object) in small steps. */
class Script {
  ee: Vec3;
  fingers: [number, number] = [OPEN, OPEN];
  objects: TabletopState['objects'];
  carry = false;
  states: TabletopState[] = [];

  constructor(private task: TaskInstance) {
    this.ee = task.initEe;
    this.objects = task.initObjects.map((o) => ({ pos: o.pos, quat: ID, linVel: [0, 0, 0] as Vec3 }));
    this.record();
  }
  record() {
    this.states.push({ eePos: this.ee, eeYaw: 0, fingers: this.fingers, objects: this.objects.map((o) => ({ ...o })) });
  }
  moveTo(target: Vec3, push?: Vec3) {
    const start = this.ee;
    const objStart = this.objects[this.task.object].pos;
    for (let k = 1; k <= 20; k++) {
      this.ee = lerp(start, target, k / 20);
      const o = this.objects[this.task.object];
      const before = o.pos;
      if (this.carry) o.pos = this.ee;
      if (push) o.pos = lerp(objStart, push, k / 20);
      // one control step per sub-move: velocity = displacement * control rate
      o.linVel = o.pos.map((v, j) => (v - before[j]) * scene.control.hz) as Vec3;
      this.record();
    }
  }
  setFingers(v: number) {
    const start = this.fingers[0];
    for (let k = 1; k <= 10; k++) {
      const f = start + ((v - start) * k) / 10;
      this.fingers = [f, f];
      this.objects[this.task.object].linVel = [0, 0, 0];
      this.record();
    }
  }
}

function placePoint(task: TaskInstance): Vec3 {
  const { kind, index } = task.target;
  if (kind === 'zone') return [scene.zones[index].centre[0], scene.zones[index].centre[1], H];
  if (kind === 'bin') return [scene.bins[index].centre[0], scene.bins[index].centre[1], H + 0.001];
  const t = task.initObjects[index].pos;
  return [t[0], t[1], t[2] + 2 * H];
}

function expertStates(task: TaskInstance): TabletopState[] {
  const s = new Script(task);
  const p = task.initObjects[task.object].pos;
  const goal = placePoint(task);
  if (task.family === 'push') {
    const dx = goal[0] - p[0];
    const dy = goal[1] - p[1];
    const n = Math.hypot(dx, dy);
    const back = 0.045;
    s.setFingers(0);
    s.moveTo([p[0] - (dx / n) * back, p[1] - (dy / n) * back, 0.08]);
    s.moveTo([p[0] - (dx / n) * back, p[1] - (dy / n) * back, H]);
    s.moveTo([goal[0] - (dx / n) * back, goal[1] - (dy / n) * back, H], goal);
    s.moveTo([goal[0] - (dx / n) * 0.15, goal[1] - (dy / n) * 0.15, 0.1]);
    return s.states;
  }
  const lift = 0.12;
  s.moveTo([p[0], p[1], p[2] + 0.08]);
  s.moveTo(p);
  s.setFingers(H);
  s.carry = true;
  s.moveTo([p[0], p[1], lift]);
  s.moveTo([goal[0], goal[1], lift]);
  s.moveTo(task.family === 'put_in_bin' ? [goal[0], goal[1], 0.07] : goal);
  if (task.family === 'put_in_bin') s.objects[task.object].pos = goal; // released above the bin, it drops in
  s.carry = false;
  s.setFingers(OPEN);
  s.moveTo([goal[0], goal[1], lift]);
  return s.states;
}

describe('Φ along an expert path', () => {
  for (const t of scene.tasks) {
    it(`${t.id}: predicates turn true in order, Φ is monotone and ends at 1`, () => {
      for (const seed of [0, 1, 2, splitSeed(scene, 'heldout', 0), splitSeed(scene, 'heldout', 1)]) {
        const task = sampleTask(scene, t.id, seed);
        const scores = expertStates(task).map((st) => scoreTask(scene, task, st));
        const names = FAMILY_PREDICATES[task.family];
        expect(scores[0].progress).toBe(0);
        const firstTrue = names.map((n) => scores.findIndex((s) => s.predicates[n]));
        for (let k = 0; k < names.length; k++) {
          expect(firstTrue[k], `${t.id} seed ${seed}: ${names[k]} never true`).toBeGreaterThan(0);
          if (k > 0)
            expect(firstTrue[k], `${t.id} seed ${seed}: ${names[k]} before ${names[k - 1]}`).toBeGreaterThanOrEqual(
              firstTrue[k - 1],
            );
        }
        for (let i = 1; i < scores.length; i++)
          expect(scores[i].progress).toBeGreaterThanOrEqual(scores[i - 1].progress);
        // the stages are reached at separate moments, so Φ takes every value 0, 1/S, ..., 1
        expect(new Set(scores.map((s) => s.progress)).size).toBe(names.length + 1);
        expect(scores.at(-1)).toMatchObject({ success: true, progress: 1 });
        expect(scores.slice(0, -1).some((s) => s.success)).toBe(true);
      }
    });
  }
});
