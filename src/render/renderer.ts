import { sceneBodies } from '../scene/bodies.ts';
import type { CameraConfig, Scene } from '../scene/schema.ts';
import { focalPixels, lookAt, quatToMatrix, wristPose, type CameraPose } from './camera.ts';
import { buildMesh, type Mesh } from './mesh.ts';
import { Rasterizer } from './raster.ts';

/** A moving body's world pose: position xyz, quaternion xyzw (structurally the env's BodyPose). */
export interface RenderPose {
  name: string;
  pos: readonly [number, number, number];
  quat: readonly [number, number, number, number];
}

export interface Renderer {
  readonly width: number;
  readonly height: number;
  readonly camera: CameraConfig;
  /** Writes width*height*3 RGB bytes (row-major, top row first) into `out` at `offset` (a new buffer
   *  when omitted) and returns it. Static bodies use their scene pose; moving bodies are drawn only
   *  when `poses` names them; a pose for an unknown body name throws. */
  render(poses: readonly RenderPose[], out?: Uint8Array, offset?: number): Uint8Array;
}

/** Flat Lambert shading: ambient + DIFFUSE * max(0, n . light). */
export const AMBIENT = 0.4;
export const DIFFUSE = 0.6;

function toByte(v: number): number {
  return Math.max(0, Math.min(255, Math.floor(v * 255 + 0.5)));
}

export function createRenderer(scene: Scene, cameraName: string): Renderer {
  const camera = scene.cameras.find((c) => c.name === cameraName);
  if (!camera)
    throw new Error(
      `cameras: no camera named "${cameraName}" (have ${scene.cameras.map((c) => `"${c.name}"`).join(', ')})`,
    );
  return new SceneRenderer(scene, camera);
}

class SceneRenderer implements Renderer {
  readonly width: number;
  readonly height: number;
  private readonly raster: Rasterizer;
  private readonly meshes: Mesh[];
  private readonly colours: Float64Array;
  private readonly isStatic: Uint8Array;
  private readonly index = new Map<string, number>();
  private readonly pos: Float64Array;
  private readonly rot: Float64Array;
  /** Frame number in which each moving body last received a pose. */
  private readonly stamp: Int32Array;
  private frame = 0;
  private readonly light: [number, number, number];
  private readonly background: [number, number, number];
  private readonly cam: CameraPose = { eye: new Float64Array(3), rot: new Float64Array(9) };
  private readonly verts: Float64Array;
  private readonly faceRgb: Int32Array;
  private readonly palm: number;
  /** Fixed cameras: static bodies pre-rendered once (colour and depth). */
  private readonly baseRgb?: Uint8Array;
  private readonly baseDepth?: Float64Array;

  constructor(
    scene: Scene,
    readonly camera: CameraConfig,
  ) {
    this.width = camera.width;
    this.height = camera.height;
    this.raster = new Rasterizer(camera.width, camera.height, focalPixels(camera));
    const bodies = sceneBodies(scene);
    const n = bodies.length;
    this.meshes = bodies.map(buildMesh);
    this.colours = new Float64Array(3 * n);
    this.isStatic = new Uint8Array(n);
    this.pos = new Float64Array(3 * n);
    this.rot = new Float64Array(9 * n);
    this.stamp = new Int32Array(n).fill(-1);
    bodies.forEach((body, i) => {
      if (this.index.has(body.name)) throw new Error(`scene: two bodies are named "${body.name}"`);
      this.index.set(body.name, i);
      this.colours.set(body.colour, 3 * i);
      if (body.pose) {
        this.isStatic[i] = 1;
        this.setPose(i, body.pose.pos, body.pose.quat, `body "${body.name}"`);
      }
    });
    const [lx, ly, lz] = scene.lightDirection;
    const ll = Math.sqrt(lx * lx + ly * ly + lz * lz);
    if (!(ll > 0)) throw new Error('lightDirection: must be a non-zero vector');
    this.light = [lx / ll, ly / ll, lz / ll];
    this.background = [toByte(scene.background[0]), toByte(scene.background[1]), toByte(scene.background[2])];
    this.verts = new Float64Array(3 * Math.max(...this.meshes.map((m) => m.vertices.length / 3)));
    this.faceRgb = new Int32Array(3 * Math.max(...this.meshes.map((m) => m.faceVertex.length)));
    this.palm = this.index.get('palm') ?? -1;
    if (camera.mount === 'fixed') {
      const [ex, ey, ez] = camera.position,
        [tx, ty, tz] = camera.target,
        [ux, uy, uz] = camera.up;
      lookAt(this.cam, ex, ey, ez, tx, ty, tz, ux, uy, uz, camera.name);
      this.baseRgb = new Uint8Array(this.width * this.height * 3);
      this.clear(this.baseRgb, 0);
      this.drawBodies(true);
      this.baseDepth = Float64Array.from(this.raster.depth);
    } else if (this.palm < 0) {
      throw new Error(`camera "${camera.name}": wrist mount needs a body named "palm"`);
    }
  }

  render(poses: readonly RenderPose[], out?: Uint8Array, offset = 0): Uint8Array {
    const size = this.width * this.height * 3;
    const buf = out ?? new Uint8Array(size);
    if (!Number.isInteger(offset) || offset < 0 || offset + size > buf.length) {
      throw new RangeError(`render: out (length ${buf.length}) has no room for ${size} bytes at offset ${offset}`);
    }
    const frame = ++this.frame;
    for (const p of poses) {
      const i = this.index.get(p.name);
      if (i === undefined) throw new Error(`render: pose for unknown body "${p.name}"`);
      if (this.isStatic[i]) continue;
      if (this.stamp[i] === frame) throw new Error(`render: two poses for body "${p.name}"`);
      this.stamp[i] = frame;
      this.setPose(i, p.pos, p.quat, `pose "${p.name}"`);
    }
    if (this.baseRgb && this.baseDepth) {
      buf.set(this.baseRgb, offset);
      this.raster.depth.set(this.baseDepth);
      this.raster.target(buf, offset);
      this.drawBodies(false);
    } else {
      if (this.stamp[this.palm] !== frame)
        throw new Error(`render: camera "${this.camera.name}" is on the palm but no pose named "palm" was given`);
      wristPose(this.cam, this.camera, this.pos, 3 * this.palm, this.rot, 9 * this.palm);
      this.clear(buf, offset);
      this.drawBodies(true);
      this.drawBodies(false);
    }
    return buf;
  }

  private setPose(i: number, p: readonly number[], q: readonly number[], what: string): void {
    for (let k = 0; k < 3; k++)
      if (!Number.isFinite(p[k])) throw new Error(`${what}: pos[${k}] is not a finite number`);
    for (let k = 0; k < 4; k++)
      if (!Number.isFinite(q[k])) throw new Error(`${what}: quat[${k}] is not a finite number`);
    if (q[0] === 0 && q[1] === 0 && q[2] === 0 && q[3] === 0) throw new Error(`${what}: quat has zero length`);
    this.pos[3 * i] = p[0];
    this.pos[3 * i + 1] = p[1];
    this.pos[3 * i + 2] = p[2];
    quatToMatrix(this.rot, 9 * i, q[0], q[1], q[2], q[3]);
  }

  private clear(buf: Uint8Array, offset: number): void {
    const [r, g, b] = this.background;
    for (let o = offset, end = offset + this.width * this.height * 3; o < end; o += 3) {
      buf[o] = r;
      buf[o + 1] = g;
      buf[o + 2] = b;
    }
    this.raster.depth.fill(0);
    this.raster.target(buf, offset);
  }

  /** Draws the static bodies, or the moving bodies posed this frame, in scene order. */
  private drawBodies(statics: boolean): void {
    for (let i = 0; i < this.meshes.length; i++) {
      if (statics ? this.isStatic[i] === 1 : this.isStatic[i] === 0 && this.stamp[i] === this.frame) this.drawBody(i);
    }
  }

  private drawBody(i: number): void {
    const mesh = this.meshes[i];
    const R = this.rot,
      o = 9 * i,
      C = this.cam.rot,
      e = this.cam.eye;
    // M = C * R (body -> camera rotation), t = C * (p - eye)
    const m00 = C[0] * R[o] + C[1] * R[o + 3] + C[2] * R[o + 6],
      m01 = C[0] * R[o + 1] + C[1] * R[o + 4] + C[2] * R[o + 7],
      m02 = C[0] * R[o + 2] + C[1] * R[o + 5] + C[2] * R[o + 8];
    const m10 = C[3] * R[o] + C[4] * R[o + 3] + C[5] * R[o + 6],
      m11 = C[3] * R[o + 1] + C[4] * R[o + 4] + C[5] * R[o + 7],
      m12 = C[3] * R[o + 2] + C[4] * R[o + 5] + C[5] * R[o + 8];
    const m20 = C[6] * R[o] + C[7] * R[o + 3] + C[8] * R[o + 6],
      m21 = C[6] * R[o + 1] + C[7] * R[o + 4] + C[8] * R[o + 7],
      m22 = C[6] * R[o + 2] + C[7] * R[o + 5] + C[8] * R[o + 8];
    const px = this.pos[3 * i] - e[0],
      py = this.pos[3 * i + 1] - e[1],
      pz = this.pos[3 * i + 2] - e[2];
    const t0 = C[0] * px + C[1] * py + C[2] * pz,
      t1 = C[3] * px + C[4] * py + C[5] * pz,
      t2 = C[6] * px + C[7] * py + C[8] * pz;
    const lv = mesh.vertices,
      v = this.verts;
    for (let k = 0; k < lv.length; k += 3) {
      const x = lv[k],
        y = lv[k + 1],
        z = lv[k + 2];
      v[k] = m00 * x + m01 * y + m02 * z + t0;
      v[k + 1] = m10 * x + m11 * y + m12 * z + t1;
      v[k + 2] = m20 * x + m21 * y + m22 * z + t2;
    }
    const nrm = mesh.normals,
      fv = mesh.faceVertex,
      rgb = this.faceRgb,
      L = this.light;
    for (let f = 0; f < fv.length; f++) {
      const nx = nrm[3 * f],
        ny = nrm[3 * f + 1],
        nz = nrm[3 * f + 2];
      const cx = m00 * nx + m01 * ny + m02 * nz,
        cy = m10 * nx + m11 * ny + m12 * nz,
        cz = m20 * nx + m21 * ny + m22 * nz;
      const q = 3 * fv[f];
      if (cx * v[q] + cy * v[q + 1] + cz * v[q + 2] >= 0) {
        rgb[3 * f] = -1; // back face
        continue;
      }
      const wx = R[o] * nx + R[o + 1] * ny + R[o + 2] * nz,
        wy = R[o + 3] * nx + R[o + 4] * ny + R[o + 5] * nz,
        wz = R[o + 6] * nx + R[o + 7] * ny + R[o + 8] * nz;
      const shade = AMBIENT + DIFFUSE * Math.max(0, wx * L[0] + wy * L[1] + wz * L[2]);
      for (let c = 0; c < 3; c++) rgb[3 * f + c] = toByte(this.colours[3 * i + c] * shade);
    }
    const tri = mesh.triangles,
      tf = mesh.triangleFace;
    for (let t = 0; t < tf.length; t++) {
      const f = 3 * tf[t];
      if (rgb[f] < 0) continue;
      const a = 3 * tri[3 * t],
        b = 3 * tri[3 * t + 1],
        c = 3 * tri[3 * t + 2];
      this.raster.triangle(
        v[a],
        v[a + 1],
        v[a + 2],
        v[b],
        v[b + 1],
        v[b + 2],
        v[c],
        v[c + 1],
        v[c + 2],
        rgb[f],
        rgb[f + 1],
        rgb[f + 2],
      );
    }
  }
}
