// The viewer page: live streams, recorded runs and in-page runs shown in one three.js view with a
// timeline, the policy's own 64x64 camera, a per-step divergence plot, and the run's header and training
// curves (run-view.ts).
import { z } from 'zod';
import {
  EpisodeSummarySchema,
  type Frame,
  type LiveKind,
  ReplaySchema,
  RunSummarySchema,
} from '../../src/protocol/index.ts';
import { createRenderer, type Renderer } from '../../src/render/renderer.ts';
import { type Scene, SceneSchema } from '../../src/scene/schema.ts';
import { connect, request } from './connection.ts';
import { setupInPage } from './inpage.ts';
import { drawChart } from './plot.ts';
import { TabletopView } from './scene3d.ts';
import { Player, type PolicyView, type Track } from './player.ts';
import { RunView, runLabel } from './run-view.ts';

type Tab = 'live' | 'runs' | 'inpage';
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const LIVE_KEEP = 400;

/** What tests and people at the console can read: counts that show the page is alive. */
export const viewerState = {
  connected: false,
  framesShown: 0,
  liveFrames: 0,
  dropped: 0,
  episodes: 0,
  error: '',
  curveSeries: 0,
  curveRuns: [] as string[],
  curvePanels: [] as string[],
  /** The cameras the policy-camera panel shows now. */
  policyCameras: [] as string[],
};
(window as unknown as { wmrlViewer: unknown }).wmrlViewer = viewerState;

let scene: Scene | null = null;
let view: TabletopView | null = null;
/** Renderers of the policy cameras, made on first use; the default: the scene's first fixed camera. */
const cameras = new Map<string, Renderer>();
let defaultCamera: string | null = null;
let tab: Tab = 'live';
let liveRun: string | null = null;
let liveKind: LiveKind = 'training';
/** The run whose episodes the Runs tab lists (opened when that tab first shows). */
let openedRun: string | null = null;
let liveStream: string | null = null;
/** Live view follows the newest frame until the user scrubs or pauses. */
let follow = true;
const live: Frame[] = [];
const player = new Player(show);

function status(text: string): void {
  $('status').textContent = text;
}

function dynamics(): 'physics' | 'world-model' | 'side-by-side' {
  return (document.querySelector<HTMLInputElement>('input[name=dynamics]:checked')?.value ?? 'physics') as 'physics';
}

/** Draws step t of the track under the current dynamics switch (live streams: their own dynamics). */
function show(track: Track, t: number): void {
  if (!view || !scene) return;
  const mode = tab === 'live' ? 'physics' : dynamics();
  const phys = track.physics[Math.min(t, track.physics.length - 1)];
  const wm = track.worldModel?.[Math.min(t, track.worldModel.length - 1)];
  const main = mode === 'world-model' ? (wm ?? phys) : (phys ?? wm);
  view.show(main?.bodies, mode === 'side-by-side' ? wm?.bodies : undefined);
  viewerState.framesShown++;
  const views = track.images?.[t] ?? (main ? renderViews(main.cameras ?? track.cameras, main.bodies) : []);
  drawViews(views);
  const div = track.divergence;
  drawChart(
    $<HTMLCanvasElement>('divergence'),
    div
      ? [
          { label: 'tool', colour: '#d62728', points: div.tcp_m.map((v, i) => [i, v]) },
          { label: 'objects', colour: '#1f77b4', points: div.objects_m.map((v, i) => [i, v]) },
        ]
      : [],
    { title: 'world model vs physics (m)', legend: true, x: 'integer', marker: t },
  );
  $('frameinfo').textContent = main
    ? [
        `${main.source} · ${main.task} · step ${main.step}`,
        `"${main.instruction}"`,
        `reward ${main.reward.toFixed(3)} · progress ${main.progress.toFixed(2)} · success ${main.success}`,
        ...(main.offTable ? ['an object fell off the table: episode over'] : []),
      ].join('\n')
    : '';
  $('stepinfo').textContent = `${t} / ${Math.max(0, track.physics.length - 1)}`;
}

/** The policy's cameras (default: the scene's first fixed one) rendered from a frame's body poses. */
function renderViews(names: readonly string[] | undefined, bodies: Frame['bodies']): PolicyView[] {
  if (!scene) return [];
  const views: PolicyView[] = [];
  for (const name of names ?? (defaultCamera ? [defaultCamera] : [])) {
    if (!scene.cameras.some((c) => c.name === name)) continue;
    if (!cameras.has(name)) cameras.set(name, createRenderer(scene, name));
    const r = cameras.get(name)!;
    try {
      views.push({ camera: name, data: r.render(bodies), width: r.width, height: r.height });
    } catch {
      // a wrist camera needs the palm's pose: a frame without it shows the other cameras only
    }
  }
  return views;
}

/** One canvas per view (at most two, side by side), each labelled with its camera. */
function drawViews(views: readonly PolicyView[]): void {
  const shown = views.slice(0, 2);
  $('policy-cams').classList.toggle('two', shown.length === 2);
  $('policy-cam-2').parentElement!.hidden = shown.length < 2;
  $('policy-cam-title').textContent =
    shown.length === 2 ? 'Policy cameras (as it sees them)' : 'Policy camera (as it sees it)';
  shown.forEach((v, k) => {
    const id = k === 0 ? 'policy-cam' : 'policy-cam-2';
    drawImage(id, v.data, v.width, v.height);
    $(`${id}-label`).textContent = v.camera;
  });
  viewerState.policyCameras = shown.map((v) => v.camera);
}

function drawImage(id: string, rgb: Uint8Array, w: number, h: number): void {
  const canvas = $<HTMLCanvasElement>(id);
  canvas.width = w;
  canvas.height = h;
  const ctx = canvas.getContext('2d')!;
  const img = ctx.createImageData(w, h);
  for (let i = 0; i < w * h; i++) {
    img.data[4 * i] = rgb[3 * i];
    img.data[4 * i + 1] = rgb[3 * i + 1];
    img.data[4 * i + 2] = rgb[3 * i + 2];
    img.data[4 * i + 3] = 255;
  }
  ctx.putImageData(img, 0, 0);
}

function setTab(next: Tab): void {
  tab = next;
  player.stop();
  for (const b of document.querySelectorAll<HTMLButtonElement>('.tab'))
    b.classList.toggle('active', b.dataset.tab === next);
  for (const s of document.querySelectorAll<HTMLElement>('#sidebar section'))
    s.classList.toggle('active', s.dataset.panel === next);
  // a live stream is one env's frames: physics or the world model, never both
  const fixed = next === 'live';
  const switcher = $<HTMLFieldSetElement>('dynamics');
  switcher.disabled = fixed;
  switcher.title = fixed ? 'live streams are one dynamics each: pick a physics or a world-model stream' : '';
  $('dynamics-note').hidden = !fixed;
  if (next === 'live') {
    if (live.length) player.setTrack({ physics: live }, live.length - 1);
    else clearStage();
    void runView.show(liveRun, liveKind);
  } else if (next === 'runs') {
    const id = $<HTMLSelectElement>('runs').value;
    if (id && id !== openedRun) void openRun(id);
    else {
      void runView.show(id || null);
      clearStage();
      document.querySelector<HTMLElement>('#episodes tbody tr.selected')?.click(); // its episode again
    }
  }
}

/** Forgets the frame shown: the arm back home, no camera image, no step. */
function clearStage(): void {
  player.setTrack({ physics: [] });
  view?.show(undefined);
  for (const id of ['policy-cam', 'policy-cam-2']) $<HTMLCanvasElement>(id).getContext('2d')?.clearRect(0, 0, 64, 64);
  $('frameinfo').textContent = '';
  $('stepinfo').textContent = '';
}

const socket = connect(
  (hello) => {
    scene = SceneSchema.parse(hello.scene);
    viewerState.connected = true;
    view ??= new TabletopView($<HTMLCanvasElement>('view'), scene);
    cameras.clear();
    defaultCamera = scene.cameras.find((c) => c.mount === 'fixed')?.name ?? null;
    setupInPage(scene, player, (text) => ($('ip-status').textContent = text));
    liveRun = hello.liveRun ?? null;
    liveKind = hello.liveKind ?? 'training';
    status(hello.live ? `connected · ${liveKind} live` : 'connected');
    setTab(hello.live ? 'live' : 'runs');
    void loadRuns();
    socket.emit('live:subscribe', {}, () => undefined);
  },
  (frames, dropped) => {
    viewerState.liveFrames += frames.length;
    viewerState.dropped += dropped;
    liveStream ??= frames[0]?.stream ?? null;
    for (const f of frames) addStream(f.stream);
    for (const f of frames) {
      if (f.stream !== liveStream) continue;
      if (f.step === 0) live.length = 0;
      live.push(f);
      if (live.length > LIVE_KEEP) live.shift();
    }
    if (tab === 'live' && follow && live.length) player.setTrack({ physics: live }, live.length - 1);
  },
  (streams) => streams.forEach(addStream),
  status,
);

function addStream(name: string): void {
  const select = $<HTMLSelectElement>('streams');
  if ([...select.options].some((o) => o.value === name)) return;
  select.add(new Option(name, name, false, name === liveStream));
}

async function loadRuns(): Promise<void> {
  const runs = await request(socket, 'run:list', z.array(RunSummarySchema));
  const select = $<HTMLSelectElement>('runs');
  select.replaceChildren(...runs.map((r) => new Option(runLabel(r), r.id)));
  runView.setRuns(runs);
  const first = runs.find((r) => r.episodes > 0) ?? runs[0];
  if (first) {
    select.value = first.id;
    if (tab === 'runs') await openRun(first.id);
  }
}

async function openRun(id: string): Promise<void> {
  openedRun = id;
  clearStage(); // the last run's episode goes; a run without episodes shows the arm at home
  try {
    if (tab === 'runs') void runView.show(id);
    const episodes = await request(socket, 'episode:list', z.array(EpisodeSummarySchema), { run: id }).catch(() => []);
    viewerState.episodes = episodes.length;
    const body = $('episodes').querySelector('tbody')!;
    // a training run's recorded episodes: by iteration, world-model rollouts beside their physics twin
    const trained = episodes.some((e) => e.iteration !== undefined);
    const columns = trained ? ['it', '#', 'task', 'engine', 'ok', 'return'] : ['#', 'task', 'seed', 'ok', 'return'];
    const head = document.createElement('tr');
    for (const c of columns) head.appendChild(document.createElement('th')).textContent = c;
    $('episodes').querySelector('thead')!.replaceChildren(head);
    body.replaceChildren(
      ...episodes.map((e) => {
        const tr = document.createElement('tr');
        const engine = e.source === 'world-model' ? `wm #${e.twin} @${e.start}` : 'physics';
        const cells = [e.index, e.task.replace(/^tabletop\//, ''), e.seed, e.success ? '✓' : '✗', e.return.toFixed(2)];
        if (trained) {
          cells.splice(2, 1, engine); // the engine where a rollout folder shows the seed
          cells.unshift(e.iteration ?? '');
        }
        for (const v of cells) tr.appendChild(document.createElement('td')).textContent = String(v);
        tr.title =
          e.source === 'world-model'
            ? `${e.instruction}: world model from step ${e.start} of episode #${e.twin} (side by side shows both)`
            : e.instruction;
        tr.onclick = () => {
          for (const r of body.querySelectorAll('tr')) r.classList.toggle('selected', r === tr);
          void openEpisode(id, e.index);
        };
        return tr;
      }),
    );
    (body.querySelector('tr') as HTMLElement | null)?.click();
  } catch (err) {
    viewerState.error = (err as Error).message;
    status((err as Error).message);
  }
}

async function openEpisode(run: string, index: number): Promise<void> {
  const replay = await request(socket, 'episode:replay', ReplaySchema, { run, index });
  player.setTrack(
    { physics: replay.physics, worldModel: replay.worldModel, divergence: replay.divergence, cameras: replay.cameras },
    0,
  );
  player.play();
}

const runView = new RunView(socket, viewerState, status);
/** Every 5 s the live run's header and curves while the Live tab shows, or those of a running run in the
 *  Runs tab; the next poll only after this one's answer. */
async function poll(): Promise<void> {
  if (tab === 'live' || (tab === 'runs' && runView.running)) await runView.refresh();
  setTimeout(() => void poll(), 5000);
}
setTimeout(() => void poll(), 5000);

for (const b of document.querySelectorAll<HTMLButtonElement>('.tab')) b.onclick = () => setTab(b.dataset.tab as Tab);
$<HTMLSelectElement>('runs').onchange = (e) => void openRun((e.target as HTMLSelectElement).value);
$<HTMLSelectElement>('streams').onchange = (e) => {
  liveStream = (e.target as HTMLSelectElement).value;
  live.length = 0;
  clearStage(); // the old stream's last frame goes at once; the new one's first frame follows
};
for (const r of document.querySelectorAll<HTMLInputElement>('input[name=dynamics]')) r.onchange = () => player.redraw();
$('play').onclick = () => {
  if (tab === 'live') follow = !follow;
  else if (player.paused) player.play();
  else player.stop();
};
$<HTMLInputElement>('scrub').oninput = (e) => {
  follow = false;
  player.seek(Number((e.target as HTMLInputElement).value));
};
