// What crosses between the trainer and a rollout helper thread (src/transport/thread.ts): rollout
// calls, gradient-graph calls, their answers, and onnxruntime tensors as plain typed arrays.
import type { Feeds } from '../nn/index.ts';
import { tensor } from '../nn/runtime.ts';
import type { DType, TypedArray } from '../nn/ir.ts';
import type { GroupJob, Rollout } from '../trainer/rollouts.ts';

/** A policy version or world-model snapshot: its hash, and its bytes when the helper lacks them. */
export type Versioned = { hash: string; bytes?: Uint8Array };

/** Rollouts: the groups of one task and start kind, with what they run on. */
export interface GroupsCall {
  op: 'groups';
  id: number;
  task: Record<string, unknown>;
  engine: 'real' | 'model';
  policy: Versioned;
  worldModel?: Versioned;
  jobs: GroupJob[];
  seed: number;
  samplesPerRollout: number;
  temperature?: number;
  record: boolean;
}

export type HelperCall =
  | GroupsCall
  | { op: 'open'; id: number; graph: number; model: Uint8Array }
  | { op: 'run'; id: number; graph: number; feeds: WireFeeds }
  | { op: 'close'; id: number; graph: number };

export type HelperAnswer =
  | { id: number; groups: Rollout[][]; policySeconds: number }
  | { id: number; outputs: WireFeeds }
  | { id: number; done: true }
  | { id: number; error: string };

export type WireFeeds = Record<string, { type: DType; dims: number[]; data: TypedArray }>;

export function toWire(feeds: Feeds): WireFeeds {
  return Object.fromEntries(
    Object.entries(feeds).map(([k, t]) => [
      k,
      { type: t.type as DType, dims: [...t.dims], data: t.data as TypedArray },
    ]),
  );
}

export function fromWire(wire: WireFeeds): Feeds {
  return Object.fromEntries(Object.entries(wire).map(([k, t]) => [k, tensor(t.type, t.data, t.dims)]));
}
