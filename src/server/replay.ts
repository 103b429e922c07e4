// A recorded episode as frames: physics from its recorded states (the arm posed by IK from the tool pose),
// and the world model stepped open-loop on the episode's own actions from the same start.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { BodyPose, Branchable, Env } from '../env/types.ts';
import type { EpisodeSummary, Frame, Replay } from '../protocol/index.ts';
import { type EpisodeContract, readEpisodeFolder, type StoredEpisode } from '../rollout/index.ts';
import type { Scene } from '../scene/index.ts';
import { offTable, packState, sampleTask, scoreTask, stateSize, unpackState } from '../task/index.ts';
import type { TabletopState, TaskInstance } from '../task/types.ts';
import { ArmPoser } from '../worldmodel/robot-pose.ts';

/** The world-model side of a replay: an env that starts from a state and reports its predicted state. */
export interface ReplayModel extends Env, Branchable {
  state(i: number): TabletopState;
  frame(i?: number): BodyPose[];
}

export interface ReplaySources {
  scene: Scene;
  contract: EpisodeContract;
  /** A one-env world model for a task (the owner keeps and closes it); absent: physics only. */
  openModel?: (taskId: string) => Promise<ReplayModel>;
}

const copyPoses = (poses: BodyPose[]): BodyPose[] =>
  poses.map((p) => ({
    name: p.name,
    pos: [p.pos[0], p.pos[1], p.pos[2]],
    quat: [p.quat[0], p.quat[1], p.quat[2], p.quat[3]],
  }));

export function episodeSummaries(dir: string, contract: EpisodeContract): EpisodeSummary[] {
  const { episodes } = readEpisodeFolder(dir, { ...contract, states: undefined });
  return episodes.map(summaryOf);
}

function summaryOf(e: StoredEpisode, index: number): EpisodeSummary {
  const { task, seed, policy, instruction, length, success, iteration, source, twin, start } = e;
  return {
    index,
    task,
    seed,
    policy,
    instruction,
    length,
    success,
    return: e.return,
    ...(iteration !== undefined && { iteration }),
    ...(source !== undefined && { source }),
    ...(twin !== undefined && { twin, start }),
  };
}

type FrameBase = Pick<Frame, 'stream' | 'task' | 'instruction' | 'terms'>;

/** Frames of recorded states (the arm posed by IK from the tool pose); `rewards[t - 1]` led to state t. */
function recordedFrames(
  scene: Scene,
  task: TaskInstance,
  states: readonly TabletopState[],
  rewards: ArrayLike<number>,
  base: FrameBase & { source: Frame['source'] },
): Frame[] {
  const poser = new ArmPoser(scene);
  const q = poser.homeJoints(states[0].eePos, states[0].eeYaw);
  return states.map((st, t) => {
    if (t > 0) poser.track(q, st.eePos, st.eeYaw);
    const score = scoreTask(scene, task, st);
    const reward = t === 0 ? 0 : rewards[t - 1];
    const off = offTable(scene, st);
    return {
      ...base,
      step: t,
      bodies: copyPoses(poser.poses(q, st)),
      reward,
      progress: score.progress,
      success: score.success && !off,
      done: t === states.length - 1,
      terms: { reward },
      ...(off && { offTable: true }),
    };
  });
}

/** A policy sidecar, as far as the viewer needs it: the image observations its network reads. */
const PolicyCamerasSchema = z.object({ config: z.object({ cameras: z.array(z.string()).max(2) }) });

/** The cameras the run's policy reads, from the sidecar a training run writes beside its policy.onnx
 *  (policy.json): image_<camera> names of scene cameras; undefined where the folder has no readable one. */
export function runCameras(scene: Scene, dir: string): string[] | undefined {
  const file = join(dir, 'policy.json');
  if (!existsSync(file)) return undefined;
  let parsed: z.infer<typeof PolicyCamerasSchema>;
  try {
    parsed = PolicyCamerasSchema.parse(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return undefined;
  }
  const have = new Set(scene.cameras.map((c) => c.name));
  const cameras = parsed.config.cameras.map((n) => n.replace(/^image_/, ''));
  return cameras.length && cameras.every((c) => have.has(c)) ? cameras : undefined;
}

export async function replayEpisode(src: ReplaySources, run: string, dir: string, index: number): Promise<Replay> {
  const replay = await replayFrames(src, run, dir, index);
  const cameras = runCameras(src.scene, dir);
  return cameras ? { ...replay, cameras } : replay;
}

async function replayFrames(src: ReplaySources, run: string, dir: string, index: number): Promise<Replay> {
  const { episodes } = readEpisodeFolder(dir, src.contract);
  const e = episodes[index];
  if (!e) throw new RangeError(`run "${run}" has ${episodes.length} episodes, no episode ${index}`);
  if (!e.states) throw new RangeError(`run "${run}" episode ${index}: recorded without states, nothing to replay`);
  const { scene } = src;
  const M = scene.objects.length;
  const S = stateSize(M);
  const task = sampleTask(scene, e.task, e.seed);
  const base = { stream: `${run}#${index}`, task: e.task, instruction: e.instruction, terms: {} };
  const statesOf = (x: StoredEpisode, from = 0, length = x.length) =>
    Array.from({ length: length + 1 }, (_, t) => unpackState(x.states!, M, (from + t) * S));
  const summary = summaryOf(e, index);
  if (e.source === 'world-model' && e.twin !== undefined) {
    // beside its physics twin from the same branch point, as far as both go
    const twin = episodes[e.twin];
    const length = Math.min(e.length, twin.length - (e.start ?? 0));
    const real = statesOf(twin, e.start, length);
    const predicted = statesOf(e, 0, length);
    const physics = recordedFrames(scene, task, real, twin.rewards.subarray(e.start), { ...base, source: 'physics' });
    const worldModel = recordedFrames(scene, task, predicted, e.rewards, { ...base, source: 'world-model' });
    const gaps = predicted.map((p, t) => distance(p, real[t]));
    return {
      run,
      episode: summary,
      physics,
      worldModel,
      divergence: { tcp_m: gaps.map((g) => g[0]), objects_m: gaps.map((g) => g[1]) },
    };
  }
  const states = statesOf(e);
  const physics = recordedFrames(scene, task, states, e.rewards, { ...base, source: 'physics' });
  if (!src.openModel) return { run, episode: summary, physics };
  const model = await src.openModel(e.task);
  return {
    run,
    episode: summary,
    physics,
    ...(await modelSide(model, e, states, task, { ...base, start: physics[0] })),
  };
}

async function modelSide(
  model: ReplayModel,
  e: { actions: Int32Array; length: number },
  states: TabletopState[],
  task: TaskInstance,
  { start, ...base }: FrameBase & { start: Frame },
): Promise<Pick<Replay, 'worldModel' | 'divergence'>> {
  const names = model.spec.action.map((a) => a.name);
  await model.resetFrom([0], [{ seed: task.seed, elapsed: 0, row: packState(states[0]) }]);
  const frames: Frame[] = [];
  const tcp: number[] = [],
    objects: number[] = [];
  const record = (t: number, reward: number, progress: number, success: boolean, done: boolean, off = false) => {
    frames.push({
      ...base,
      source: 'world-model',
      step: t,
      bodies: copyPoses(model.frame(0)),
      reward,
      progress,
      success,
      done,
      terms: { reward },
      ...(off && { offTable: true }),
    });
    const [tc, ob] = distance(model.state(0), states[t]);
    tcp.push(tc);
    objects.push(ob);
  };
  record(0, 0, start.progress, start.success, false);
  for (let t = 0; t < e.length; t++) {
    const action = Object.fromEntries(names.map((n, k) => [n, Int32Array.of(e.actions[t * names.length + k])]));
    const r = await model.step(action);
    const done = r.terminated[0] === 1 || r.truncated[0] === 1;
    record(
      t + 1,
      r.reward[0],
      r.info.progress[0],
      r.info.success[0] === 1,
      done || t + 1 === e.length,
      r.info.offTable?.[0] === 1,
    );
    if (done) break;
  }
  return { worldModel: frames, divergence: { tcp_m: tcp, objects_m: objects } };
}

/** Tool-centre distance and the mean object-centre distance between a predicted and a real state (m). */
function distance(a: TabletopState, b: TabletopState): [number, number] {
  const d = (p: readonly number[], q: readonly number[]) => Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
  const objects = a.objects.reduce((s, o, i) => s + d(o.pos, b.objects[i].pos), 0) / Math.max(1, a.objects.length);
  return [d(a.eePos, b.eePos), objects];
}
