// The in-page runner: the shipped policy acting in the real tabletop env (Rapier) or in the world-model
// env, one episode at a time, from model bytes already in memory. It reuses the Node rollout pieces
// (samplerPolicy's per-(seed, episode key, step) draws, the envs with numEnvs 1), so an episode here
// takes the tokens Node's collectEpisodes takes. Browser-safe; runs under Node too.
import type { BatchObs, BodyPose, Env, FrameSource } from '../../../src/env/types.ts';
import type { ModelBytes } from '../../../src/nn/model-bytes.ts';
import type { OrtBinding } from '../../../src/nn/runtime.ts';
import { createTabletopEnv } from '../../../src/physics/env.ts';
import { camerasOf, tabletopSpec } from '../../../src/tabletop/spec.ts';
import { policyFromBytes } from '../../../src/policy/model-bytes.ts';
import { PolicySampler, samplerPolicy } from '../../../src/policy/sampler.ts';
import { specInterfaceHash } from '../../../src/policy/spec-config.ts';
import { type Policy, stepContext } from '../../../src/rollout/collect.ts';
import type { Scene } from '../../../src/scene/schema.ts';
import type { TabletopState, TaskInstance } from '../../../src/task/types.ts';
import { scoreTask } from '../../../src/task/verify.ts';
import type { EnsembleDynamics } from '../../../src/worldmodel/dynamics.ts';
import { WorldModelEnv } from '../../../src/worldmodel/env.ts';
import { ensembleFromModel, type WmModel, wmModelFromBytes } from '../../../src/worldmodel/model-bytes.ts';

export { matchInstruction } from './instruction.ts';
export type { ModelBytes } from '../../../src/nn/model-bytes.ts';
export type { OrtBinding } from '../../../src/nn/runtime.ts';

export type Dynamics = 'physics' | 'world-model';

export interface InPageAssets {
  scene: Scene;
  /** The policy's .onnx and sidecar (e.g. models/vla-base.*). */
  policy: ModelBytes;
  /** The world model's .onnx, sidecar and NAME.wm.json part (only read for 'world-model'). */
  worldModel: ModelBytes;
}

export interface InPageOptions {
  dynamics: Dynamics;
  /** onnxruntime-web or onnxruntime-node (default: '#ort', the platform's). */
  ort?: OrtBinding;
  /** Seed of the policy's sampling draws (default 0, as `wmrl eval`). */
  policySeed?: number;
  /** Sampling temperature; 0 = greedy (default 1, as `wmrl eval`). */
  temperature?: number;
}

export interface ResetRequest {
  task: string;
  seed: number;
  /** Replaces the instruction text the policy reads (and StepView shows). */
  instruction?: string;
  /** Episode key of the policy's draws (default: the seed, as collectEpisodes). */
  key?: number;
}

export interface StepView {
  /** Actions taken so far (0 after reset). */
  step: number;
  bodies: BodyPose[];
  /** The action tokens that led here, by action name ({} after reset). */
  tokens: Record<string, number>;
  reward: number;
  progress: number;
  success: boolean;
  done: boolean;
  /** An object left the table (the episode ended as a failure). */
  offTable?: boolean;
  /** The text the policy reads. */
  instruction: string;
  /** The policy's first camera's HxWx3 RGB, exactly as the policy sees it. */
  image: Uint8Array;
  imageWidth: number;
  imageHeight: number;
  /** Every camera the policy reads (the first is `image`), by scene camera name. */
  views: { camera: string; data: Uint8Array }[];
}

/** A task's env (numEnvs 1) and, for the world model, the dynamics it does not own. */
interface Slot {
  env: Env & FrameSource & { task(i: number): TaskInstance; state(i: number): TabletopState };
  dynamics?: EnsembleDynamics;
}

interface Episode {
  slot: Slot;
  key: number;
  instruction: string;
  override: boolean;
  obs: BatchObs;
  view: StepView;
}

export class InPageRunner {
  private readonly slots = new Map<string, Promise<Slot>>();
  private readonly policy: Policy;
  private episode: Episode | null = null;
  /** Calls run one after another (an env steps one action at a time). */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly scene: Scene,
    private readonly sampler: PolicySampler,
    private readonly specHash: string,
    private readonly worldModel: { model: WmModel; name: string } | null,
    private readonly opts: InPageOptions,
  ) {
    this.policy = samplerPolicy(sampler, { seed: opts.policySeed ?? 0, temperature: opts.temperature ?? 1 });
  }

  static async create(assets: InPageAssets, opts: InPageOptions): Promise<InPageRunner> {
    const policy = policyFromBytes(assets.policy);
    const wm =
      opts.dynamics === 'world-model'
        ? { model: wmModelFromBytes(assets.worldModel), name: assets.worldModel.name }
        : null;
    const sampler = await PolicySampler.create(policy.config, policy.params, { ort: opts.ort });
    return new InPageRunner(assets.scene, sampler, policy.sidecar.specHash, wm, opts);
  }

  get dynamics(): Dynamics {
    return this.opts.dynamics;
  }

  /** Starts an episode of `task` at init-state `seed`; returns step 0. */
  reset(r: ResetRequest): Promise<StepView> {
    return this.serial(async () => {
      const slot = await this.slot(r.task);
      const key = r.key ?? r.seed;
      const { obs, info } = await slot.env.reset({ seed: [r.seed], keys: [key] });
      const instruction = r.instruction ?? info.instruction?.[0] ?? '';
      const score = scoreTask(this.scene, slot.env.task(0), slot.env.state(0));
      const view = this.view(slot, obs, {
        step: 0,
        tokens: {},
        reward: 0,
        progress: score.progress,
        success: score.success,
        done: false,
        instruction,
      });
      this.episode = { slot, key, instruction, override: r.instruction !== undefined, obs, view };
      return view;
    });
  }

  /** One policy action and env step. After the episode ended it returns the last view unchanged. */
  step(): Promise<StepView> {
    return this.serial(async () => {
      const ep = this.episode;
      if (!ep) throw new Error('InPageRunner.step() before reset()');
      if (ep.view.done) return ep.view;
      const textKey = this.sampler.config.instruction;
      const obs = ep.override ? { ...ep.obs, [textKey]: [ep.instruction] } : ep.obs;
      const { actions } = await this.policy.act(obs, stepContext([ep.key], [ep.view.step]));
      const r = await ep.slot.env.step(actions);
      const tokens = Object.fromEntries(Object.entries(actions).map(([name, a]) => [name, a[0]]));
      ep.obs = r.obs;
      ep.view = this.view(ep.slot, r.obs, {
        step: ep.view.step + 1,
        tokens,
        reward: r.reward[0],
        progress: r.info.progress[0],
        success: r.info.success[0] === 1,
        done: r.terminated[0] === 1 || r.truncated[0] === 1,
        offTable: r.info.offTable?.[0] === 1,
        instruction: ep.instruction,
      });
      return ep.view;
    });
  }

  close(): Promise<void> {
    return this.serial(async () => {
      for (const pending of this.slots.values()) {
        const slot = await pending.catch(() => null);
        slot?.env.close();
        await slot?.dynamics?.close();
      }
      this.slots.clear();
      this.episode = null;
      await this.sampler.close();
    });
  }

  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.queue.then(run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private view(
    slot: Slot,
    obs: BatchObs,
    v: Omit<StepView, 'bodies' | 'image' | 'imageWidth' | 'imageHeight' | 'views'>,
  ): StepView {
    const [imageHeight, imageWidth] = this.sampler.config.imageSize;
    const { cameras } = this.sampler.config;
    // envs reuse their buffers
    const views = camerasOf(cameras).map((camera, k) => ({
      camera,
      data: (obs[cameras[k]] as Uint8Array).slice(0, imageHeight * imageWidth * 3),
    }));
    return { ...v, bodies: slot.env.frame(0), image: views[0].data, imageWidth, imageHeight, views };
  }

  /** The env of a task, made on first use (a failed attempt is not kept). */
  private slot(task: string): Promise<Slot> {
    let slot = this.slots.get(task);
    if (!slot) {
      slot = this.makeSlot(task);
      this.slots.set(task, slot);
      slot.catch(() => this.slots.delete(task));
    }
    return slot;
  }

  private async makeSlot(taskId: string): Promise<Slot> {
    const scene = this.scene;
    // the envs render exactly the cameras the policy reads
    const cameras = camerasOf(this.sampler.config.cameras);
    const spec = tabletopSpec(scene, taskId, cameras);
    if (this.specHash !== specInterfaceHash(spec))
      throw new Error(`policy was made for a different observation/action interface than ${taskId}`);
    if (!this.worldModel) return { env: await createTabletopEnv({ scene, taskId, numEnvs: 1, cameras }) };
    const dynamics = await ensembleFromModel(this.worldModel.model, this.worldModel.name, scene, spec, {
      ort: this.opts.ort,
    });
    return { env: new WorldModelEnv({ scene, spec, numEnvs: 1, dynamics, ownsDynamics: false }), dynamics };
  }
}
