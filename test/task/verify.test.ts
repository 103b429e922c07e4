import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import type { Vec3 } from '../../src/scene/schema.ts';
import {
  FAMILY_PREDICATES,
  scoreTask,
  shapedProgress,
  stageConditions,
  type TabletopState,
  type TaskInstance,
  TOL,
} from '../../src/task/index.ts';
import { firstN, H, makeState, makeTask, objIndex, OPEN, scene, tiltX, yawQuat } from './helpers.ts';

const zone = scene.zones[0];
const zc = zone.centre;
const bin = scene.bins[0];
const red = objIndex('red_cube');
const green = objIndex('green_cube');
const above = (p: Vec3, dz: number): Vec3 => [p[0], p[1], p[2] + dz];

describe('FAMILY_PREDICATES', () => {
  it('fixes S per family and every score reports exactly those names in order', () => {
    for (const [family, names] of Object.entries(FAMILY_PREDICATES)) {
      expect(names.length).toBe(5);
      expect(new Set(names).size).toBe(names.length);
      const t = scene.tasks.find((x) => x.family === family)!;
      const task = makeTask(
        t.id,
        'red_cube',
        family === 'push' || family === 'pick_place'
          ? { kind: 'zone', name: zone.name }
          : family === 'stack'
            ? { kind: 'object', name: 'green_cube' }
            : { kind: 'bin', name: bin.name },
      );
      expect(Object.keys(scoreTask(scene, task, makeState(task)).predicates)).toEqual(names);
    }
  });
});

describe('push', () => {
  const task = makeTask('tabletop/push', 'red_cube', { kind: 'zone', name: zone.name });
  const inZone: Vec3 = [zc[0] + 0.01, zc[1] - 0.02, H];

  it('initial state: nothing satisfied', () => {
    expect(scoreTask(scene, task, makeState(task))).toEqual({
      success: false,
      progress: 0,
      predicates: firstN('push', 0),
    });
  });
  it('TCP beside the object', () => {
    const p = task.initObjects[red].pos;
    const s = scoreTask(scene, task, makeState(task, { ee: [p[0] - 0.04, p[1] - 0.02, H], fingers: [0, 0] }));
    expect(s).toEqual({ success: false, progress: 1 / 5, predicates: firstN('push', 1) });
  });
  it('object pushed toward, then near, then into the zone', () => {
    const p = task.initObjects[red].pos;
    const d0 = Math.hypot(
      Math.max(0, Math.abs(p[0] - zc[0]) - zone.halfSize[0]),
      Math.max(0, Math.abs(p[1] - zc[1]) - zone.halfSize[1]),
    );
    const toward: Vec3 = [p[0], p[1] + 0.05, H];
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: toward } } })).progress).toBe(
      d0 - 0.05 > TOL.nearTarget ? 2 / 5 : 3 / 5,
    );
    const near: Vec3 = [zc[0], zc[1] - zone.halfSize[1] - 0.02, H];
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: near } } }))).toEqual({
      success: false,
      progress: 3 / 5,
      predicates: firstN('push', 3),
    });
    const sliding = makeState(task, { objs: { [red]: { pos: inZone, linVel: [0, 0.3, 0] } } });
    expect(scoreTask(scene, task, sliding)).toEqual({ success: false, progress: 4 / 5, predicates: firstN('push', 4) });
  });
  it('object resting in the zone, TCP away: success and Φ = 1', () => {
    const s = scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: inZone, quat: yawQuat(0.4) } } }));
    expect(s).toEqual({ success: true, progress: 1, predicates: firstN('push', 5) });
    // the stage conditions themselves: the TCP is away, the first stage holds as the object was pushed
    expect(stageConditions(scene, task, makeState(task, { objs: { [red]: { pos: inZone } } }))).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
  });
  it('a cube on another face still rests; a tipped one or one in the air does not', () => {
    expect(
      scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: inZone, quat: tiltX(Math.PI / 2) } } })).success,
    ).toBe(true);
    const tippedZ = H * (Math.cos(Math.PI / 4) + Math.sin(Math.PI / 4));
    expect(
      scoreTask(
        scene,
        task,
        makeState(task, { objs: { [red]: { pos: [inZone[0], inZone[1], tippedZ], quat: tiltX(Math.PI / 4) } } }),
      ).progress,
    ).toBe(4 / 5);
    expect(
      scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: [inZone[0], inZone[1], H + 0.02] } } })).success,
    ).toBe(false);
  });
  it('another object in the zone does not count', () => {
    expect(scoreTask(scene, task, makeState(task, { objs: { [green]: { pos: inZone } } })).progress).toBe(0);
  });
  it('centre just outside the zone edge is not in it', () => {
    const edge: Vec3 = [zc[0] + zone.halfSize[0] + 0.002, zc[1], H];
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: edge } } }))).toEqual({
      success: false,
      progress: 3 / 5,
      predicates: firstN('push', 3),
    });
  });
});

describe('pick_place', () => {
  const task = makeTask('tabletop/pick-place', 'red_cube', { kind: 'zone', name: zone.name });
  const p = task.initObjects[red].pos;
  const w = H; // each finger touches a face of the 2H-wide cube

  it('TCP at the object with open fingers: near only', () => {
    expect(scoreTask(scene, task, makeState(task, { ee: p }))).toEqual({
      success: false,
      progress: 1 / 5,
      predicates: firstN('pick_place', 1),
    });
  });
  it('hovering well above the object is not near', () => {
    expect(scoreTask(scene, task, makeState(task, { ee: above(p, 0.08) })).progress).toBe(0);
  });
  it('fingers closed onto the object: grasped', () => {
    expect(scoreTask(scene, task, makeState(task, { ee: p, fingers: [w, w] }))).toEqual({
      success: false,
      progress: 2 / 5,
      predicates: firstN('pick_place', 2),
    });
    expect(scoreTask(scene, task, makeState(task, { ee: p, fingers: [w - 0.003, w + 0.002] })).progress).toBe(2 / 5);
  });
  it('fingers closed on nothing, or TCP too far from the centre: not grasped', () => {
    expect(scoreTask(scene, task, makeState(task, { ee: p, fingers: [0, 0] })).progress).toBe(1 / 5);
    expect(
      scoreTask(scene, task, makeState(task, { ee: [p[0], p[1], p[2] + TOL.holdDist + 0.005], fingers: [w, w] }))
        .progress,
    ).toBe(1 / 5);
  });
  it('grasp width follows the cube yaw relative to the fingers', () => {
    const diag = H * Math.SQRT2;
    const q = yawQuat(Math.PI / 4);
    expect(
      scoreTask(scene, task, makeState(task, { ee: p, fingers: [diag, diag], objs: { [red]: { quat: q } } })).predicates
        .grasped,
    ).toBe(true);
    expect(
      scoreTask(scene, task, makeState(task, { ee: p, fingers: [w, w], objs: { [red]: { quat: q } } })).predicates
        .grasped,
    ).toBe(false);
    expect(
      scoreTask(
        scene,
        task,
        makeState(task, { ee: p, yaw: Math.PI / 4, fingers: [w, w], objs: { [red]: { quat: q } } }),
      ).predicates.grasped,
    ).toBe(true);
  });
  it('lifted, then carried over the zone', () => {
    const up = above(p, 0.05);
    expect(scoreTask(scene, task, makeState(task, { ee: up, fingers: [w, w], objs: { [red]: { pos: up } } }))).toEqual({
      success: false,
      progress: 3 / 5,
      predicates: firstN('pick_place', 3),
    });
    const over: Vec3 = [zc[0], zc[1], 0.1];
    expect(
      scoreTask(scene, task, makeState(task, { ee: over, fingers: [w, w], objs: { [red]: { pos: over } } })),
    ).toEqual({ success: false, progress: 4 / 5, predicates: firstN('pick_place', 4) });
  });
  it('set down in the zone but still held: not yet placed', () => {
    const down: Vec3 = [zc[0], zc[1], H];
    expect(
      scoreTask(scene, task, makeState(task, { ee: down, fingers: [w, w], objs: { [red]: { pos: down } } })),
    ).toEqual({ success: false, progress: 4 / 5, predicates: firstN('pick_place', 4) });
  });
  it('released in the zone: success, also with the TCP still between the open fingers', () => {
    const down: Vec3 = [zc[0], zc[1], H];
    expect(
      scoreTask(scene, task, makeState(task, { ee: down, fingers: [OPEN, OPEN], objs: { [red]: { pos: down } } })),
    ).toEqual({ success: true, progress: 1, predicates: firstN('pick_place', 5) });
  });
  it('dropped outside the zone: back to nothing', () => {
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: [0, 0, H] } } })).progress).toBe(0);
  });
});

describe('stack', () => {
  const task = makeTask('tabletop/stack', 'red_cube', { kind: 'object', name: 'green_cube' });
  const g = task.initObjects[green].pos;
  const onTop: Vec3 = [g[0] + 0.005, g[1] - 0.004, g[2] + 2 * H];

  it('resting on the target cube, released: success', () => {
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: onTop, quat: yawQuat(0.3) } } }))).toEqual({
      success: true,
      progress: 1,
      predicates: firstN('stack', 5),
    });
  });
  it('held on top of the target: above_target only', () => {
    expect(
      scoreTask(scene, task, makeState(task, { ee: onTop, fingers: [H, H], objs: { [red]: { pos: onTop } } })),
    ).toEqual({ success: false, progress: 4 / 5, predicates: firstN('stack', 4) });
  });
  it('too far off-centre, too high, or on a target that is not on the table: no success', () => {
    const off: Vec3 = [g[0] + 1.2 * H, g[1], onTop[2]];
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: off } } })).success).toBe(false);
    expect(
      scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: above(onTop, TOL.stackZ + 0.005) } } })).success,
    ).toBe(false);
    const lifted = above(g, 0.05);
    expect(
      scoreTask(
        scene,
        task,
        makeState(task, { objs: { [green]: { pos: lifted }, [red]: { pos: above(lifted, 2 * H) } } }),
      ).success,
    ).toBe(false);
  });
  it('the target cube resting on a side face is still a base', () => {
    expect(
      scoreTask(
        scene,
        task,
        makeState(task, { objs: { [green]: { quat: tiltX(Math.PI / 2) }, [red]: { pos: onTop } } }),
      ).success,
    ).toBe(true);
  });
  it('resting beside the target on the table: nothing', () => {
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: [g[0] + 0.05, g[1], H] } } })).progress).toBe(
      0,
    );
  });
});

describe('put_in_bin', () => {
  const task = makeTask('tabletop/put-in-bin', 'red_cube', { kind: 'bin', name: bin.name });
  const bc = bin.centre;
  const inside: Vec3 = [bc[0] + 0.01, bc[1] - 0.01, H + 0.001];

  it('inside the bin, released: success', () => {
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: inside } } }))).toEqual({
      success: true,
      progress: 1,
      predicates: firstN('put_in_bin', 5),
    });
  });
  it('tilted against a wall inside the bin still counts', () => {
    expect(
      scoreTask(
        scene,
        task,
        makeState(task, { objs: { [red]: { pos: [inside[0], inside[1], 0.027], quat: tiltX(0.5) } } }),
      ).success,
    ).toBe(true);
  });
  it('held over the bin: above_target', () => {
    const over: Vec3 = [bc[0], bc[1], bin.height + 0.04];
    expect(
      scoreTask(scene, task, makeState(task, { ee: over, fingers: [H, H], objs: { [red]: { pos: over } } })),
    ).toEqual({ success: false, progress: 4 / 5, predicates: firstN('put_in_bin', 4) });
  });
  it('above the rim, or on the wall, or held inside: no success', () => {
    expect(
      scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: [bc[0], bc[1], bin.height + 0.01] } } })).success,
    ).toBe(false);
    const onWall: Vec3 = [bc[0] + bin.halfSize[0] + bin.wallThickness / 2, bc[1], bin.height + H];
    expect(scoreTask(scene, task, makeState(task, { objs: { [red]: { pos: onWall } } })).progress).toBe(0);
    expect(
      scoreTask(scene, task, makeState(task, { ee: inside, fingers: [H, H], objs: { [red]: { pos: inside } } }))
        .success,
    ).toBe(false);
  });
});

describe('scoreTask input checks', () => {
  it('rejects a state with the wrong number of objects', () => {
    const task = makeTask('tabletop/push', 'red_cube', { kind: 'zone', name: zone.name });
    const state = makeState(task);
    state.objects.pop();
    expect(() => scoreTask(scene, task, state)).toThrow(/state has 3 objects, scene "tabletop" has 4/);
  });
  it('un-normalised quaternions (world-model predictions) are normalised', () => {
    const task = makeTask('tabletop/push', 'red_cube', { kind: 'zone', name: zone.name });
    const s = makeState(task, { objs: { [red]: { pos: [zc[0], zc[1], H], quat: [0, 0, 0, 3] } } });
    expect(scoreTask(scene, task, s).success).toBe(true);
  });
});

describe('shapedProgress', () => {
  const tasks = [
    makeTask('tabletop/push', 'red_cube', { kind: 'zone', name: zone.name }),
    makeTask('tabletop/pick-place', 'red_cube', { kind: 'zone', name: zone.name }),
    makeTask('tabletop/stack', 'red_cube', { kind: 'object', name: 'green_cube' }),
    makeTask('tabletop/put-in-bin', 'red_cube', { kind: 'bin', name: bin.name }),
  ];
  const lerp = (a: Vec3, b: Vec3, t: number): Vec3 => [0, 1, 2].map((j) => a[j] + (b[j] - a[j]) * t) as Vec3;
  const n = 5;
  const inBand = (task: TaskInstance, st: TabletopState) => {
    const phi = scoreTask(scene, task, st).progress;
    const s = shapedProgress(scene, task, st);
    expect(s).toBeGreaterThanOrEqual(phi);
    expect(s).toBeLessThan(phi === 1 ? 1.5 : phi + 1 / n);
    expect(s === 1).toBe(phi === 1);
    return s;
  };

  /** A kinematic expert: the TCP moves in 10 steps between waypoints; a held object moves with it. */
  function expert(task: TaskInstance): TabletopState[] {
    const p = task.initObjects[red].pos;
    const { kind, index } = task.target;
    const states: TabletopState[] = [];
    let ee = task.initEe;
    let fingers: [number, number] = [OPEN, OPEN];
    let obj = p;
    const go = (to: Vec3, o: { carry?: boolean; push?: Vec3; grip?: number } = {}) => {
      const [e0, o0, f0] = [ee, obj, fingers[0]];
      for (let k = 1; k <= 10; k++) {
        ee = lerp(e0, to, k / 10);
        if (o.grip !== undefined) fingers = [f0 + ((o.grip - f0) * k) / 10, f0 + ((o.grip - f0) * k) / 10];
        const before = obj;
        obj = o.carry ? ee : o.push ? lerp(o0, o.push, k / 10) : obj;
        const linVel = obj.map((v, j) => (v - before[j]) * scene.control.hz) as Vec3;
        states.push(makeState(task, { ee, fingers, objs: { [red]: { pos: obj, linVel } } }));
      }
    };
    if (task.family === 'push') {
      const goal: Vec3 = [zc[0], zc[1], H];
      const u = [goal[0] - p[0], goal[1] - p[1]].map((v) => v / Math.hypot(goal[0] - p[0], goal[1] - p[1]));
      const behind = (q: Vec3, z: number): Vec3 => [q[0] - 0.045 * u[0], q[1] - 0.045 * u[1], z];
      go(behind(p, 0.08), { grip: 0 });
      go(behind(p, H));
      go(behind(goal, H), { push: goal });
      go(behind(goal, 0.1));
      return states;
    }
    const goal: Vec3 =
      kind === 'zone'
        ? [zc[0], zc[1], H]
        : kind === 'bin'
          ? [bin.centre[0], bin.centre[1], H + 0.001]
          : above(task.initObjects[index].pos, 2 * H);
    go(above(p, 0.08));
    go(p);
    go(p, { grip: H });
    go([p[0], p[1], 0.12], { carry: true });
    go([goal[0], goal[1], 0.12], { carry: true });
    go(goal, { carry: true });
    go(goal, { grip: OPEN });
    go([goal[0], goal[1], 0.12]);
    return states;
  }

  it('lies in [Φ, Φ + 1/n) along an expert path, never drops, takes many values and ends at 1', () => {
    for (const task of tasks) {
      const shaped = expert(task).map((st) => inBand(task, st));
      expect(shaped.at(-1), task.family).toBe(1);
      for (let i = 1; i < shaped.length; i++) expect(shaped[i], task.family).toBeGreaterThan(shaped[i - 1] - 1e-12);
      expect(new Set(shaped).size, task.family).toBeGreaterThan(2 * (n + 1));
    }
  });

  it('lies in [Φ, Φ + 1/n) on random states and is continuous within a level', () => {
    const rng = new Rng(5);
    const u = (a: number, b: number) => rng.range(a, b);
    for (const task of tasks)
      for (let i = 0; i < 300; i++) {
        const p = task.initObjects[red].pos;
        const pos: Vec3 =
          rng.uniform() < 0.5 ? [u(-0.3, 0.3), u(-0.2, 0.25), u(0, 0.15)] : [zc[0], zc[1], u(H - 0.01, 0.1)];
        const ee: Vec3 = rng.uniform() < 0.5 ? [u(-0.3, 0.3), u(-0.2, 0.25), u(0.02, 0.2)] : lerp(pos, p, u(0, 0.05));
        const f = u(0, OPEN);
        const spec = {
          ee,
          fingers: [f, f] as [number, number],
          objs: { [red]: { pos, linVel: [0, 0, u(-0.3, 0.3)] as Vec3 } },
        };
        const s = inBand(task, makeState(task, spec));
        const nudged = makeState(task, { ...spec, ee: [ee[0] + 1e-7, ee[1], ee[2] - 1e-7] });
        if (scoreTask(scene, task, nudged).progress === scoreTask(scene, task, makeState(task, spec)).progress)
          expect(Math.abs(shapedProgress(scene, task, nudged) - s)).toBeLessThan(1e-5);
      }
  });

  it('rises as the TCP approaches the object (first stage), reaching the next level only when near', () => {
    for (const task of tasks) {
      const p = task.initObjects[red].pos;
      const path = Array.from({ length: 21 }, (_, k) => makeState(task, { ee: lerp(task.initEe, p, k / 20) }));
      const shaped = path.map((st) => shapedProgress(scene, task, st));
      const far = path.filter((st) => scoreTask(scene, task, st).progress === 0).length;
      expect(far).toBeGreaterThan(5);
      for (let k = 1; k < far; k++) expect(shaped[k]).toBeGreaterThan(shaped[k - 1]);
      expect(shaped[far - 1]).toBeLessThan(1 / n);
      expect(shaped[far]).toBeGreaterThanOrEqual(1 / n);
    }
  });

  it('solved states score exactly 1', () => {
    const t = tasks[1];
    expect(shapedProgress(scene, t, makeState(t, { objs: { [red]: { pos: [zc[0], zc[1], H] } } }))).toBe(1);
    const b = tasks[3];
    const inside: Vec3 = [bin.centre[0], bin.centre[1], H + 0.001];
    expect(shapedProgress(scene, b, makeState(b, { objs: { [red]: { pos: inside } } }))).toBe(1);
  });
});
