import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { readJsonFile, writeFileAtomic, writeJsonAtomic } from '../core/node-files.ts';
import type { Episode } from './collect.ts';

// A run folder of episodes: episodes.bin holds, per episode back to back, little-endian
// Int32 action tokens (length x actionNames), Float32 rewards (length) and, when recorded, Float32
// states ((length + 1) x stateNames); index.json says where each episode starts and what it was.
export const EPISODE_FORMAT = 'wmrl-episodes/1';

const EpisodeEntrySchema = z.object({
  task: z.string(),
  seed: z.number().int(),
  split: z.enum(['train', 'heldout']).optional(),
  policy: z.string(),
  instruction: z.string(),
  length: z.number().int().min(0),
  success: z.boolean(),
  return: z.number(),
  progress: z.number(),
  /** Byte offset of this episode's record in episodes.bin. */
  offset: z.number().int().min(0),
});

export const EpisodeIndexSchema = z.object({
  format: z.literal(EPISODE_FORMAT),
  createdAt: z.string(),
  command: z.string(),
  actionNames: z.array(z.string()).min(1),
  stateNames: z.array(z.string()),
  episodes: z.array(EpisodeEntrySchema),
});
export type EpisodeIndex = z.infer<typeof EpisodeIndexSchema>;
export type EpisodeEntry = z.infer<typeof EpisodeEntrySchema>;
export type StoredEpisode = Episode & { task: string; split?: 'train' | 'heldout'; policy: string };

function recordBytes(length: number, actions: number, stateSize: number): number {
  return 4 * (length * actions + length + (stateSize ? (length + 1) * stateSize : 0));
}

/** Write episodes.bin then index.json (each atomically; the index last, so a reader never sees an
 *  index that points past the data). */
export function writeEpisodeFolder(dir: string, meta: { command: string; actionNames: string[]; stateNames: string[] }, episodes: StoredEpisode[]): EpisodeIndex {
  const A = meta.actionNames.length;
  const S = meta.stateNames.length;
  const total = episodes.reduce((sum, e) => sum + recordBytes(e.length, A, S), 0);
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  const entries: EpisodeEntry[] = [];
  let offset = 0;
  for (const e of episodes) {
    if (e.actions.length !== e.length * A) throw new RangeError(`episode seed ${e.seed}: ${e.actions.length} action tokens, expected ${e.length} x ${A}`);
    if (S && e.states?.length !== (e.length + 1) * S) throw new RangeError(`episode seed ${e.seed}: ${e.states?.length ?? 0} state values, expected ${e.length + 1} x ${S}`);
    entries.push({ task: e.task, seed: e.seed, split: e.split, policy: e.policy, instruction: e.instruction, length: e.length, success: e.success, return: e.return, progress: e.progress, offset });
    let k = offset;
    for (const a of e.actions) { view.setInt32(k, a, true); k += 4; }
    for (const r of e.rewards) { view.setFloat32(k, r, true); k += 4; }
    if (S) for (const s of e.states!) { view.setFloat32(k, s, true); k += 4; }
    offset = k;
  }
  const index: EpisodeIndex = { format: EPISODE_FORMAT, createdAt: new Date().toISOString(), command: meta.command, actionNames: meta.actionNames, stateNames: meta.stateNames, episodes: entries };
  writeFileAtomic(join(dir, 'episodes.bin'), bytes);
  writeJsonAtomic(join(dir, 'index.json'), index);
  return index;
}

export function readEpisodeIndex(dir: string): EpisodeIndex {
  return readJsonFile(join(dir, 'index.json'), EpisodeIndexSchema, 'episode index');
}

export function readEpisodeFolder(dir: string): { index: EpisodeIndex; episodes: StoredEpisode[] } {
  const index = readEpisodeIndex(dir);
  const bin = readFileSync(join(dir, 'episodes.bin'));
  const view = new DataView(bin.buffer, bin.byteOffset, bin.byteLength);
  const A = index.actionNames.length;
  const S = index.stateNames.length;
  const episodes = index.episodes.map((e, i): StoredEpisode => {
    const end = e.offset + recordBytes(e.length, A, S);
    if (end > bin.byteLength) throw new Error(`${join(dir, 'index.json')}: $.episodes[${i}] points past the end of episodes.bin`);
    let k = e.offset;
    const actions = new Int32Array(e.length * A);
    for (let j = 0; j < actions.length; j++, k += 4) actions[j] = view.getInt32(k, true);
    const rewards = new Float32Array(e.length);
    for (let j = 0; j < rewards.length; j++, k += 4) rewards[j] = view.getFloat32(k, true);
    let states: Float32Array | undefined;
    if (S) {
      states = new Float32Array((e.length + 1) * S);
      for (let j = 0; j < states.length; j++, k += 4) states[j] = view.getFloat32(k, true);
    }
    return { ...e, actions, rewards, states };
  });
  return { index, episodes };
}
