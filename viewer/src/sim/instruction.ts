// Typed instruction -> a task family of the scene and a train-split seed whose sampled episode moves
// the object the words name to the target they name. Browser-safe.
import { splitWords } from '../../../src/policy/tokenizer.ts';
import type { Scene, TaskFamilyConfig } from '../../../src/scene/schema.ts';
import { splitSeed } from '../../../src/task/families.ts';
import { familyPairs, sampleTask } from '../../../src/task/sample.ts';

/** Train-split seeds searched per family (a family of P pairs matches about one seed in P). */
export const MATCH_SEEDS = 1000;

interface Mention {
  name: string;
  at: number;
  length: number;
}

/** Every phrase of a scene object, zone or bin found in `words`, by position; outside those, every word
 *  that belongs to one thing's phrases only ("red": the red cube, "bin": the grey bin). */
function mentions(scene: Scene, words: string[]): Mention[] {
  const things = [...scene.objects, ...scene.zones, ...scene.bins];
  const found: Mention[] = [];
  for (const thing of things) {
    for (const phrase of thing.words.map(splitWords)) {
      for (let at = 0; at + phrase.length <= words.length; at++) {
        if (phrase.every((w, k) => words[at + k] === w)) found.push({ name: thing.name, at, length: phrase.length });
      }
    }
  }
  const owners = new Map<string, Set<string>>();
  for (const thing of things)
    for (const w of thing.words.flatMap(splitWords)) owners.set(w, (owners.get(w) ?? new Set()).add(thing.name));
  const covered = (at: number) => found.some((m) => at >= m.at && at < m.at + m.length);
  words.forEach((w, at) => {
    const own = owners.get(w);
    if (own?.size === 1 && !covered(at)) found.push({ name: [...own][0], at, length: 1 });
  });
  return found.sort((a, b) => a.at - b.at || b.length - a.length);
}

/** Why `text` names no object and target of the scene (for the page to show), or null when it does. */
export function instructionMismatch(scene: Scene, text: string): string | null {
  const words = splitWords(text);
  const all = mentions(scene, words);
  const isObject = (m: Mention) => scene.objects.some((o) => o.name === m.name);
  if (!all.some(isObject)) return `no object named: say which (${scene.objects.map((o) => o.words[0]).join(', ')})`;
  if (!objectAndTarget(scene, words)) return 'no target named: say where (a zone, the bin or another object)';
  return null;
}

/** The object (first object mentioned) and target (first other thing mentioned, not overlapping it). */
function objectAndTarget(scene: Scene, words: string[]): [string, string] | null {
  const all = mentions(scene, words);
  const object = all.find((m) => scene.objects.some((o) => o.name === m.name));
  if (!object) return null;
  const target = all.find(
    (m) => m.name !== object.name && (m.at >= object.at + object.length || m.at + m.length <= object.at),
  );
  return target ? [object.name, target.name] : null;
}

/** Share of a family's template words (best template, placeholders and "the" left out) in `words`. */
function templateScore(task: TaskFamilyConfig, words: string[]): number {
  const have = new Set(words);
  return Math.max(
    ...task.templates.map((t) => {
      const own = splitWords(t.replace(/\{object\}|\{target\}/g, ' ')).filter((w) => w !== 'the');
      return own.length ? own.filter((w) => have.has(w)).length / own.length : 0;
    }),
  );
}

/** A task id and train-split seed for a typed instruction. Families that have the named (object,
 *  target) pair are ranked by template match; the best ones (ties in scene order) whose training set has
 *  the pair are searched over their first MATCH_SEEDS train seeds. null when the text names no object
 *  and target, the pair is held out of the best families' training set, or no seed fits. */
export function matchInstruction(
  scene: Scene,
  text: string,
): { task: string; seed: number; object: string; target: string } | null {
  const words = splitWords(text);
  const pair = objectAndTarget(scene, words);
  if (!pair) return null;
  const [object, target] = pair;
  const same = ([o, g]: readonly string[]) => o === object && g === target;
  const named = scene.tasks
    .filter((t) => familyPairs(t).some(same))
    .map((task) => ({ task, score: templateScore(task, words) }));
  const best = Math.max(...named.map((n) => n.score));
  const candidates = named.filter((n) => n.score === best && !n.task.heldoutPairs.some(same));
  const objectIndex = scene.objects.findIndex((o) => o.name === object);
  const lists = { zone: scene.zones, bin: scene.bins, object: scene.objects };
  for (const { task } of candidates) {
    for (let i = 0; i < MATCH_SEEDS; i++) {
      const seed = splitSeed(scene, 'train', i);
      const t = sampleTask(scene, task.id, seed);
      if (t.object === objectIndex && lists[t.target.kind][t.target.index].name === target)
        return { task: task.id, seed, object, target };
    }
  }
  return null;
}
