import type RAPIER_NS from '@dimforge/rapier3d-deterministic-compat';
import type { Scene } from '../scene/schema.ts';
import { ArmKinematics, gripperGeometry, TIP_BELOW_TCP } from '../scene/kinematics.ts';

export { TIP_BELOW_TCP };
import { quatFromMat, type MutQuat, type MutVec } from './quat.ts';

type Rapier = typeof RAPIER_NS;
type World = RAPIER_NS.World;
type RigidBody = RAPIER_NS.RigidBody;
type Robot = Scene['robot'];

/** Collision groups (membership << 16 | filter): robot parts never collide with each other. */
export const GROUP_WORLD = (0b01 << 16) | 0b11;
export const GROUP_ROBOT = (0b10 << 16) | 0b01;
/** Finger position motor gains (ForceBased: N/m and N s/m), force-limited by robot.finger.maxForce. */
const FINGER_STIFFNESS = 2000;
const FINGER_DAMPING = 15;
/** Closing squeeze: the shared target sits this far inside the mean opening (force = stiffness x this). */
const SQUEEZE = 0.004;

/** Handles of one robot inside one world; plain numbers so they survive a snapshot restore. */
export interface RobotHandles {
  links: number[];
  palm: number;
  fingers: [number, number];
  joints: [number, number];
}

/** Builds the kinematic arm, kinematic palm and the two dynamic fingers on prismatic motors, and drives
 *  the kinematic bodies from joint angles. One instance serves every world of an env (no world state). */
export class RobotRig {
  readonly kin: ArmKinematics;
  /** Palm centre and finger centre (closed, before the +-x offset) in the last joint frame. */
  private readonly palmOffset: [number, number, number];
  private readonly fingerDrop: number;
  private readonly v: MutVec = { x: 0, y: 0, z: 0 };
  private readonly q: MutQuat = { x: 0, y: 0, z: 0, w: 1 };
  private readonly open2 = new Float64Array(2);

  constructor(private readonly robot: Robot) {
    this.kin = new ArmKinematics(robot);
    ({ palmOffset: this.palmOffset, fingerDrop: this.fingerDrop } = gripperGeometry(robot));
  }

  /** Creates the robot bodies at joint angles q with each finger `opening` from closed. */
  build(R: Rapier, world: World, q: Float64Array, opening: number): RobotHandles {
    const { robot, kin } = this;
    kin.fk(q);
    const links = robot.links.map((link) => {
      const body = world.createRigidBody(R.RigidBodyDesc.kinematicPositionBased());
      const [hx, hy, hz] = link.halfExtents;
      world.createCollider(R.ColliderDesc.cuboid(hx, hy, hz).setCollisionGroups(GROUP_ROBOT), body);
      return body;
    });
    const palm = world.createRigidBody(R.RigidBodyDesc.kinematicPositionBased());
    const [px, py, pz] = robot.palm.halfExtents;
    world.createCollider(R.ColliderDesc.cuboid(px, py, pz).setCollisionGroups(GROUP_ROBOT), palm);
    this.place(links, palm, false);
    const f = robot.finger;
    const [fhx, fhy, fhz] = f.halfExtents;
    const fingers = [1, -1].map((side) => {
      this.bodyPoint(
        5,
        this.palmOffset[0] + side * (fhx + opening),
        this.palmOffset[1],
        this.palmOffset[2] + this.fingerDrop,
      );
      const desc = R.RigidBodyDesc.dynamic()
        .setTranslation(this.v.x, this.v.y, this.v.z)
        .setRotation(quatFromMat(kin.rot, 45, { ...this.q }));
      const body = world.createRigidBody(desc);
      world.createCollider(
        R.ColliderDesc.cuboid(fhx, fhy, fhz).setMass(f.mass).setFriction(f.friction).setCollisionGroups(GROUP_ROBOT),
        body,
      );
      return { body, side };
    });
    const joints = fingers.map(({ body, side }) => {
      const data = R.JointData.prismatic(
        { x: side * fhx, y: 0, z: this.fingerDrop },
        { x: 0, y: 0, z: 0 },
        { x: side, y: 0, z: 0 },
      );
      data.limitsEnabled = true;
      data.limits = [0, f.maxOpening];
      const joint = world.createImpulseJoint(data, palm, body, true) as RAPIER_NS.PrismaticImpulseJoint;
      joint.setContactsEnabled(false);
      joint.configureMotorModel(R.MotorModel.ForceBased);
      joint.setMotorMaxForce(f.maxForce);
      joint.configureMotorPosition(opening, FINGER_STIFFNESS, FINGER_DAMPING);
      return joint.handle;
    });
    return {
      links: links.map((b) => b.handle),
      palm: palm.handle,
      fingers: [fingers[0].body.handle, fingers[1].body.handle],
      joints: [joints[0], joints[1]],
    };
  }

  /** Motor target of both fingers for the commanded opening: the command itself while opening, and
   *  while closing at most SQUEEZE below the fingers' mean opening. Sharing one target couples the two
   *  motors like one gripper drive: an off-centre grasp feels a restoring force (stiffness times the
   *  opening difference) instead of two saturated motors that let the grasped object slide sideways. */
  motorTarget(fingers: RigidBody[], command: number, scratch: MutVec): number {
    this.openings(fingers, this.open2, scratch);
    const mean = 0.5 * (this.open2[0] + this.open2[1]);
    return Math.max(command, mean - SQUEEZE);
  }

  setMotors(joints: RAPIER_NS.PrismaticImpulseJoint[], target: number): void {
    for (const joint of joints) joint.configureMotorPosition(target, FINGER_STIFFNESS, FINGER_DAMPING);
  }

  /** Poses the kinematic links and palm at joint angles q: as the next kinematic target (inside a
   *  substep) or teleported (at build/reset). */
  pose(links: RigidBody[], palm: RigidBody, q: ArrayLike<number>, next: boolean): void {
    this.kin.fk(q);
    this.place(links, palm, next);
  }

  private place(links: RigidBody[], palm: RigidBody, next: boolean): void {
    const { robot, kin, v, q } = this;
    for (let i = 0; i < links.length; i++) {
      const [ox, oy, oz] = robot.links[i].offset;
      this.bodyPoint(i, ox, oy, oz);
      quatFromMat(kin.rot, 9 * i, q);
      setPose(links[i], v, q, next);
    }
    this.bodyPoint(5, this.palmOffset[0], this.palmOffset[1], this.palmOffset[2]);
    quatFromMat(kin.rot, 45, q);
    setPose(palm, v, q, next);
  }

  /** this.v = joint frame i origin + R_i (x, y, z), from the last fk(). */
  private bodyPoint(i: number, x: number, y: number, z: number): void {
    const { pos, rot } = this.kin;
    const o = 9 * i;
    this.v.x = pos[3 * i] + rot[o] * x + rot[o + 1] * y + rot[o + 2] * z;
    this.v.y = pos[3 * i + 1] + rot[o + 3] * x + rot[o + 4] * y + rot[o + 5] * z;
    this.v.z = pos[3 * i + 2] + rot[o + 6] * x + rot[o + 7] * y + rot[o + 8] * z;
  }

  /** Opening of each finger (m from closed) measured along the palm's x axis, from the last fk(). */
  openings(fingers: RigidBody[], out: Float64Array, scratch: MutVec): void {
    const { rot } = this.kin;
    this.bodyPoint(5, this.palmOffset[0], this.palmOffset[1], this.palmOffset[2] + this.fingerDrop);
    const fhx = this.robot.finger.halfExtents[0];
    for (let k = 0; k < 2; k++) {
      const t = fingers[k].translation(scratch);
      const along = (t.x - this.v.x) * rot[45] + (t.y - this.v.y) * rot[48] + (t.z - this.v.z) * rot[51];
      out[k] = (k === 0 ? along : -along) - fhx;
    }
  }
}

function setPose(body: RigidBody, v: MutVec, q: MutQuat, next: boolean): void {
  if (next) {
    body.setNextKinematicTranslation(v);
    body.setNextKinematicRotation(q);
  } else {
    body.setTranslation(v, false);
    body.setRotation(q, false);
  }
}
