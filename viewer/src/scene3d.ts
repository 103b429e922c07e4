// The tabletop in three.js, built from the scene file: static bodies once, moving bodies posed per frame
// by name; a second, translucent copy of the moving bodies shows the world model's prediction (ghost).
// With no frame to show, the arm stands in its home pose and the objects are hidden.
import * as THREE from 'three';
import { OrbitControls } from 'three/examples/jsm/controls/OrbitControls.js';
import type { BodyPose } from '../../src/env/types.ts';
import { type BodyGeometry, sceneBodies } from '../../src/scene/bodies.ts';
import type { Scene } from '../../src/scene/schema.ts';
import type { TabletopState } from '../../src/task/types.ts';
import { ArmPoser } from '../../src/worldmodel/robot-pose.ts';

function geometryOf(b: BodyGeometry): THREE.BufferGeometry {
  const [x, y, z] = b.halfExtents;
  if (b.shape === 'box') return new THREE.BoxGeometry(2 * x, 2 * y, 2 * z);
  return new THREE.CylinderGeometry(x, x, 2 * z, 24).rotateX(Math.PI / 2); // three's cylinders run along y
}

function place(obj: THREE.Object3D, p: { pos: readonly number[]; quat: readonly number[] }): void {
  obj.position.set(p.pos[0], p.pos[1], p.pos[2]);
  obj.quaternion.set(p.quat[0], p.quat[1], p.quat[2], p.quat[3]);
}

export class TabletopView {
  readonly renderer: THREE.WebGLRenderer;
  private readonly scene3 = new THREE.Scene();
  private readonly camera: THREE.PerspectiveCamera;
  private readonly controls: OrbitControls;
  private readonly moving = new Map<string, THREE.Mesh>();
  private readonly ghosts = new Map<string, THREE.Mesh>();
  /** The arm's bodies at the scene's home joint angles (the objects are not part of it). */
  private readonly home: BodyPose[];
  private dirty = true;

  constructor(
    readonly canvas: HTMLCanvasElement,
    scene: Scene,
  ) {
    this.renderer = new THREE.WebGLRenderer({ canvas, antialias: true, preserveDrawingBuffer: true });
    this.renderer.setPixelRatio(1);
    this.scene3.background = new THREE.Color(...scene.background);
    this.camera = new THREE.PerspectiveCamera(45, 1, 0.01, 20);
    this.camera.up.set(0, 0, 1);
    // a three-quarter view of the table and the whole arm (base at the far edge)
    const [bx, by] = scene.robot.base;
    this.camera.position.set(bx + 0.75, by - 1.45, 0.85);
    this.controls = new OrbitControls(this.camera, canvas);
    this.controls.target.set(bx, by - 0.4, 0.12);
    this.controls.addEventListener('change', () => (this.dirty = true));
    this.controls.update();
    const [lx, ly, lz] = scene.lightDirection;
    const sun = new THREE.DirectionalLight(0xffffff, 1.6);
    sun.position.set(-lx, -ly, -lz).normalize().multiplyScalar(-2);
    this.scene3.add(sun, new THREE.HemisphereLight(0xffffff, 0x404040, 1.2));
    for (const b of sceneBodies(scene)) {
      const material = new THREE.MeshLambertMaterial({ color: new THREE.Color(...b.colour) });
      const mesh = new THREE.Mesh(geometryOf(b), material);
      this.scene3.add(mesh);
      if (b.pose) place(mesh, b.pose);
      else {
        this.moving.set(b.name, mesh);
        const ghost = new THREE.Mesh(
          mesh.geometry,
          new THREE.MeshLambertMaterial({ color: 0xff30ff, transparent: true, opacity: 0.3, depthWrite: false }),
        );
        ghost.visible = false;
        this.ghosts.set(b.name, ghost);
        this.scene3.add(ghost);
      }
    }
    this.home = homePoses(scene);
    this.show(undefined);
    new ResizeObserver(() => this.resize()).observe(canvas);
    this.resize();
    const loop = () => {
      if (this.dirty) this.draw();
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  }

  /** Poses the bodies; `ghost` poses the translucent copy (hidden when undefined). No bodies: the idle
   *  scene (the arm at home, no objects). */
  show(bodies: readonly BodyPose[] | undefined, ghost?: readonly BodyPose[]): void {
    for (const mesh of this.moving.values()) mesh.visible = bodies !== undefined;
    for (const p of bodies ?? this.home) {
      const mesh = this.moving.get(p.name);
      if (!mesh) continue;
      place(mesh, p);
      mesh.visible = true;
    }
    for (const g of this.ghosts.values()) g.visible = false;
    for (const p of ghost ?? []) {
      const g = this.ghosts.get(p.name);
      if (!g) continue;
      place(g, p);
      g.visible = true;
    }
    this.dirty = true;
  }

  private resize(): void {
    const w = this.canvas.clientWidth || 640,
      h = this.canvas.clientHeight || 480;
    this.renderer.setSize(w, h, false);
    this.camera.aspect = w / h;
    this.camera.updateProjectionMatrix();
    this.dirty = true;
  }

  private draw(): void {
    this.dirty = false;
    this.renderer.render(this.scene3, this.camera);
  }
}

/** The arm's links, palm and open fingers at the scene's home joint angles. */
function homePoses(scene: Scene): BodyPose[] {
  const open = scene.robot.finger.maxOpening;
  const state: TabletopState = {
    eePos: [0, 0, 0],
    eeYaw: 0,
    fingers: [open, open],
    objects: scene.objects.map(() => ({ pos: [0, 0, 0], quat: [0, 0, 0, 1], linVel: [0, 0, 0] })),
  };
  return new ArmPoser(scene).poses(scene.robot.home, state).slice(state.objects.length);
}
