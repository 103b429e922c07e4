// Triangle rasteriser in camera space (x right, y up, z forward). Vertices are clipped against the
// near plane and a guard band, projected, snapped to 1/16 pixel and rasterised with exact integer
// edge functions and a strict ownership rule for shared edges, so results are gap-free and identical
// in every JS engine. Depth is 1/z (larger = nearer), interpolated linearly in screen space.

const SUB = 16; // sub-pixel steps per pixel
/** Guard band as a multiple of the half image: clipped vertices land within [-w/2, 3w/2]. */
const GUARD = 2;
export const NEAR = 0.005;
const PLANES = 5;
const MAX_POLY = 3 + PLANES;

export class Rasterizer {
  readonly depth: Float64Array;
  private out: Uint8Array = new Uint8Array(0);
  private offset = 0;
  private readonly cx: number;
  private readonly cy: number;
  private readonly gx: number;
  private readonly gy: number;
  private polyA = new Float64Array(3 * (MAX_POLY + 1));
  private polyB = new Float64Array(3 * (MAX_POLY + 1));
  private readonly dist = new Float64Array(MAX_POLY + 1);
  private readonly proj = new Float64Array(3 * (MAX_POLY + 1));

  constructor(
    readonly width: number,
    readonly height: number,
    readonly focal: number,
  ) {
    this.depth = new Float64Array(width * height);
    this.cx = width / 2;
    this.cy = height / 2;
    this.gx = (GUARD * this.cx) / focal;
    this.gy = (GUARD * this.cy) / focal;
  }

  /** Sets the RGB buffer (and byte offset) that triangles are written into. */
  target(out: Uint8Array, offset: number): void {
    this.out = out;
    this.offset = offset;
  }

  /** Signed distance of a camera-space point to clip plane k (inside when >= 0). */
  private planeDist(k: number, x: number, y: number, z: number): number {
    if (k === 0) return z - NEAR;
    if (k === 1) return x + this.gx * z;
    if (k === 2) return this.gx * z - x;
    if (k === 3) return y + this.gy * z;
    return this.gy * z - y;
  }

  private outcode(x: number, y: number, z: number): number {
    const gx = this.gx * z,
      gy = this.gy * z;
    return (
      (z - NEAR < 0 ? 1 : 0) |
      (x + gx < 0 ? 2 : 0) |
      (gx - x < 0 ? 4 : 0) |
      (y + gy < 0 ? 8 : 0) |
      (gy - y < 0 ? 16 : 0)
    );
  }

  /** Draws one triangle given in camera space, counter-clockwise seen from its front. */
  triangle(
    ax: number,
    ay: number,
    az: number,
    bx: number,
    by: number,
    bz: number,
    cx: number,
    cy: number,
    cz: number,
    r: number,
    g: number,
    b: number,
  ): void {
    // Outcode per vertex (bit k: outside plane k), same tests as planeDist.
    const oa = this.outcode(ax, ay, az),
      ob = this.outcode(bx, by, bz),
      oc = this.outcode(cx, cy, cz);
    if (oa & ob & oc) return;
    const clipMask = oa | ob | oc;
    const p = this.polyA;
    p[0] = ax;
    p[1] = ay;
    p[2] = az;
    p[3] = bx;
    p[4] = by;
    p[5] = bz;
    p[6] = cx;
    p[7] = cy;
    p[8] = cz;
    let n = 3;
    for (let k = 0; k < PLANES && n >= 3; k++) if (clipMask & (1 << k)) n = this.clip(k, n);
    if (n < 3) return;
    const q = this.polyA;
    const s = this.proj;
    for (let i = 0; i < n; i++) {
      const iz = 1 / q[3 * i + 2];
      s[3 * i] = Math.floor((this.cx + this.focal * q[3 * i] * iz) * SUB + 0.5);
      s[3 * i + 1] = Math.floor((this.cy - this.focal * q[3 * i + 1] * iz) * SUB + 0.5);
      s[3 * i + 2] = iz;
    }
    for (let i = 1; i + 1 < n; i++) {
      this.fill(
        s[0],
        s[1],
        s[2],
        s[3 * i],
        s[3 * i + 1],
        s[3 * i + 2],
        s[3 * i + 3],
        s[3 * i + 4],
        s[3 * i + 5],
        r,
        g,
        b,
      );
    }
  }

  /** Sutherland-Hodgman against plane k, polyA -> polyA (via polyB); returns the new vertex count.
   *  Intersections always interpolate from the inside vertex to the outside one, so an edge shared by
   *  two triangles is cut at bit-identical points. */
  private clip(k: number, n: number): number {
    const src = this.polyA;
    const dst = this.polyB;
    const d = this.dist;
    for (let i = 0; i < n; i++) d[i] = this.planeDist(k, src[3 * i], src[3 * i + 1], src[3 * i + 2]);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const j = i + 1 === n ? 0 : i + 1;
      const di = d[i];
      const dj = d[j];
      if (di >= 0) {
        dst[3 * m] = src[3 * i];
        dst[3 * m + 1] = src[3 * i + 1];
        dst[3 * m + 2] = src[3 * i + 2];
        m++;
      }
      if (di >= 0 !== dj >= 0) {
        const inn = di >= 0 ? i : j;
        const outv = di >= 0 ? j : i;
        const t = d[inn] / (d[inn] - d[outv]);
        for (let c = 0; c < 3; c++) dst[3 * m + c] = src[3 * inn + c] + t * (src[3 * outv + c] - src[3 * inn + c]);
        m++;
      }
    }
    this.polyA = dst;
    this.polyB = src;
    return m;
  }

  /** Fills a snapped screen triangle (sub-pixel integer coordinates, 1/z per vertex); front faces
   *  have negative signed area in y-down screen coordinates, the rest are culled. */
  private fill(
    x0: number,
    y0: number,
    z0: number,
    x1: number,
    y1: number,
    z1: number,
    x2: number,
    y2: number,
    z2: number,
    r: number,
    g: number,
    b: number,
  ): void {
    const area = (x2 - x0) * (y1 - y0) - (y2 - y0) * (x1 - x0); // positive for front faces (v0, v2, v1)
    if (area <= 0) return;
    const inv = 1 / area;
    this.fillOriented(x0, y0, z0 * inv, x2, y2, z2 * inv, x1, y1, z1 * inv, r, g, b);
  }

  /** Fills a triangle with positive signed area (sub-pixel coordinates, w = (1/z) / area). */
  private fillOriented(
    x0: number,
    y0: number,
    w0: number,
    x1: number,
    y1: number,
    w1: number,
    x2: number,
    y2: number,
    w2: number,
    r: number,
    g: number,
    b: number,
  ): void {
    const W = this.width;
    const i0 = Math.max(0, Math.ceil((Math.min(x0, x1, x2) - SUB / 2) / SUB));
    const i1 = Math.min(W - 1, Math.floor((Math.max(x0, x1, x2) - SUB / 2) / SUB));
    const j0 = Math.max(0, Math.ceil((Math.min(y0, y1, y2) - SUB / 2) / SUB));
    const j1 = Math.min(this.height - 1, Math.floor((Math.max(y0, y1, y2) - SUB / 2) / SUB));
    if (i0 > i1 || j0 > j1) return;
    // E_ab(P) = (xb - xa)(Py - ya) - (yb - ya)(Px - xa); > 0 inside for this winding.
    // Weight of v0 is E_12, of v1 is E_20, of v2 is E_01.
    const dx12 = x2 - x1,
      dy12 = y2 - y1,
      dx20 = x0 - x2,
      dy20 = y0 - y2,
      dx01 = x1 - x0,
      dy01 = y1 - y0;
    // Ownership of points exactly on an edge: exactly one of (a->b) and (b->a) owns it.
    const t0 = dy12 > 0 || (dy12 === 0 && dx12 < 0) ? -1 : 0;
    const t1 = dy20 > 0 || (dy20 === 0 && dx20 < 0) ? -1 : 0;
    const t2 = dy01 > 0 || (dy01 === 0 && dx01 < 0) ? -1 : 0;
    const px0 = i0 * SUB + SUB / 2;
    const out = this.out;
    const depth = this.depth;
    for (let j = j0; j <= j1; j++) {
      const py = j * SUB + SUB / 2;
      let e0 = dx12 * (py - y1) - dy12 * (px0 - x1);
      let e1 = dx20 * (py - y2) - dy20 * (px0 - x2);
      let e2 = dx01 * (py - y0) - dy01 * (px0 - x0);
      let entered = false;
      for (let i = i0; i <= i1; i++) {
        if (e0 > t0 && e1 > t1 && e2 > t2) {
          entered = true;
          const d = e0 * w0 + e1 * w1 + e2 * w2;
          const idx = j * W + i;
          if (d > depth[idx]) {
            depth[idx] = d;
            const o = this.offset + 3 * idx;
            out[o] = r;
            out[o + 1] = g;
            out[o + 2] = b;
          }
        } else if (entered) break;
        e0 -= dy12 * SUB;
        e1 -= dy20 * SUB;
        e2 -= dy01 * SUB;
      }
    }
  }
}
