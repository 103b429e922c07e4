import { join } from 'node:path';
import { z } from 'zod';
import { InputError } from '../core/errors.ts';
import { checkFolder, parseInput, readInputJsonRaw, readWords } from '../core/input-file.ts';
import { type CommitOptions, type Part, commitFiles, recoverFolder } from '../store/index.ts';
import type { Episode } from './collect.ts';

// A run folder of episodes: episodes.bin holds, per episode back to back, little-endian
// Int32 action tokens (length x actionNames), Float32 rewards (length) and, when recorded, Float32
// states ((length + 1) x stateNames); index.json says where each episode starts and what it was.
// index.json holds only what decides results, so the same episodes give the same bytes; run.json
// (provenance: the command and the time) sits beside it and no reader needs it.
export const EPISODE_FORMAT = 'wmrl-episodes/2';
export const RUN_INFO_FILE = 'run.json';

const EpisodeEntrySchema = z.object({
  task: z.string(),
  seed: z.number().int(),
  split: z.enum(['train', 'validation', 'heldout']).optional(),
  policy: z.string(),
  instruction: z.string(),
  length: z.number().int().min(0),
  success: z.boolean(),
  return: z.number(),
  progress: z.number(),
  /** Training runs' recorded episodes: the updates done when the policy acted. */
  iteration: z.number().int().min(0).optional(),
  /** The engine that ran it (absent: physics). */
  source: z.enum(['physics', 'world-model']).optional(),
  /** A world-model episode branched from step `start` of episode `twin` of this folder (physics). */
  twin: z.number().int().min(0).optional(),
  start: z.number().int().min(0).optional(),
  /** Byte offset of this episode's record in episodes.bin. */
  offset: z.number().int().min(0),
});

export const EpisodeIndexSchema = z.object({
  format: z.literal(EPISODE_FORMAT),
  actionNames: z.array(z.string()).min(1),
  stateNames: z.array(z.string()),
  episodes: z.array(EpisodeEntrySchema),
});
export type EpisodeIndex = z.infer<typeof EpisodeIndexSchema>;
export type EpisodeEntry = z.infer<typeof EpisodeEntrySchema>;
export type StoredEpisode = Episode & { task: string; policy: string } & Partial<
    Pick<EpisodeEntry, 'split' | 'iteration' | 'source' | 'twin' | 'start'>
  >;

/** run.json: how the folder was made. For people; readers never need it. */
export interface RunInfo {
  command: string;
  createdAt: string;
}

/** What a reader expects of a folder; every record is checked against it. */
export interface EpisodeContract {
  /** The action dimensions in file order, each with its number of bins: tokens lie in [0, n). */
  actions: readonly { name: string; n: number }[];
  /** When given, states must have been recorded, with exactly this layout. */
  states?: readonly string[];
  /** When given, the task ids the folder may hold, each with its step limit (maxEpisodeSteps). */
  maxSteps?: Readonly<Record<string, number>>;
}

function recordBytes(length: number, actions: number, stateSize: number): number {
  return 4 * (length * actions + length + (stateSize ? (length + 1) * stateSize : 0));
}

/** The files of an episode folder (episodes.bin, run.json, index.json) for one commit. */
export function episodeFolderParts(
  dir: string,
  meta: { command: string; actionNames: string[]; stateNames: string[] },
  episodes: StoredEpisode[],
): { index: EpisodeIndex; parts: Part[] } {
  const A = meta.actionNames.length;
  const S = meta.stateNames.length;
  const total = episodes.reduce((sum, e) => sum + recordBytes(e.length, A, S), 0);
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  const entries: EpisodeEntry[] = [];
  let offset = 0;
  for (const e of episodes) {
    if (e.actions.length !== e.length * A)
      throw new RangeError(`episode seed ${e.seed}: ${e.actions.length} action tokens, expected ${e.length} x ${A}`);
    if (S && e.states?.length !== (e.length + 1) * S)
      throw new RangeError(
        `episode seed ${e.seed}: ${e.states?.length ?? 0} state values, expected ${e.length + 1} x ${S}`,
      );
    entries.push({
      task: e.task,
      seed: e.seed,
      split: e.split,
      policy: e.policy,
      instruction: e.instruction,
      length: e.length,
      success: e.success,
      return: e.return,
      progress: e.progress,
      ...(e.iteration !== undefined && { iteration: e.iteration }),
      ...(e.source !== undefined && { source: e.source }),
      ...(e.twin !== undefined && { twin: e.twin, start: e.start ?? 0 }),
      offset,
    });
    let k = offset;
    for (const a of e.actions) {
      view.setInt32(k, a, true);
      k += 4;
    }
    for (const r of e.rewards) {
      view.setFloat32(k, r, true);
      k += 4;
    }
    if (S)
      for (const s of e.states!) {
        view.setFloat32(k, s, true);
        k += 4;
      }
    offset = k;
  }
  const index: EpisodeIndex = {
    format: EPISODE_FORMAT,
    actionNames: meta.actionNames,
    stateNames: meta.stateNames,
    episodes: entries,
  };
  const info: RunInfo = { command: meta.command, createdAt: new Date().toISOString() };
  const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;
  return {
    index,
    parts: [
      { path: join(dir, 'episodes.bin'), data: bytes },
      { path: join(dir, RUN_INFO_FILE), data: json(info) },
      { path: join(dir, 'index.json'), data: json(index) },
    ],
  };
}

/** Writes an episode folder as one unit (a crash leaves the previous folder or the new one). */
export function writeEpisodeFolder(
  dir: string,
  meta: { command: string; actionNames: string[]; stateNames: string[] },
  episodes: StoredEpisode[],
  opts: CommitOptions = {},
): EpisodeIndex {
  const { index, parts } = episodeFolderParts(dir, meta, episodes);
  commitFiles(parts, opts);
  return index;
}

/** index.json of a run folder, validated against the schema (not yet against episodes.bin). */
export function readEpisodeIndex(dir: string): EpisodeIndex {
  checkFolder(dir, 'a run folder (index.json + episodes.bin)');
  recoverFolder(dir);
  const path = join(dir, 'index.json');
  const raw = readInputJsonRaw(path, 'the episode index', `is ${dir} a folder written by wmrl rollout or collect?`);
  const { format, command } = (raw ?? {}) as { format?: unknown; command?: unknown };
  if (format !== EPISODE_FORMAT) {
    const madeBy = typeof command === 'string' ? ` (it was made by: ${command})` : '';
    const old =
      format === 'wmrl-episodes/1'
        ? `, the format before createdAt and command moved to ${RUN_INFO_FILE}; re-create the folder${madeBy}`
        : '';
    throw new InputError(
      `${path}: $.format: found ${format === undefined ? 'none' : JSON.stringify(format)}, ` +
        `this wmrl reads "${EPISODE_FORMAT}"${old}`,
    );
  }
  return parseInput(raw, EpisodeIndexSchema, path);
}

/** Index names and lengths against the contract: errors name index.json and the field. */
function checkIndex(path: string, index: EpisodeIndex, c: EpisodeContract): void {
  const want = c.actions.map((a) => a.name);
  if (index.actionNames.join(',') !== want.join(','))
    throw new InputError(`${path}: $.actionNames: [${index.actionNames}], expected [${want}]`);
  if (c.states) {
    if (index.stateNames.length === 0)
      throw new InputError(`${path}: $.stateNames: the folder has no recorded states, and they are needed here`);
    const k = c.states.findIndex((s, j) => index.stateNames[j] !== s);
    if (k >= 0 || index.stateNames.length !== c.states.length) {
      const j = k >= 0 ? k : c.states.length;
      throw new InputError(
        `${path}: $.stateNames[${j}]: ${JSON.stringify(index.stateNames[j] ?? null)}, the scene's state layout has ` +
          `${JSON.stringify(c.states[j] ?? null)} (recorded with another scene?)`,
      );
    }
  }
  index.episodes.forEach((e, i) => {
    if (e.twin === undefined) return;
    const twin = index.episodes[e.twin];
    if (!twin || twin.source === 'world-model' || e.twin === i)
      throw new InputError(`${path}: $.episodes[${i}].twin: ${e.twin} is not a physics episode of this folder`);
    if ((e.start ?? 0) > twin.length)
      throw new InputError(`${path}: $.episodes[${i}].start: ${e.start}, past the ${twin.length} steps of its twin`);
  });
  if (!c.maxSteps) return;
  const max = c.maxSteps;
  index.episodes.forEach((e, i) => {
    if (!Object.hasOwn(max, e.task))
      throw new InputError(
        `${path}: $.episodes[${i}].task: unknown task "${e.task}" (known: ${Object.keys(max).join(', ')})`,
      );
    if (e.length > max[e.task])
      throw new InputError(
        `${path}: $.episodes[${i}].length: ${e.length} steps, more than the ${max[e.task]} of ${e.task}`,
      );
  });
}

/** Reads and checks one record; `where` names it in errors. */
function readRecord(
  view: DataView,
  e: EpisodeEntry,
  c: EpisodeContract,
  S: number,
  where: string,
  stateNames: readonly string[],
): Pick<StoredEpisode, 'actions' | 'rewards' | 'states'> {
  const A = c.actions.length;
  let k = e.offset;
  const actions = new Int32Array(e.length * A);
  for (let j = 0; j < actions.length; j++, k += 4) {
    const v = (actions[j] = view.getInt32(k, true));
    const { name, n } = c.actions[j % A];
    if (v < 0 || v >= n)
      throw new InputError(`${where}, step ${Math.floor(j / A)}: action ${name} = ${v} is not a bin in [0, ${n})`);
  }
  const rewards = new Float32Array(e.length);
  for (let j = 0; j < rewards.length; j++, k += 4) {
    if (!Number.isFinite((rewards[j] = view.getFloat32(k, true))))
      throw new InputError(`${where}, step ${j}: reward is ${rewards[j]}`);
  }
  if (!S) return { actions, rewards, states: undefined };
  const states = new Float32Array((e.length + 1) * S);
  for (let j = 0; j < states.length; j++, k += 4) {
    if (!Number.isFinite((states[j] = view.getFloat32(k, true)))) {
      const r = Math.floor(j / S);
      throw new InputError(
        `${where}, state ${r} (${r ? `after step ${r - 1}` : 'initial'}): ${stateNames[j % S]} is ${states[j]}`,
      );
    }
  }
  return { actions, rewards, states };
}

/** Reads a run folder and checks it against `contract`: the records tile episodes.bin exactly (each
 *  starts where the previous one ends, no trailing bytes), tokens lie within their bins, rewards and
 *  states are finite. Every failure is an InputError naming the file, the record and the field. */
export function readEpisodeFolder(
  dir: string,
  contract: EpisodeContract,
): { index: EpisodeIndex; episodes: StoredEpisode[] } {
  const index = readEpisodeIndex(dir);
  const indexPath = join(dir, 'index.json');
  const binPath = join(dir, 'episodes.bin');
  checkIndex(indexPath, index, contract);
  const view = readWords(binPath, 'episode records');
  const A = index.actionNames.length;
  const S = index.stateNames.length;
  let end = 0;
  const episodes = index.episodes.map((e, i): StoredEpisode => {
    const at = `${indexPath}: $.episodes[${i}]`;
    if (e.offset !== end)
      throw new InputError(
        `${at}.offset: ${e.offset}, but the ${i ? 'previous record ends' : 'first record starts'} at byte ${end} ` +
          '(records must tile episodes.bin)',
      );
    end = e.offset + recordBytes(e.length, A, S);
    if (end > view.byteLength)
      throw new InputError(
        `${at}.length: ${e.length} steps end at byte ${end}, past the end of episodes.bin (${view.byteLength} bytes)`,
      );
    return {
      ...e,
      ...readRecord(view, e, contract, S, `${binPath}: record ${i} ($.episodes[${i}])`, index.stateNames),
    };
  });
  if (end !== view.byteLength)
    throw new InputError(
      `${binPath}: ${view.byteLength - end} bytes after the last record ` +
        `(index.json accounts for ${end} of ${view.byteLength})`,
    );
  return { index, episodes };
}
