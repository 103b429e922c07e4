// Network inputs and targets of the tabletop world model: packed states (src/task/state.ts layout) ->
// input features (gripper-relative geometry added), action tokens -> action values, Δstate targets, and
// the inverse (a predicted Δ applied back onto a valid state). Browser-safe.
import { clamp, dcos, dsin } from '../core/dmath.ts';
import type { EnvSpec } from '../core/spec.ts';
import type { SceneObject } from '../scene/schema.ts';
import { OBJECT_FIELDS, STATE_HEAD, stateSize, unpackState, unpackStateInto } from '../task/state.ts';
import type { TabletopState } from '../task/types.ts';
import { restHeight } from '../task/geometry.ts';
import { isHeld } from '../task/verify.ts';

const HEAD = STATE_HEAD.length;
const OBJ = OBJECT_FIELDS.length;
/** Per object: pos 3, quat 4 (sign-canonical), linVel 3, pos - tcp 3, pos - tcp in the tool-yaw frame 2. */
const OBJ_FEATURES = 15;
/** Bumped whenever the feature layout changes (stored in model files; a mismatch refuses to load). */
export const FEATURE_VERSION = 3;

export interface StateLayout {
  objects: readonly SceneObject[];
  numObjects: number;
  /** Packed state size (= network output size: one Δ per state entry). */
  stateDim: number;
  /** Input feature size (without the action). */
  featureDim: number;
  /** Per object: its largest half extent (the rest gate's top-of-object height). */
  maxHalfExtent: readonly number[];
  /** Reused by heldMask (the verifiers read it and keep no reference). */
  scratch: TabletopState;
}

/** Layout for the scene's objects: features are the head, per-object features, pairwise offsets and
 *  one "held" flag per object (the verifiers' isHeld). */
export function stateLayout(objects: readonly SceneObject[]): StateLayout {
  const m = objects.length;
  const pairs = (m * (m - 1)) / 2;
  const stateDim = stateSize(m);
  return {
    objects,
    numObjects: m,
    stateDim,
    featureDim: HEAD + OBJ_FEATURES * m + 3 * pairs + m,
    maxHalfExtent: objects.map((o) => Math.max(...o.halfExtents)),
    scratch: unpackState(new Float64Array(stateDim), m),
  };
}

/** Bit i set: object i is held by the gripper in state row `r` (the verifiers' isHeld). */
export function heldMask(layout: StateLayout, states: ArrayLike<number>, r: number): number {
  const st = unpackStateInto(states, r * layout.stateDim, layout.scratch);
  let mask = 0;
  for (let i = 0; i < layout.numObjects; i++) if (isHeld(layout.objects[i], st.objects[i], st)) mask |= 1 << i;
  return mask;
}

/** Features of packed state row `r` of `states` into `out` at row `outRow`; returns heldMask. */
export function stateFeatures(
  layout: StateLayout,
  states: ArrayLike<number>,
  r: number,
  out: Float32Array,
  outRow = r,
): number {
  const s = r * layout.stateDim;
  let k = outRow * layout.featureDim;
  for (let j = 0; j < HEAD; j++) out[k++] = states[s + j];
  const tx = states[s],
    ty = states[s + 1],
    tz = states[s + 2];
  const c = dcos(states[s + 3]),
    sn = dsin(states[s + 3]);
  const m = layout.numObjects;
  for (let i = 0; i < m; i++) {
    const o = s + HEAD + OBJ * i;
    const flip = states[o + 6] < 0 ? -1 : 1;
    out[k++] = states[o];
    out[k++] = states[o + 1];
    out[k++] = states[o + 2];
    for (let q = 3; q < 7; q++) out[k++] = flip * states[o + q];
    out[k++] = states[o + 7];
    out[k++] = states[o + 8];
    out[k++] = states[o + 9];
    const dx = states[o] - tx,
      dy = states[o + 1] - ty;
    out[k++] = dx;
    out[k++] = dy;
    out[k++] = states[o + 2] - tz;
    out[k++] = c * dx + sn * dy;
    out[k++] = -sn * dx + c * dy;
  }
  for (let i = 0; i < m; i++) {
    for (let j = i + 1; j < m; j++) {
      const a = s + HEAD + OBJ * i,
        b = s + HEAD + OBJ * j;
      out[k++] = states[b] - states[a];
      out[k++] = states[b + 1] - states[a + 1];
      out[k++] = states[b + 2] - states[a + 2];
    }
  }
  const held = heldMask(layout, states, r);
  for (let i = 0; i < m; i++) out[k++] = (held >> i) & 1;
  return held;
}

/** The Δ prior the network's residual is added to: the tool moves by the commanded step (dx, dy, dz,
 *  dyaw) and a held object moves with it; everything else 0. */
export function commandPrior(
  layout: StateLayout,
  coder: ActionCoder,
  values: ArrayLike<number>,
  r: number,
  held: number,
  out: Float64Array | Float32Array,
  o: number,
): void {
  coder.prior(values, r, out, o, layout.stateDim);
  for (let i = 0; i < layout.numObjects; i++) {
    if (!((held >> i) & 1)) continue;
    const p = o + HEAD + OBJ * i;
    out[p] = out[o];
    out[p + 1] = out[o + 1];
    out[p + 2] = out[o + 2];
  }
}

/** Action tokens -> values: discrete entries map bin t to low + (high - low) t / (n - 1) (the physics
 *  bin table for the move dimensions, the closing fraction for the gripper). */
export class ActionCoder {
  readonly names: string[];
  private readonly tables: Float64Array[];
  /** Action columns of the tcp x, y, z and yaw priors (-1: no such action). */
  private readonly priorIndex: number[];

  constructor(spec: EnvSpec) {
    const entries = spec.action.map((e) => {
      if (e.kind !== 'discrete')
        throw new Error(`world model: action "${e.name}" is ${e.kind}; only discrete actions are supported`);
      return e;
    });
    this.names = entries.map((e) => e.name);
    this.priorIndex = ['dx', 'dy', 'dz', 'dyaw'].map((n) => this.names.indexOf(n));
    this.tables = entries.map((e) => {
      const lo = e.low ?? 0,
        hi = e.high ?? e.n - 1;
      return Float64Array.from({ length: e.n }, (_, t) => lo + ((hi - lo) * t) / (e.n - 1));
    });
  }

  get dim(): number {
    return this.names.length;
  }

  /** Row `r` of the batch (tokens per entry name, or step-major token rows) into `out` at row `outRow`. */
  encode(tokens: Record<string, ArrayLike<number>>, r: number, out: Float32Array, outRow = r): void {
    const d = this.names.length;
    for (let j = 0; j < d; j++) out[outRow * d + j] = this.tables[j][tokens[this.names[j]][r]];
  }

  /** The commanded tool step as a Δ prior (S values): tcp += (dx, dy, dz), yaw += dyaw, all else 0. The
   *  network predicts the residual (IK lag, workspace clamp), which is mostly zero. */
  prior(values: ArrayLike<number>, r: number, out: Float64Array | Float32Array, o: number, stateDim: number): void {
    out.fill(0, o, o + stateDim);
    const d = this.names.length;
    this.priorIndex.forEach((a, j) => {
      if (a >= 0) out[o + j] = values[r * d + a];
    });
  }

  /** Row of a step-major token array (rollout files: length x dims). */
  encodeRow(tokens: ArrayLike<number>, offset: number, out: Float32Array, outRow: number): void {
    const d = this.names.length;
    for (let j = 0; j < d; j++) out[outRow * d + j] = this.tables[j][tokens[offset + j]];
  }
}

/** Physical limits applied to every predicted state (the learned Δ knows none of them). */
export interface StateLimits {
  maxOpening: number;
  yawLimit: number;
  workspace: { min: readonly number[]; max: readonly number[] };
  /** Resting-object gate: an object slower than `speed` (m/s) whose centre is farther than `radius` (m,
   *  horizontally) from the tool and from every moving object stays exactly where it is. Measured on
   *  noisy-expert data: such objects move 5e-6 m per step on average; the network's residual noise
   *  on them was ~2 mm per step. Omit to trust the network everywhere. */
  restGate?: { speed: number; radius: number; tipBelow: number; clearance: number };
  /** Objects predicted below their resting height on the table, or less than `settleTol` (m) above it,
   *  snap onto it (the net's residual noise otherwise lifts resting cubes ~1 mm per step, and they
   *  float off in open loop; nothing may sink into the table). */
  settleTol?: number;
  /** Control period (s): when set, each object's next linVel is its predicted displacement / period
   *  instead of the network's velocity head. Measured on held-out physics: displacement / period is
   *  within 0.008 m/s of the true end-of-step velocity (0.002 at rest), while the network's head kept
   *  released objects "moving" at 0.1-0.25 m/s, so the verifiers' settled checks never passed. */
  velocityFromDisplacement?: number;
  /** Support snap: an object whose centre lies over another object's top face (horizontally within
   *  its smaller half size) and above its centre, predicted below or less than `supportTol` (m) above
   *  the height it rests on it at, snaps onto it; and an object snapped onto the table or another
   *  object keeps no downward velocity (it landed). Measured on the base policy's stack rollouts: the
   *  net let released cubes sink 3-20 mm into the cube below at 0.2-0.5 m/s, where physics stops
   *  them on top at under 0.02 m/s, so the stacked verdict never held. */
  supportTol?: number;
}

/** True when object i of state row s is resting out of everything's reach: slower than gate.speed and
 *  either farther than gate.radius horizontally from the tool or below the fingertips (tcp z - tipBelow)
 *  by more than gate.clearance, and away from every moving object (see StateLimits.restGate). */
export function isGatedAtRest(
  layout: StateLayout,
  gate: NonNullable<StateLimits['restGate']>,
  state: ArrayLike<number>,
  s: number,
  i: number,
): boolean {
  const v2 = gate.speed * gate.speed;
  const r2 = gate.radius * gate.radius;
  const o = s + HEAD + OBJ * i;
  if (speed2(state, o) >= v2) return false;
  const top = state[o + 2] + layout.maxHalfExtent[i];
  if (dist2XY(state, o, s) <= r2 && state[s + 2] - gate.tipBelow - top <= gate.clearance) return false;
  for (let j = 0; j < layout.numObjects; j++) {
    const p = s + HEAD + OBJ * j;
    if (j !== i && speed2(state, p) >= v2 && dist2XY(state, o, p) <= r2) return false;
  }
  return true;
}

/** Squared speed of the object whose state starts at o. */
function speed2(state: ArrayLike<number>, o: number): number {
  return state[o + 7] * state[o + 7] + state[o + 8] * state[o + 8] + state[o + 9] * state[o + 9];
}

/** Squared horizontal distance between the positions starting at a and b. */
function dist2XY(state: ArrayLike<number>, a: number, b: number): number {
  const dx = state[a] - state[b],
    dy = state[a + 1] - state[b + 1];
  return dx * dx + dy * dy;
}

/** Bit i set: object i of state row s is held still by the rest gate (one evaluation per row, shared by
 *  every member's prediction). */
export function restMask(layout: StateLayout, limits: StateLimits, state: ArrayLike<number>, s: number): number {
  let mask = 0;
  if (limits.restGate)
    for (let i = 0; i < layout.numObjects; i++) if (isGatedAtRest(layout, limits.restGate, state, s, i)) mask |= 1 << i;
  return mask;
}

/** next = state + Δ, then quaternions renormalised (sign kept), fingers within [0, maxOpening], the tool
 *  inside the workspace and its yaw inside +-yawLimit; objects in `rest` (restMask) keep their state;
 *  objects in `attach` (held with the gripper commanded closed) move rigidly with the predicted tool
 *  and the fingers keep their opening (measured on held-out physics: such an object's step differs
 *  from the tool's by 0.27 mm on average and stays held 99.9% of the time). Non-finite predictions keep
 *  the current value. */
export function applyDelta(
  layout: StateLayout,
  limits: StateLimits,
  state: ArrayLike<number>,
  s: number,
  delta: ArrayLike<number>,
  d: number,
  out: Float64Array,
  o: number,
  rest = restMask(layout, limits, state, s),
  attach = 0,
): void {
  const n = layout.stateDim;
  for (let j = 0; j < n; j++) {
    const v = state[s + j] + delta[d + j];
    out[o + j] = Number.isFinite(v) ? v : state[s + j];
  }
  for (let j = 0; j < 3; j++) out[o + j] = clamp(out[o + j], limits.workspace.min[j], limits.workspace.max[j]);
  out[o + 3] = clamp(out[o + 3], -limits.yawLimit, limits.yawLimit);
  out[o + 4] = clamp(out[o + 4], 0, limits.maxOpening);
  out[o + 5] = clamp(out[o + 5], 0, limits.maxOpening);
  if (attach) {
    out[o + 4] = state[s + 4];
    out[o + 5] = state[s + 5];
  }
  for (let i = 0; i < layout.numObjects; i++) {
    if (rest & (1 << i)) {
      for (let j = 0; j < OBJ; j++) out[o + HEAD + OBJ * i + j] = state[s + HEAD + OBJ * i + j];
      continue;
    }
    const p = o + HEAD + OBJ * i;
    const cur = s + HEAD + OBJ * i;
    if (attach & (1 << i)) for (let j = 0; j < 3; j++) out[p + j] = state[cur + j] + out[o + j] - state[s + j];
    const q = p + 3;
    const norm = Math.sqrt(
      out[q] * out[q] + out[q + 1] * out[q + 1] + out[q + 2] * out[q + 2] + out[q + 3] * out[q + 3],
    );
    if (norm > 1e-6) for (let j = 0; j < 4; j++) out[q + j] /= norm;
    else for (let j = 0; j < 4; j++) out[q + j] = state[cur + 3 + j];
    if (limits.settleTol !== undefined) {
      const rest = restHeight(layout.objects[i], [out[q], out[q + 1], out[q + 2], out[q + 3]]);
      if (out[p + 2] - rest < limits.settleTol) out[p + 2] = rest; // nothing sinks into the table
    }
  }
  const landed = limits.supportTol === undefined ? 0 : snapSupports(layout, limits.supportTol, out, o, rest);
  for (let i = 0; i < layout.numObjects; i++) {
    if (rest & (1 << i) || !limits.velocityFromDisplacement) continue;
    const p = o + HEAD + OBJ * i;
    const cur = s + HEAD + OBJ * i;
    for (let j = 0; j < 3; j++) out[p + 7 + j] = (out[p + j] - state[cur + j]) / limits.velocityFromDisplacement;
    if (landed & (1 << i)) out[p + 9] = Math.max(0, out[p + 9]);
  }
}

/** Support snap of the predicted state at `o` (StateLimits.supportTol), lowest objects first so a
 *  snapped support carries what rests on it; returns a bit per object resting on the table or on
 *  another object (its downward velocity is dropped). Objects in `fixed` are not moved. */
function snapSupports(layout: StateLayout, tol: number, out: Float64Array, o: number, fixed: number): number {
  const m = layout.numObjects;
  const at = (i: number) => o + HEAD + OBJ * i;
  const quat = (i: number): [number, number, number, number] => {
    const q = at(i) + 3;
    return [out[q], out[q + 1], out[q + 2], out[q + 3]];
  };
  const order = Array.from({ length: m }, (_, i) => i).sort((a, b) => out[at(a) + 2] - out[at(b) + 2]);
  let landed = 0;
  for (const i of order) {
    const p = at(i);
    const own = restHeight(layout.objects[i], quat(i));
    if (out[p + 2] - own < tol) landed |= 1 << i; // on the table (settleTol snapped it)
    if (fixed & (1 << i)) continue;
    for (const j of order) {
      const b = at(j);
      if (j === i || out[b + 2] >= out[p + 2]) continue;
      const half = Math.min(layout.objects[j].halfExtents[0], layout.objects[j].halfExtents[1]);
      const dx = out[p] - out[b],
        dy = out[p + 1] - out[b + 1];
      if (dx * dx + dy * dy > half * half) continue;
      const want = out[b + 2] + restHeight(layout.objects[j], quat(j)) + own;
      if (out[p + 2] - want >= tol) continue;
      out[p + 2] = want; // nothing sinks into the object below
      landed |= 1 << i;
    }
  }
  return landed;
}

/** Index ranges of the state groups the reports name. */
export function stateGroups(numObjects: number): {
  ee: number[];
  yaw: number[];
  fingers: number[];
  objectPos: number[][];
} {
  return {
    ee: [0, 1, 2],
    yaw: [3],
    fingers: [4, 5],
    objectPos: Array.from({ length: numObjects }, (_, i) => [HEAD + OBJ * i, HEAD + OBJ * i + 1, HEAD + OBJ * i + 2]),
  };
}
