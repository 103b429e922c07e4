// In-page mode: Rapier and onnxruntime-web run a shipped policy (base or post-trained) in this page, in physics, in the
// world model, or both side by side (each dynamics with its own rollout of the same seed).
import * as ortWeb from 'onnxruntime-web/wasm';
import type { Frame } from '../../src/protocol/index.ts';
import type { Scene } from '../../src/scene/schema.ts';
import type { Player, Track } from './player.ts';
import { instructionMismatch } from './sim/instruction.ts';
import { type Dynamics, InPageRunner, type ModelBytes, matchInstruction, type StepView } from './sim/runner.ts';

const MODELS = '/models/';

/** Tokens of the last in-page run, by dynamics: the browser test compares them with Node's. */
export const inPageResult: {
  done: boolean;
  task: string;
  seed: number;
  tokens: Record<string, Record<string, number>[]>;
  error: string;
} = { done: false, task: '', seed: 0, tokens: {}, error: '' };
(window as unknown as { wmrlInPage: unknown }).wmrlInPage = inPageResult;

async function bytes(name: string): Promise<Uint8Array> {
  const res = await fetch(MODELS + name);
  if (!res.ok) throw new Error(`${MODELS}${name}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** A model's .onnx, its sidecar and the parts the sidecar lists, fetched from the server. */
async function model(name: string): Promise<ModelBytes> {
  const sidecar = new TextDecoder().decode(await bytes(`${name}.json`));
  const listed = Object.keys((JSON.parse(sidecar) as { parts?: Record<string, string> }).parts ?? {});
  const parts = Object.fromEntries(await Promise.all(listed.map(async (p) => [p, await bytes(p)] as const)));
  return { name: `${MODELS}${name}.onnx`, onnx: await bytes(`${name}.onnx`), sidecar, parts };
}

/** Runners per shipped policy (vla-base, vla-wmrl), made on first use. */
const runners = new Map<string, Promise<Record<Dynamics, InPageRunner>>>();

function loadRunners(scene: Scene, policy: string): Promise<Record<Dynamics, InPageRunner>> {
  ortWeb.env.wasm.numThreads = 1; // the page is not cross-origin isolated; one thread everywhere
  if (!runners.has(policy))
    runners.set(
      policy,
      (async () => {
        const assets = { scene, policy: await model(policy), worldModel: await model('wm-base') };
        const [physics, worldModel] = await Promise.all([
          InPageRunner.create(assets, { dynamics: 'physics', ort: ortWeb }),
          InPageRunner.create(assets, { dynamics: 'world-model', ort: ortWeb }),
        ]);
        return { physics, 'world-model': worldModel };
      })(),
    );
  return runners.get(policy)!;
}

const toFrame = (v: StepView, source: Frame['source'], task: string): Frame => ({
  stream: 'in-page',
  task,
  source,
  step: v.step,
  instruction: v.instruction,
  bodies: v.bodies,
  reward: v.reward,
  progress: v.progress,
  success: v.success,
  done: v.done,
  terms: { reward: v.reward },
  ...(v.offTable && { offTable: true }),
});

export function setupInPage(scene: Scene, player: Player, status: (text: string) => void): void {
  const taskSelect = document.getElementById('ip-task') as HTMLSelectElement;
  taskSelect.replaceChildren(...scene.tasks.map((t) => new Option(t.id, t.id)));
  const button = document.getElementById('ip-run') as HTMLButtonElement;
  button.onclick = async () => {
    button.disabled = true;
    inPageResult.done = false;
    try {
      const typed = (document.getElementById('ip-instruction') as HTMLInputElement).value.trim();
      let task = taskSelect.value;
      let seed = Number((document.getElementById('ip-seed') as HTMLInputElement).value) || 0;
      let matched = '';
      if (typed) {
        const match = matchInstruction(scene, typed);
        if (!match)
          throw new Error(
            `"${typed}": ${instructionMismatch(scene, typed) ?? 'no family trains on that object and target'}`,
          );
        ({ task, seed } = match);
        matched = `matched ${match.object} -> ${match.target}, ${task} seed ${seed}; `;
      }
      const steps = Math.max(
        1,
        Math.min(400, Number((document.getElementById('ip-steps') as HTMLInputElement).value) || 80),
      );
      const mode = (document.querySelector<HTMLInputElement>('input[name=dynamics]:checked')?.value ?? 'physics') as
        | Dynamics
        | 'side-by-side';
      const use: Dynamics[] = mode === 'side-by-side' ? ['physics', 'world-model'] : [mode];
      status('loading models…');
      const all = await loadRunners(scene, (document.getElementById('ip-policy') as HTMLSelectElement).value);
      Object.assign(inPageResult, { task, seed, tokens: {} });
      const track: Track = { physics: [], images: [] };
      for (const d of use) {
        const frames: Frame[] = [];
        const tokens: Record<string, number>[] = [];
        let v = await all[d].reset({ task, seed, instruction: typed || undefined });
        for (;;) {
          frames.push(toFrame(v, d, task));
          if (d === use[0])
            track.images!.push(
              v.views.map((x) => ({ camera: x.camera, data: x.data, width: v.imageWidth, height: v.imageHeight })),
            );
          status(`${d}: step ${v.step}`);
          if (v.done || v.step >= steps) break;
          v = await all[d].step();
          tokens.push(v.tokens);
        }
        inPageResult.tokens[d] = tokens;
        if (d === 'world-model' && use.length === 2) track.worldModel = frames;
        else if (d === 'world-model') Object.assign(track, { physics: frames, worldModel: frames });
        else track.physics = frames;
      }
      if (track.worldModel && track.worldModel !== track.physics)
        track.divergence = divergence(
          track.physics,
          track.worldModel,
          scene.objects.map((o) => o.name),
        );
      inPageResult.done = true;
      status(
        `${matched}${task} seed ${seed}: ${track.physics.length - 1} steps` +
          `${track.physics.at(-1)?.success ? ', solved' : ''}`,
      );
      player.setTrack(track, 0);
      player.play();
    } catch (err) {
      inPageResult.error = (err as Error).message;
      status(`error: ${(err as Error).message}`);
    } finally {
      button.disabled = false;
    }
  };
}

/** Per-step distance between the two rollouts' tools and objects (by body name). */
function divergence(a: Frame[], b: Frame[], objectNames: string[]): Track['divergence'] {
  const n = Math.min(a.length, b.length);
  const d = (p: readonly number[], q: readonly number[]) => Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
  const tcp_m: number[] = [],
    objects_m: number[] = [];
  for (let t = 0; t < n; t++) {
    const other = new Map(b[t].bodies.map((x) => [x.name, x.pos]));
    const palm = a[t].bodies.find((x) => x.name === 'palm');
    tcp_m.push(palm && other.get('palm') ? d(palm.pos, other.get('palm')!) : 0);
    const objs = a[t].bodies.filter((x) => objectNames.includes(x.name) && other.has(x.name));
    objects_m.push(objs.reduce((s, x) => s + d(x.pos, other.get(x.name)!), 0) / Math.max(1, objs.length));
  }
  return { tcp_m, objects_m };
}
