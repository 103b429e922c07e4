import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.ts';
import { emptyAction } from '../../src/physics/actions.ts';
import { createTabletopEnv, loadRapier } from '../../src/physics/env.ts';
import { RobotRig, TIP_BELOW_TCP } from '../../src/physics/robot.ts';
import { TabletopSim } from '../../src/physics/sim.ts';
import { sampleTask } from '../../src/task/sample.ts';
import { isHeld } from '../../src/task/verify.ts';
import { scene } from './helpers.ts';

const OPEN = scene.robot.finger.maxOpening;

/** Moves the TCP target toward (x, y, z) at the control limit for `steps` control steps. */
function moveTo(sim: TabletopSim, x: number, y: number, z: number, grip: number, steps: number, yaw = sim.yaw): void {
  const m = scene.control.maxTranslation;
  const c = (v: number) => Math.max(-m, Math.min(m, v));
  for (let k = 0; k < steps; k++) {
    sim.control(
      c(x - sim.target[0]),
      c(y - sim.target[1]),
      c(z - sim.target[2]),
      Math.max(-0.15, Math.min(0.15, yaw - sim.yaw)),
      grip,
    );
  }
}

describe('gripper', () => {
  it('grasps a cube, holds it while lifting and carrying, and lets go when opened', async () => {
    const R = await loadRapier();
    const sim = new TabletopSim(R, scene, new RobotRig(scene.robot));
    for (const seed of [1, 2, 3]) {
      const task = sampleTask(scene, 'tabletop/pick-place', seed);
      sim.reset(task);
      const obj = scene.objects[task.object];
      const [ox, oy, oz] = task.initObjects[task.object].pos;
      const yaw = task.initObjects[task.object].yaw; // cube faces: grasp at the cube's own yaw
      moveTo(sim, ox, oy, 0.1, OPEN, 14, yaw);
      moveTo(sim, ox, oy, oz, OPEN, 6, yaw);
      moveTo(sim, ox, oy, oz, 0, 4);
      moveTo(sim, ox, oy, 0.16, 0, 10);
      let s = sim.state();
      const o = s.objects[task.object];
      expect(isHeld(obj, o, s)).toBe(true);
      expect(o.pos[2]).toBeGreaterThan(0.14);
      // fingers squeeze the cube without sinking into it by more than ~1.5 mm each
      expect(s.fingers[0] + s.fingers[1]).toBeGreaterThan(2 * obj.halfExtents[0] - 0.003);
      moveTo(sim, 0.15, 0.1, 0.16, 0, 20);
      s = sim.state();
      expect(isHeld(obj, s.objects[task.object], s)).toBe(true);
      expect(
        Math.hypot(s.objects[task.object].pos[0] - s.eePos[0], s.objects[task.object].pos[1] - s.eePos[1]),
      ).toBeLessThan(0.01);
      moveTo(sim, 0.15, 0.1, 0.16, OPEN, 20);
      s = sim.state();
      expect(isHeld(obj, s.objects[task.object], s)).toBe(false);
      expect(s.objects[task.object].pos[2]).toBeLessThan(obj.halfExtents[2] + 0.003);
    }
    sim.free();
  });

  it('keeps the target in the workspace and the fingertips above the table under random commands', async () => {
    const env = await createTabletopEnv({ scene, taskId: 'tabletop/push', numEnvs: 4, render: false });
    await env.reset({ seed: 21 });
    const rng = new Rng(5);
    const { min, max } = scene.robot.workspace;
    const fhz = scene.robot.finger.halfExtents[2];
    let lowest = Infinity;
    for (let t = 0; t < 80; t++) {
      const a = emptyAction(4);
      for (let i = 0; i < 4; i++) {
        // mostly down and outward at full speed, random yaw and grip
        a.dx[i] = rng.uniform() < 0.5 ? 0 : scene.control.bins - 1;
        a.dy[i] = rng.int(scene.control.bins);
        a.dz[i] = rng.uniform() < 0.8 ? 0 : rng.int(scene.control.bins);
        a.dyaw[i] = rng.int(scene.control.bins);
        a.grip[i] = rng.int(scene.control.gripperBins);
      }
      await env.step(a);
      for (let i = 0; i < 4; i++) {
        const s = env.state(i);
        for (let d = 0; d < 3; d++) {
          expect(s.eePos[d]).toBeGreaterThanOrEqual(min[d] - 1e-4);
          expect(s.eePos[d]).toBeLessThanOrEqual(max[d] + 1e-4);
        }
        for (const p of env.frame(i)) if (p.name.startsWith('finger')) lowest = Math.min(lowest, p.pos[2] - fhz);
      }
    }
    // the tips sit TIP_BELOW_TCP under the TCP, whose lowest allowed height is workspace.min z
    expect(lowest).toBeGreaterThan(min[2] - TIP_BELOW_TCP - 0.002);
    expect(lowest).toBeGreaterThan(0);
    env.close();
  });
});
