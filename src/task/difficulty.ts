// Scene-level difficulty of an episode, from its sampled layout alone: how far the object starts from
// its target and how crowded its neighbourhood is, each scaled to [0, 1] by the spawn area.
import type { Scene } from '../scene/schema.ts';
import { distXY } from './geometry.ts';
import type { TaskInstance } from './types.ts';

/** Where the target of an episode is at the start (zone or bin centre, or the target object). */
function targetXY(scene: Scene, t: TaskInstance): [number, number] {
  if (t.target.kind === 'zone') return [scene.zones[t.target.index].centre[0], scene.zones[t.target.index].centre[1]];
  if (t.target.kind === 'bin') return [scene.bins[t.target.index].centre[0], scene.bins[t.target.index].centre[1]];
  const p = t.initObjects[t.target.index].pos;
  return [p[0], p[1]];
}

/** Mean of (object-target start distance / spawn diagonal) and (1 − distance from the object to its
 *  nearest other object / spawn diagonal): 0 is near and uncluttered, 1 far and crowded. */
export function sceneDifficulty(scene: Scene, t: TaskInstance): number {
  const { objectX, objectY } = scene.randomization;
  const diagonal = distXY([objectX[0], objectY[0]], [objectX[1], objectY[1]]);
  const own = t.initObjects[t.object].pos;
  const far = Math.min(1, distXY(own, [...targetXY(scene, t), 0]) / diagonal);
  const others = t.initObjects.filter(
    (_, i) => i !== t.object && !(t.target.kind === 'object' && t.target.index === i),
  );
  const nearest = Math.min(diagonal, ...others.map((o) => distXY(own, o.pos)));
  return (far + (1 - nearest / diagonal)) / 2;
}
