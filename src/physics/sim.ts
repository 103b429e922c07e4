import type RAPIER_NS from '@dimforge/rapier3d-deterministic-compat';
import { clamp, datan2 } from '../core/dmath.ts';
import type { BodyPose } from '../env/types.ts';
import { sceneBodies } from '../scene/bodies.ts';
import type { Scene } from '../scene/schema.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { quatFromYaw, type MutQuat, type MutVec } from './quat.ts';
import { GROUP_WORLD, type RobotRig, type RobotHandles } from './robot.ts';

type Rapier = typeof RAPIER_NS;
type RigidBody = RAPIER_NS.RigidBody;

/** Tool yaw targets are clamped to +-YAW_LIMIT (the two-finger gripper is symmetric under a half turn). */
export const YAW_LIMIT = Math.PI / 2;
/** DLS iterations per control step (warm-started from the current joints) and at a reset. */
const IK_ITERS_STEP = 6;
const IK_ITERS_RESET = 300;
const GRAVITY = 9.81;
/** Predictive-contact distance (m; Rapier's default is 2 cm). At 2 cm a rotated finger passing a cube
 *  kept a speculative cuboid-cuboid contact whose impulses pressed the cube into the table and jammed
 *  the fingers mid-close; 2 mm covers the fastest motion here (about 2 mm per substep). */
const PREDICTION_DISTANCE = 0.002;
const ORIGIN = { x: 0, y: 0, z: 0 };

let controlSteps = 0;
/** Control steps every TabletopSim of this process has taken (a run's counted physics steps are checked
 *  against it). */
export const controlStepsTaken = (): number => controlSteps;

/** Everything besides the Rapier world that an exact snapshot of one sim needs. */
export interface SimSnapshot {
  world: Uint8Array;
  handles: RobotHandles;
  objects: number[];
  q: Float64Array;
  target: Float64Array;
  yaw: number;
  grip: number;
  motor: number;
}

/** One tabletop world: static table and bin walls, dynamic objects, the robot, and its command state
 *  (tool-centre-point target, yaw target, finger motor target). */
export class TabletopSim {
  world: RAPIER_NS.World | null = null;
  /** Current joint angles (the kinematic arm's exact pose after the last substep). */
  readonly q = new Float64Array(6);
  /** Commanded tool-centre-point target (always inside robot.workspace) and yaw target. */
  readonly target = new Float64Array(3);
  yaw = 0;
  /** Commanded finger opening (m from closed) and the motor target last sent (see RobotRig.motorTarget). */
  grip = 0;
  private motor = 0;
  private handles: RobotHandles | null = null;
  private objectHandles: number[] = [];
  private links: RigidBody[] = [];
  private palm: RigidBody | null = null;
  private fingers: RigidBody[] = [];
  private joints: RAPIER_NS.PrismaticImpulseJoint[] = [];
  private objects: RigidBody[] = [];
  /** objects, links, palm, fingers: the bodies poses() reports, in that order. */
  private moving: RigidBody[] = [];
  /** Colliders whose manifolds are rebuilt every substep (see refreshContacts). */
  private refresh: RAPIER_NS.Collider[] = [];
  private readonly q0 = new Float64Array(6);
  private readonly qT = new Float64Array(6);
  private readonly qs = new Float64Array(6);
  private readonly openings = new Float64Array(2);
  private readonly v: MutVec = { x: 0, y: 0, z: 0 };
  private readonly r: MutQuat = { x: 0, y: 0, z: 0, w: 1 };

  constructor(
    private readonly R: Rapier,
    readonly scene: Scene,
    readonly rig: RobotRig,
  ) {}

  /** Replaces the world with a fresh one laid out as `task` says (fresh, so nothing carries over). */
  reset(task: TaskInstance): void {
    const { R, scene, rig } = this;
    this.free();
    const robot = scene.robot;
    this.q.set(robot.home);
    const err = rig.kin.solve(this.q, task.initEe, 0, IK_ITERS_RESET);
    if (err > 1e-4)
      throw new RangeError(
        `task ${task.taskId} seed ${task.seed}: initEe ${task.initEe.join(', ')} is out of the arm's reach ` +
          `(IK error ${err.toFixed(4)} m)`,
      );
    this.target.set(task.initEe);
    this.clampTarget();
    this.yaw = 0;
    this.grip = robot.finger.maxOpening;
    this.motor = this.grip;
    const world = new R.World({ x: 0, y: 0, z: -GRAVITY });
    world.timestep = scene.control.timestep;
    world.numSolverIterations = scene.control.solverIterations;
    world.integrationParameters.contact_natural_frequency = scene.control.contactNaturalFrequency;
    world.integrationParameters.normalizedPredictionDistance = PREDICTION_DISTANCE;
    this.buildStatics(world);
    this.objectHandles = scene.objects.map((obj, i) => {
      const init = task.initObjects[i];
      if (!init)
        throw new RangeError(
          `task ${task.taskId} seed ${task.seed}: initObjects[${i}] missing for object "${obj.name}"`,
        );
      const body = world.createRigidBody(
        R.RigidBodyDesc.dynamic()
          .setTranslation(init.pos[0], init.pos[1], init.pos[2])
          .setRotation(quatFromYaw(init.yaw)),
      );
      const [hx, hy, hz] = obj.halfExtents;
      const desc =
        obj.shape === 'box'
          ? R.ColliderDesc.cuboid(hx, hy, hz)
          : // Rapier's axis is y
            R.ColliderDesc.cylinder(hz, hx).setRotation({ x: Math.SQRT1_2, y: 0, z: 0, w: Math.SQRT1_2 });
      world.createCollider(desc.setMass(obj.mass).setFriction(obj.friction).setCollisionGroups(GROUP_WORLD), body);
      return body.handle;
    });
    this.handles = rig.build(R, world, this.q, this.grip);
    this.world = world;
    this.bind();
  }

  /** Table and bin floor/walls as static cuboids; zones have no colliders. */
  private buildStatics(world: RAPIER_NS.World): void {
    const { R } = this;
    for (const b of sceneBodies(this.scene)) {
      if (!b.pose || b.name.startsWith('zone_')) continue;
      const body = world.createRigidBody(
        R.RigidBodyDesc.fixed().setTranslation(b.pose.pos[0], b.pose.pos[1], b.pose.pos[2]),
      );
      const friction = b.name === 'table' ? this.scene.table.friction : 0.6;
      world.createCollider(
        R.ColliderDesc.cuboid(...b.halfExtents)
          .setFriction(friction)
          .setCollisionGroups(GROUP_WORLD),
        body,
      );
    }
  }

  /** Re-fetches the body objects by handle (after a build or a snapshot restore). */
  private bind(): void {
    const world = this.world!;
    const h = this.handles!;
    this.links = h.links.map((x) => world.getRigidBody(x));
    this.palm = world.getRigidBody(h.palm);
    this.fingers = h.fingers.map((x) => world.getRigidBody(x));
    this.joints = h.joints.map((x) => world.getImpulseJoint(x) as RAPIER_NS.PrismaticImpulseJoint);
    this.objects = this.objectHandles.map((x) => world.getRigidBody(x));
    this.moving = [...this.objects, ...this.links, this.palm, ...this.fingers];
    this.refresh = this.moving.map((b) => b.collider(0));
  }

  /** Rapier keeps a contact manifold while its two shapes slide along the contact plane and only drops
   *  it when their (loose) bounding boxes part, so a gripper lifted off a cube's side kept pushing it
   *  from centimetres away. Touching a collider's local pose marks it modified, which makes the narrow
   *  phase rebuild its manifolds from the shapes each substep (impulses still carry over by feature). */
  private refreshContacts(): void {
    for (const c of this.refresh) c.setTranslationWrtParent(ORIGIN);
  }

  private clampTarget(): void {
    const { min, max } = this.scene.robot.workspace;
    for (let d = 0; d < 3; d++) this.target[d] = clamp(this.target[d], min[d], max[d]);
  }

  /** One control step: move the target by (dx, dy, dz, dyaw) (clamped into the workspace), solve IK,
   *  set the finger motors to `grip`, then run the substeps with the joints interpolated linearly. */
  control(dx: number, dy: number, dz: number, dyaw: number, grip: number): void {
    const world = this.world;
    if (!world) throw new Error('TabletopSim.control before reset');
    controlSteps++;
    this.target[0] += dx;
    this.target[1] += dy;
    this.target[2] += dz;
    this.clampTarget();
    this.yaw = clamp(this.yaw + dyaw, -YAW_LIMIT, YAW_LIMIT);
    this.grip = grip;
    const { q0, qT, qs, q } = this;
    q0.set(q);
    qT.set(q);
    this.rig.kin.solve(qT, this.target, this.yaw, IK_ITERS_STEP);
    const n = this.scene.control.substeps;
    for (let s = 1; s <= n; s++) {
      const a = s / n;
      for (let j = 0; j < 6; j++) qs[j] = q0[j] + (qT[j] - q0[j]) * a;
      this.rig.pose(this.links, this.palm!, qs, true);
      const motor = this.rig.motorTarget(this.fingers, grip, this.v);
      if (motor !== this.motor) {
        this.motor = motor;
        this.rig.setMotors(this.joints, motor);
      }
      this.refreshContacts();
      world.step();
    }
    q.set(qT);
  }

  /** The privileged state (fresh arrays: callers may keep it). */
  state(): TabletopState {
    const { rig } = this;
    rig.kin.fk(this.q);
    const [c, s] = rig.kin.yawOf();
    rig.openings(this.fingers, this.openings, this.v);
    const tcp = rig.kin.tcp;
    return {
      eePos: [tcp[0], tcp[1], tcp[2]],
      eeYaw: datan2(s, c),
      fingers: [this.openings[0], this.openings[1]],
      objects: this.objects.map((b) => {
        const t = b.translation(this.v);
        const pos: [number, number, number] = [t.x, t.y, t.z];
        const r = b.rotation(this.r);
        const quat: [number, number, number, number] = [r.x, r.y, r.z, r.w];
        const l = b.linvel();
        return { pos, quat, linVel: [l.x, l.y, l.z] };
      }),
    };
  }

  /** Poses of every moving body, named as in sceneBodies(scene): objects, links, palm, fingers.
   *  With `out` (from an earlier call) the poses are written into it instead of fresh objects. */
  poses(out?: BodyPose[]): BodyPose[] {
    const bodies = this.moving;
    const poses =
      out ??
      this.poseNames().map((name) => ({
        name,
        pos: [0, 0, 0] as BodyPose['pos'],
        quat: [0, 0, 0, 1] as BodyPose['quat'],
      }));
    for (let i = 0; i < bodies.length; i++) {
      const t = bodies[i].translation(this.v);
      const r = bodies[i].rotation(this.r);
      const p = poses[i];
      p.pos[0] = t.x;
      p.pos[1] = t.y;
      p.pos[2] = t.z;
      p.quat[0] = r.x;
      p.quat[1] = r.y;
      p.quat[2] = r.z;
      p.quat[3] = r.w;
    }
    return poses;
  }

  private poseNames(): string[] {
    return [
      ...this.scene.objects.map((o) => o.name),
      ...this.scene.robot.links.map((l) => l.name),
      'palm',
      'finger_left',
      'finger_right',
    ];
  }

  snapshot(): SimSnapshot {
    if (!this.world) throw new Error('TabletopSim.snapshot before reset');
    return {
      world: this.world.takeSnapshot(),
      handles: this.handles!,
      objects: this.objectHandles.slice(),
      q: this.q.slice(),
      target: this.target.slice(),
      yaw: this.yaw,
      grip: this.grip,
      motor: this.motor,
    };
  }

  restore(snap: SimSnapshot): void {
    this.free();
    this.world = this.R.World.restoreSnapshot(snap.world);
    this.handles = snap.handles;
    this.objectHandles = snap.objects.slice();
    this.q.set(snap.q);
    this.target.set(snap.target);
    this.yaw = snap.yaw;
    this.grip = snap.grip;
    this.motor = snap.motor;
    this.bind();
  }

  free(): void {
    this.world?.free();
    this.world = null;
  }
}

/** A SimSnapshot as one buffer: a float64 head (counts, handles, arm and command state) then the
 *  world's own bytes. */
export function encodeSimSnapshot(s: SimSnapshot): Uint8Array {
  const h = s.handles;
  const head = [
    h.links.length,
    s.objects.length,
    ...h.links,
    h.palm,
    ...h.fingers,
    ...h.joints,
    ...s.objects,
    ...s.q,
    ...s.target,
    s.yaw,
    s.grip,
    s.motor,
  ];
  const out = new Uint8Array(8 * (head.length + 1) + s.world.length);
  const view = new DataView(out.buffer);
  view.setFloat64(0, head.length, true);
  head.forEach((x, k) => view.setFloat64(8 * (k + 1), x, true));
  out.set(s.world, 8 * (head.length + 1));
  return out;
}

export function decodeSimSnapshot(bytes: Uint8Array): SimSnapshot {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = (k: number) => view.getFloat64(8 * k, true);
  const size = bytes.byteLength >= 8 ? at(0) : -1;
  if (!(Number.isInteger(size) && size >= 2 && 8 * (size + 1) <= bytes.byteLength))
    throw new RangeError('decodeSimSnapshot: not a physics snapshot');
  const head = Array.from({ length: size }, (_, k) => at(k + 1));
  const [links, objects] = head;
  let k = 2;
  const take = (n: number) => head.slice(k, (k += n));
  const handles: RobotHandles = {
    links: take(links),
    palm: take(1)[0],
    fingers: take(2) as [number, number],
    joints: take(2) as [number, number],
  };
  const objectHandles = take(objects);
  const q = Float64Array.from(take(6));
  const target = Float64Array.from(take(3));
  const [yaw, grip, motor] = take(3);
  if (k !== size) throw new RangeError(`decodeSimSnapshot: head has ${size} values, expected ${k}`);
  return { world: bytes.slice(8 * (size + 1)), handles, objects: objectHandles, q, target, yaw, grip, motor };
}
