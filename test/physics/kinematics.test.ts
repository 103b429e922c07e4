import { describe, expect, it } from 'vitest';
import { datan2 } from '../../src/core/dmath.ts';
import { ArmKinematics } from '../../src/physics/kinematics.ts';
import { DEFAULT_SCENE_PATH, loadSceneFile } from '../../src/scene/load-file.ts';

const scene = loadSceneFile(DEFAULT_SCENE_PATH);
const robot = scene.robot;
const { min, max } = robot.workspace;

describe('ArmKinematics', () => {
  it('puts the tool pointing down above the table at the home pose', () => {
    const kin = new ArmKinematics(robot);
    kin.fk(robot.home);
    expect(kin.rot[53]).toBeLessThan(-0.999); // tool axis (last frame's z) points down
    expect(kin.tcp[2]).toBeGreaterThan(0.1);
    for (let d = 0; d < 2; d++) {
      expect(kin.tcp[d]).toBeGreaterThanOrEqual(min[d]);
      expect(kin.tcp[d]).toBeLessThanOrEqual(max[d]);
    }
  });

  it('tracks targets across the whole workspace in control-step increments', () => {
    const kin = new ArmKinematics(robot);
    const home = new Float64Array(robot.home);
    kin.fk(home);
    const start = [kin.tcp[0], kin.tcp[1], kin.tcp[2]];
    const q = new Float64Array(6);
    let worstPos = 0;
    let worstYaw = 0;
    const n = 4;
    for (let ix = 0; ix <= n; ix++)
      for (let iy = 0; iy <= n; iy++)
        for (const z of [min[2], max[2]])
          for (const yaw of [-1.5, 0, 1.5]) {
            const target = [min[0] + ((max[0] - min[0]) * ix) / n, min[1] + ((max[1] - min[1]) * iy) / n, z];
            q.set(home);
            const cur = start.slice();
            let curYaw = 0;
            // 2 cm / 0.15 rad per step with 6 warm-started iterations, as the env does.
            for (let s = 0; s < 80; s++) {
              for (let d = 0; d < 3; d++) cur[d] += Math.max(-0.02, Math.min(0.02, target[d] - cur[d]));
              curYaw += Math.max(-0.15, Math.min(0.15, yaw - curYaw));
              kin.solve(q, cur, curYaw, 6);
            }
            const err = kin.solve(q, target, yaw, 6);
            const [c, s] = kin.yawOf();
            worstPos = Math.max(worstPos, err);
            worstYaw = Math.max(worstYaw, Math.abs(datan2(s, c) - yaw), Math.abs(kin.rot[53] + 1));
            for (let j = 0; j < 6; j++) {
              expect(q[j]).toBeGreaterThanOrEqual(robot.joints[j].limit[0]);
              expect(q[j]).toBeLessThanOrEqual(robot.joints[j].limit[1]);
            }
          }
    expect(worstPos).toBeLessThan(1e-4);
    expect(worstYaw).toBeLessThan(1e-3);
  });

  it('reports an unreachable target as a large residual instead of pretending', () => {
    const kin = new ArmKinematics(robot);
    const q = new Float64Array(robot.home);
    const err = kin.solve(q, [0, -1.5, 0.1], 0, 50);
    expect(err).toBeGreaterThan(0.3);
  });
});
