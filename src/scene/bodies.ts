import type { Quat, Scene, Vec3 } from './schema.ts';

/** Geometry of one body the renderer and the viewer draw. Dynamic and kinematic bodies get their
 *  poses per step from the env's frame() (matched by name); static bodies carry their pose here. */
export interface BodyGeometry {
  name: string;
  shape: 'box' | 'cylinder';
  /** box: half extents; cylinder: [radius, radius, half height] along local z. */
  halfExtents: Vec3;
  colour: [number, number, number];
  /** Pose for static bodies (table, zones, bins); undefined for moving ones. */
  pose?: { pos: Vec3; quat: Quat };
}

const IDENTITY: Quat = [0, 0, 0, 1];
/** Zones are drawn as thin slabs just above the table top. */
export const ZONE_THICKNESS = 0.001;
export const TABLE_THICKNESS = 0.05;

/** Every body of a scene, static first, in a fixed order. Names: "table", "zone_<n>", "bin_<n>_floor",
 *  "bin_<n>_wall<k>", object names, robot link names, "palm", "finger_left", "finger_right". */
export function sceneBodies(scene: Scene): BodyGeometry[] {
  const bodies: BodyGeometry[] = [];
  const [tx, ty] = scene.table.halfSize;
  bodies.push({
    name: 'table',
    shape: 'box',
    halfExtents: [tx, ty, TABLE_THICKNESS / 2],
    colour: scene.table.colour,
    pose: { pos: [0, 0, -TABLE_THICKNESS / 2], quat: IDENTITY },
  });
  for (const zone of scene.zones) {
    bodies.push({
      name: `zone_${zone.name}`,
      shape: 'box',
      halfExtents: [zone.halfSize[0], zone.halfSize[1], ZONE_THICKNESS / 2],
      colour: zone.colour,
      pose: { pos: [zone.centre[0], zone.centre[1], ZONE_THICKNESS / 2], quat: IDENTITY },
    });
  }
  for (const bin of scene.bins) {
    const [cx, cy] = bin.centre;
    const [hx, hy] = bin.halfSize;
    const t = bin.wallThickness / 2;
    const h = bin.height / 2;
    bodies.push({
      name: `bin_${bin.name}_floor`,
      shape: 'box',
      halfExtents: [hx + 2 * t, hy + 2 * t, ZONE_THICKNESS / 2],
      colour: bin.colour,
      pose: { pos: [cx, cy, ZONE_THICKNESS / 2], quat: IDENTITY },
    });
    const walls: [Vec3, Vec3][] = [
      [
        [cx + hx + t, cy, h],
        [t, hy + 2 * t, h],
      ],
      [
        [cx - hx - t, cy, h],
        [t, hy + 2 * t, h],
      ],
      [
        [cx, cy + hy + t, h],
        [hx, t, h],
      ],
      [
        [cx, cy - hy - t, h],
        [hx, t, h],
      ],
    ];
    walls.forEach(([pos, half], k) =>
      bodies.push({
        name: `bin_${bin.name}_wall${k}`,
        shape: 'box',
        halfExtents: half,
        colour: bin.colour,
        pose: { pos, quat: IDENTITY },
      }),
    );
  }
  for (const obj of scene.objects)
    bodies.push({ name: obj.name, shape: obj.shape, halfExtents: obj.halfExtents, colour: obj.colour });
  for (const link of scene.robot.links)
    bodies.push({ name: link.name, shape: 'box', halfExtents: link.halfExtents, colour: link.colour });
  bodies.push({
    name: 'palm',
    shape: 'box',
    halfExtents: scene.robot.palm.halfExtents,
    colour: scene.robot.palm.colour,
  });
  for (const side of ['finger_left', 'finger_right'])
    bodies.push({
      name: side,
      shape: 'box',
      halfExtents: scene.robot.finger.halfExtents,
      colour: scene.robot.finger.colour,
    });
  return bodies;
}
