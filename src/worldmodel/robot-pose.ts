// The robot's body poses at a (predicted) tool pose, for rendering world-model observations, and the
// initial state of a task exactly as physics lays it out at a reset. Mirrors physics/robot.ts geometry
// (checked against physics frames in test/worldmodel/robot-pose.test.ts). Browser-safe.
import { datan2, dcos, dsin } from '../core/dmath.ts';
import type { BodyPose } from '../env/types.ts';
import { ArmKinematics, gripperGeometry } from '../scene/kinematics.ts';
import type { Scene } from '../scene/schema.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';

/** IK iterations at a reset (from home) and per step (warm-started), as physics uses. */
export const IK_ITERS_RESET = 300;
export const IK_ITERS_STEP = 6;

export class ArmPoser {
  readonly kin: ArmKinematics;
  private readonly palmOffset: [number, number, number];
  private readonly fingerDrop: number;
  private readonly names: string[];

  constructor(readonly scene: Scene) {
    const robot = scene.robot;
    this.kin = new ArmKinematics(robot);
    ({ palmOffset: this.palmOffset, fingerDrop: this.fingerDrop } = gripperGeometry(robot));
    this.names = [
      ...scene.objects.map((o) => o.name),
      ...robot.links.map((l) => l.name),
      'palm',
      'finger_left',
      'finger_right',
    ];
  }

  /** Joint angles at the home pose solved onto `tcp` (as a physics reset does). */
  homeJoints(tcp: ArrayLike<number>, yaw = 0): Float64Array {
    const q = Float64Array.from(this.scene.robot.home);
    this.kin.solve(q, tcp, yaw, IK_ITERS_RESET);
    return q;
  }

  /** Warm-started IK of q (in place) toward a predicted tool pose. */
  track(q: Float64Array, tcp: ArrayLike<number>, yaw: number): void {
    this.kin.solve(q, tcp, yaw, IK_ITERS_STEP);
  }

  /** The initial state of `task`: objects at rest at their sampled poses (float32, as Rapier stores
   *  them), the tool at the IK solution for initEe, fingers fully open. */
  initialState(task: TaskInstance): { state: TabletopState; q: Float64Array } {
    const q = this.homeJoints(task.initEe, 0);
    this.kin.fk(q);
    const [c, s] = this.kin.yawOf();
    const f = Math.fround;
    const open = this.scene.robot.finger.maxOpening;
    const objects = this.scene.objects.map((obj, i) => {
      const init = task.initObjects[i];
      if (!init)
        throw new RangeError(
          `task ${task.taskId} seed ${task.seed}: initObjects[${i}] missing for object "${obj.name}"`,
        );
      return {
        pos: [f(init.pos[0]), f(init.pos[1]), f(init.pos[2])] as [number, number, number],
        quat: [0, 0, f(dsin(init.yaw / 2)), f(dcos(init.yaw / 2))] as [number, number, number, number],
        linVel: [0, 0, 0] as [number, number, number],
      };
    });
    const tcp = this.kin.tcp;
    return { state: { eePos: [tcp[0], tcp[1], tcp[2]], eeYaw: datan2(s, c), fingers: [open, open], objects }, q };
  }

  /** Poses of every moving body (names and order as physics frame()): objects from the state, links and
   *  palm from joint angles q, fingers slid open by the state's openings along the palm's x axis. */
  poses(q: ArrayLike<number>, state: TabletopState, out?: BodyPose[]): BodyPose[] {
    const poses =
      out ??
      this.names.map((name) => ({ name, pos: [0, 0, 0] as BodyPose['pos'], quat: [0, 0, 0, 1] as BodyPose['quat'] }));
    const m = state.objects.length;
    for (let i = 0; i < m; i++) {
      const o = state.objects[i];
      const p = poses[i];
      p.pos[0] = o.pos[0];
      p.pos[1] = o.pos[1];
      p.pos[2] = o.pos[2];
      p.quat[0] = o.quat[0];
      p.quat[1] = o.quat[1];
      p.quat[2] = o.quat[2];
      p.quat[3] = o.quat[3];
    }
    const { kin, scene } = this;
    kin.fk(q);
    const links = scene.robot.links;
    links.forEach((link, i) => this.place(poses[m + i], i, link.offset[0], link.offset[1], link.offset[2]));
    const [px, py, pz] = this.palmOffset;
    this.place(poses[m + links.length], 5, px, py, pz);
    const fhx = scene.robot.finger.halfExtents[0];
    this.place(poses[m + links.length + 1], 5, px + (fhx + state.fingers[0]), py, pz + this.fingerDrop);
    this.place(poses[m + links.length + 2], 5, px - (fhx + state.fingers[1]), py, pz + this.fingerDrop);
    return poses;
  }

  /** pose = joint frame i origin + R_i (x, y, z), rotation R_i (from the last fk()). */
  private place(p: BodyPose, i: number, x: number, y: number, z: number): void {
    const { pos, rot } = this.kin;
    const o = 9 * i;
    p.pos[0] = pos[3 * i] + rot[o] * x + rot[o + 1] * y + rot[o + 2] * z;
    p.pos[1] = pos[3 * i + 1] + rot[o + 3] * x + rot[o + 4] * y + rot[o + 5] * z;
    p.pos[2] = pos[3 * i + 2] + rot[o + 6] * x + rot[o + 7] * y + rot[o + 8] * z;
    quatFromMat(rot, o, p.quat);
  }
}

/** Quaternion (x, y, z, w) of the row-major rotation m[o..o+8] (Shepperd's method, sqrt only). */
function quatFromMat(m: ArrayLike<number>, o: number, q: BodyPose['quat']): void {
  const m00 = m[o],
    m01 = m[o + 1],
    m02 = m[o + 2],
    m10 = m[o + 3],
    m11 = m[o + 4],
    m12 = m[o + 5],
    m20 = m[o + 6],
    m21 = m[o + 7],
    m22 = m[o + 8];
  const tr = m00 + m11 + m22;
  if (tr > 0) {
    const s = 2 * Math.sqrt(tr + 1);
    q[3] = 0.25 * s;
    q[0] = (m21 - m12) / s;
    q[1] = (m02 - m20) / s;
    q[2] = (m10 - m01) / s;
  } else if (m00 > m11 && m00 > m22) {
    const s = 2 * Math.sqrt(1 + m00 - m11 - m22);
    q[3] = (m21 - m12) / s;
    q[0] = 0.25 * s;
    q[1] = (m01 + m10) / s;
    q[2] = (m02 + m20) / s;
  } else if (m11 > m22) {
    const s = 2 * Math.sqrt(1 + m11 - m00 - m22);
    q[3] = (m02 - m20) / s;
    q[0] = (m01 + m10) / s;
    q[1] = 0.25 * s;
    q[2] = (m12 + m21) / s;
  } else {
    const s = 2 * Math.sqrt(1 + m22 - m00 - m11);
    q[3] = (m10 - m01) / s;
    q[0] = (m02 + m20) / s;
    q[1] = (m12 + m21) / s;
    q[2] = 0.25 * s;
  }
}
