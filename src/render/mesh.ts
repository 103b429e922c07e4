import { dcos, dsin } from '../core/dmath.ts';
import type { BodyGeometry } from '../scene/bodies.ts';

/** A body's triangles in its local frame, built once. Triangles are counter-clockwise seen from
 *  outside; each belongs to a flat face with one outward normal (and one shade per frame). */
export interface Mesh {
  /** xyz per vertex. */
  vertices: Float64Array;
  /** Three vertex indices per triangle. */
  triangles: Uint16Array;
  /** Face index per triangle. */
  triangleFace: Uint16Array;
  /** Outward unit normal xyz per face. */
  normals: Float64Array;
  /** One vertex index on each face (for back-face tests). */
  faceVertex: Uint16Array;
}

export const CYLINDER_SIDES = 12;

interface MeshBuilder {
  vertices: number[];
  triangles: number[];
  triangleFace: number[];
  normals: number[];
  faceVertex: number[];
}

/** Adds a convex planar polygon (vertex indices counter-clockwise from outside) as a triangle fan. */
function addFace(b: MeshBuilder, ring: number[], normal: [number, number, number]): void {
  const face = b.faceVertex.length;
  b.faceVertex.push(ring[0]);
  b.normals.push(normal[0], normal[1], normal[2]);
  for (let k = 1; k + 1 < ring.length; k++) {
    b.triangles.push(ring[0], ring[k], ring[k + 1]);
    b.triangleFace.push(face);
  }
}

function boxMesh(b: MeshBuilder, [hx, hy, hz]: readonly number[]): void {
  // vertex i has x = ±hx by bit 0, y by bit 1, z by bit 2
  for (let i = 0; i < 8; i++) b.vertices.push(i & 1 ? hx : -hx, i & 2 ? hy : -hy, i & 4 ? hz : -hz);
  addFace(b, [1, 3, 7, 5], [1, 0, 0]);
  addFace(b, [0, 4, 6, 2], [-1, 0, 0]);
  addFace(b, [2, 6, 7, 3], [0, 1, 0]);
  addFace(b, [0, 1, 5, 4], [0, -1, 0]);
  addFace(b, [4, 5, 7, 6], [0, 0, 1]);
  addFace(b, [0, 2, 3, 1], [0, 0, -1]);
}

/** Prism with CYLINDER_SIDES flat sides along local z; radius halfExtents[0], half height [2]. */
function cylinderMesh(b: MeshBuilder, halfExtents: readonly number[]): void {
  const r = halfExtents[0];
  const hz = halfExtents[2];
  const n = CYLINDER_SIDES;
  const step = (2 * Math.PI) / n;
  for (let k = 0; k < n; k++) {
    const c = dcos(k * step);
    const s = dsin(k * step);
    b.vertices.push(r * c, r * s, -hz, r * c, r * s, hz); // bottom 2k, top 2k + 1
  }
  for (let k = 0; k < n; k++) {
    const k1 = (k + 1) % n;
    const mid = (k + 0.5) * step;
    addFace(b, [2 * k, 2 * k1, 2 * k1 + 1, 2 * k + 1], [dcos(mid), dsin(mid), 0]);
  }
  const top: number[] = [];
  const bottom: number[] = [];
  for (let k = 0; k < n; k++) {
    top.push(2 * k + 1);
    bottom.push(2 * (n - 1 - k));
  }
  addFace(b, top, [0, 0, 1]);
  addFace(b, bottom, [0, 0, -1]);
}

export function buildMesh(body: BodyGeometry): Mesh {
  const b: MeshBuilder = { vertices: [], triangles: [], triangleFace: [], normals: [], faceVertex: [] };
  if (body.shape === 'box') boxMesh(b, body.halfExtents);
  else if (body.shape === 'cylinder') cylinderMesh(b, body.halfExtents);
  else throw new Error(`body "${body.name}": unknown shape "${String(body.shape)}"`);
  return {
    vertices: Float64Array.from(b.vertices),
    triangles: Uint16Array.from(b.triangles),
    triangleFace: Uint16Array.from(b.triangleFace),
    normals: Float64Array.from(b.normals),
    faceVertex: Uint16Array.from(b.faceVertex),
  };
}
