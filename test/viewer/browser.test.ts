// End to end in real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core): the built
// viewer against a real server, a live stream, a recorded episode replayed in physics / world model /
// side by side, a training run's header and two runs' curves overlaid, and the base policy run in the page
// with onnxruntime-web, its tokens equal to Node's. (The README's screenshot is `npm run screenshot:viewer`.)
import { cpSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import { build } from 'vite';
import * as ortNode from 'onnxruntime-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startViewer } from '../../src/cli/serve.ts';
import { camerasOf, createTabletopEnv } from '../../src/physics/index.ts';
import { collectEpisodes, randomPolicy } from '../../src/rollout/index.ts';
import { tapFrames } from '../../src/env/index.ts';
import type { ViewerServer } from '../../src/server/index.ts';
import { InPageRunner, type ModelBytes } from '../../viewer/src/sim/runner.ts';
import { tabletopTrainSetup } from '../../src/experiment/index.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { resolveConfig, train } from '../../src/trainer/index.ts';
import { SCENE, makeRunRoot, writeTrainingRun } from '../server/fixture.ts';
import { CHROMIUM, CHROMIUM_PATH, describeWith } from '../helpers/programs.ts';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const IN_PAGE = { task: 'tabletop/pick-place', seed: 3, steps: 6 };

let server: ViewerServer;
let browser: Browser;
let page: Page;
let stopLive = false;
let liveDone: Promise<void> = Promise.resolve();

const bytes = (name: string): ModelBytes => {
  const sidecar = readFileSync(`models/${name}.json`, 'utf8');
  const parts = Object.fromEntries(
    Object.keys(JSON.parse(sidecar).parts ?? {}).map((p) => [p, new Uint8Array(readFileSync(`models/${p}`))]),
  );
  return { name: `models/${name}.onnx`, onnx: new Uint8Array(readFileSync(`models/${name}.onnx`)), sidecar, parts };
};

/** Node's tokens for the in-page episode (onnxruntime-node), the reference the page must match. */
async function nodeTokens(dynamics: 'physics' | 'world-model', policy = 'vla-base'): Promise<Record<string, number>[]> {
  const runner = await InPageRunner.create(
    { scene: SCENE, policy: bytes(policy), worldModel: bytes('wm-base') },
    { dynamics, ort: ortNode },
  );
  try {
    let v = await runner.reset({ task: IN_PAGE.task, seed: IN_PAGE.seed });
    const tokens: Record<string, number>[] = [];
    while (!v.done && v.step < IN_PAGE.steps) {
      v = await runner.step();
      tokens.push(v.tokens);
    }
    return tokens;
  } finally {
    await runner.close();
  }
}

/** Clicks Run in the in-page panel and waits for the run to finish (or fail); its result. */
async function inPageRun(): Promise<{ error: string; tokens: Record<string, Record<string, number>[]> }> {
  await page.click('#ip-run');
  await page.waitForFunction(
    () => {
      const r = (window as unknown as { wmrlInPage: { done: boolean; error: string } }).wmrlInPage;
      return r.done || r.error !== '';
    },
    null,
    { timeout: 120_000 },
  );
  return page.evaluate(
    () =>
      (window as unknown as { wmrlInPage: { error: string; tokens: Record<string, Record<string, number>[]> } })
        .wmrlInPage,
  );
}

const canvasShot = () => page.locator('#view').screenshot();
/** A frame of another live stream than the env's. */
const OTHER_FRAME = {
  stream: 'push world model 1',
  task: 'tabletop/push',
  source: 'world-model' as const,
  step: 0,
  instruction: 'push the red cube',
  bodies: [],
  reward: 0,
  progress: 0,
  success: false,
  done: false,
  terms: {},
};
const state = <T>(key: string) =>
  page.evaluate((k) => (window as unknown as Record<string, Record<string, unknown>>).wmrlViewer[k], key) as Promise<T>;

/** A real wmrl training run with its recorded episodes (2 iterations, evaluated after each). */
async function trainRecorded(dir: string): Promise<void> {
  const model = await loadPolicy('models/vla-base.onnx');
  const { tasks, worldModel } = await tabletopTrainSetup(SCENE, ['tabletop/pick-place'], {
    mode: 'wmrl',
    worldModel: 'models/wm-base.onnx',
    seed: 0,
    cameras: camerasOf(model.config.cameras),
  });
  const cfg = resolveConfig('smoke', { mode: 'wmrl', iterations: 2, evalEvery: 1, evalEpisodes: 2 });
  const policy = { config: model.config, params: model.params, specHash: model.sidecar.specHash };
  await train({ tasks, worldModel, policy }, cfg, dir);
  await worldModel?.close();
}

describeWith(CHROMIUM)('viewer in headless Chromium', () => {
  beforeAll(async () => {
    const { root } = await makeRunRoot();
    const viewerDir = join(dirname(root), 'viewer'); // built from the current source, whatever viewer/dist holds
    await build({
      configFile: 'viewer/vite.config.ts',
      logLevel: 'error',
      mode: 'production',
      build: { outDir: viewerDir },
    });
    cpSync('test/fixtures/viewer/wmrl-seed1', join(root, 'wmrl-seed1'), { recursive: true }); // a real run's metrics, every 8th iteration
    for (const mode of ['real', 'wmrl'])
      writeTrainingRun(join(root, `speedup/${mode}-seed0`), {
        mode,
        iterations: 3,
        rows: 3,
        evalEvery: 1,
        success: (i) => (mode === 'wmrl' ? 0.2 * i : 0.1 * i),
      });
    await trainRecorded(join(root, 'trained'));
    server = await startViewer({
      scene: SCENE,
      runs: root,
      liveRun: join(root, 'wmrl-seed1'),
      worldModel: 'models/wm-base.onnx',
      port: 0,
      viewerDir,
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: FLAGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => console.error('page error:', err.message));
  }, 180_000);

  afterAll(async () => {
    stopLive = true;
    await liveDone;
    await browser?.close();
    await server?.close();
  });

  it('opens on the live run and shows frames streamed from a running env', async () => {
    await page.goto(server.url);
    await page.waitForFunction(
      () => (window as unknown as { wmrlViewer: { connected: boolean } }).wmrlViewer.connected,
    );
    liveDone = (async () => {
      const env = await createTabletopEnv({ scene: SCENE, taskId: 'tabletop/push', numEnvs: 1 });
      const tapped = tapFrames(env, server.hub, 'push physics live');
      for (let k = 0; !stopLive && k < 200; k++)
        await collectEpisodes(tapped, randomPolicy(env.spec, k), { seeds: [k] });
      env.close();
    })();
    await page.waitForFunction(
      () => (window as unknown as { wmrlViewer: { liveFrames: number } }).wmrlViewer.liveFrames > 20,
      null,
      { timeout: 30_000 },
    );
    const a = await canvasShot();
    await page.waitForTimeout(500);
    expect((await canvasShot()).equals(a)).toBe(false);
    await expect.poll(() => page.locator('#streams option').count()).toBeGreaterThan(0);
    // a live stream is one dynamics: the switch is off, and says why
    expect(await page.$eval('#dynamics', (f) => (f as HTMLFieldSetElement).disabled)).toBe(true);
    expect(await page.locator('#dynamics-note').innerText()).toMatch(/one dynamics each/);
    expect(await page.locator('#run-header [data-field=kind]').innerText()).toBe('training live');
    expect(await page.locator('#status').innerText()).toMatch(/training live/);
    stopLive = true;
    await liveDone;
    // another stream: the old one's last frame goes at once
    const [last] = await page.$$eval('#streams option', (o) => o.map((x) => (x as HTMLOptionElement).value));
    server.hub.publish(OTHER_FRAME);
    await expect.poll(() => page.locator('#streams option').count()).toBe(2);
    expect(await page.locator('#frameinfo').innerText()).not.toBe('');
    await page.selectOption('#streams', OTHER_FRAME.stream);
    expect(await page.locator('#frameinfo').innerText()).toBe('');
    expect(await page.locator('#stepinfo').innerText()).toBe('');
    expect(last).toBe('push physics live');
  });

  it('shows both policy cameras, side by side, for a stream whose policy reads front and wrist', async () => {
    expect(await state<string[]>('policyCameras')).toEqual(['front']);
    expect(await page.locator('#policy-cam-2').isVisible()).toBe(false);
    const cameras = ['front', 'wrist'];
    const env = await createTabletopEnv({ scene: SCENE, taskId: 'tabletop/pick-place', numEnvs: 1, cameras });
    const tapped = tapFrames(env, server.hub, 'pick-place front+wrist');
    try {
      await tapped.reset({ seed: 0 }); // announces the stream
      await expect.poll(() => page.locator('#streams option').count()).toBe(3);
      await page.selectOption('#streams', 'pick-place front+wrist');
      await collectEpisodes(tapped, randomPolicy(env.spec, 0), { seeds: [1] });
      await expect.poll(() => state<string[]>('policyCameras')).toEqual(cameras);
      expect(await page.locator('#policy-cam-2').isVisible()).toBe(true);
      expect(await page.locator('#policy-cam-2-label').innerText()).toBe('wrist');
    } finally {
      env.close();
    }
  });

  it('replays a recorded episode: the episode list fills, the canvas moves, the dynamics switch changes the view', async () => {
    await page.click('button[data-tab=runs]');
    await page.selectOption('#runs', 'wmrl-seed1'); // curves of a real training run
    await expect.poll(() => page.locator('#episodes tbody tr').count()).toBe(0);
    await page.selectOption('#runs', 'rollouts/push');
    await expect.poll(() => page.locator('#episodes tbody tr').count()).toBe(2);
    expect(await page.locator('#episodes tbody tr').first().innerText()).toMatch(/push/);
    await page.waitForFunction(
      () => (window as unknown as { wmrlViewer: { framesShown: number } }).wmrlViewer.framesShown > 5,
    );
    const a = await canvasShot();
    await page.waitForTimeout(400);
    const b = await canvasShot();
    expect(b.equals(a)).toBe(false);
    await page.click('#play'); // pause, then scrub to the end: physics and the world model have drifted apart
    await page.locator('#scrub').fill('40');
    const physics = await canvasShot();
    await page.check('input[name=dynamics][value=world-model]');
    expect(await page.locator('#frameinfo').innerText()).toMatch(/^world-model/);
    expect((await canvasShot()).equals(physics)).toBe(false);
    await page.check('input[name=dynamics][value=side-by-side]');
    expect(await page.locator('#frameinfo').innerText()).toMatch(/^physics/);
    expect((await canvasShot()).equals(physics)).toBe(false); // the ghost is drawn over the physics rollout
    expect(await state<number>('framesShown')).toBeGreaterThan(10);
    expect(await page.$eval('#dynamics', (f) => (f as HTMLFieldSetElement).disabled)).toBe(false);
    await expect.poll(() => page.locator('#run-header [data-field=kind]').innerText()).toBe('rollout');
    expect(await state<string[]>('curvePanels')).toEqual([]); // a rollout folder has no training curves
    expect(await page.locator('#curves-note').innerText()).toMatch(/rollout folder/);
  });

  it("a finished training run's header shows i/N and its state; ticking a second run overlays its curves", async () => {
    await page.selectOption('#runs', 'speedup/wmrl-seed0');
    const field = (name: string) => page.locator(`#run-header [data-field=${name}]`).innerText();
    await expect.poll(() => field('iteration')).toBe('3/3');
    expect(await field('state')).toBe('finished');
    expect(await field('mode')).toBe('wmrl');
    expect(await field('heldout')).toBe('27.5% [17.5%, 37.5%]'); // the fixture's evaluation after iteration 3
    await expect.poll(() => state<string[]>('curveRuns')).toEqual(['speedup/wmrl-seed0']);
    expect(await state<string[]>('curvePanels')).toEqual(['success', 'heldout', 'debias', 'weight', 'time']);
    // one run: anchors + world model, held-out, bias before + after, w, 4 clock parts (refresh and fidelity are 0)
    expect(await state<number>('curveSeries')).toBe(10);
    await page.check('#compare input[value="speedup/real-seed0"]');
    await expect.poll(() => state<string[]>('curveRuns')).toEqual(['speedup/wmrl-seed0', 'speedup/real-seed0']);
    expect(await state<number>('curveSeries')).toBe(14); // each run's lines, the clock as one total per run
    const legend = page.locator('figure[data-curve=success] .legend li');
    expect(await legend.allInnerTexts()).toEqual(['wmrl-seed0', 'real-seed0', 'anchors (physics)', 'world model']);
    expect(await legend.first().getAttribute('title')).toBe('speedup/wmrl-seed0');
    // the header still follows the selected run; unticking leaves its curves alone
    expect(await field('run')).toBe('speedup/wmrl-seed0');
    await page.uncheck('#compare input[value="speedup/real-seed0"]');
    await expect.poll(() => state<string[]>('curveRuns')).toEqual(['speedup/wmrl-seed0']);
  });

  it("a training run's recorded episodes are listed by iteration and play, a world-model rollout beside its physics twin", async () => {
    await page.selectOption('#runs', 'trained');
    const field = (name: string) => page.locator(`#run-header [data-field=${name}]`).innerText();
    await expect.poll(() => field('iteration')).toBe('2/2');
    expect(await field('state')).toBe('finished');
    // 3 evaluations (before training, after 1 and 2 iterations): a physics episode and 4 world-model rollouts each
    await expect.poll(() => page.locator('#episodes tbody tr').count()).toBe(15);
    expect(await page.locator('#episodes thead').innerText()).toMatch(/it\s+#\s+task\s+engine\s+ok\s+return/);
    const wmRow = page.locator('#episodes tbody tr').nth(6); // after iteration 1: physics #5, then its group
    expect(await wmRow.innerText()).toMatch(/^1\s+6\s+pick-place\s+wm #5 @\d+/);
    const before = await state<number>('framesShown');
    await page.check('input[name=dynamics][value=side-by-side]');
    await wmRow.click();
    await expect.poll(() => state<number>('framesShown')).toBeGreaterThan(before + 2);
    await page.click('#play'); // pause on a frame
    await page.check('input[name=dynamics][value=world-model]');
    expect(await page.locator('#frameinfo').innerText()).toMatch(/^world-model/);
    await page.check('input[name=dynamics][value=physics]');
    expect(await page.locator('#frameinfo').innerText()).toMatch(/^physics/);
  });

  it('runs the base policy in the page (Rapier + onnxruntime-web), in physics and in the world model, with the tokens Node takes', async () => {
    await page.click('button[data-tab=inpage]');
    await page.selectOption('#ip-task', IN_PAGE.task);
    await page.fill('#ip-seed', String(IN_PAGE.seed));
    await page.fill('#ip-steps', String(IN_PAGE.steps));
    await page.check('input[name=dynamics][value=side-by-side]');
    const result = await inPageRun();
    expect(result.error).toBe('');
    expect(result.tokens.physics).toHaveLength(IN_PAGE.steps);
    expect(result.tokens.physics).toEqual(await nodeTokens('physics'));
    expect(result.tokens['world-model']).toEqual(await nodeTokens('world-model'));
    // the page shows every camera the policy reads
    const { config } = JSON.parse(bytes('vla-base').sidecar) as { config: { cameras: string[] } };
    await expect.poll(() => state<string[]>('policyCameras')).toEqual(camerasOf(config.cameras));
  });

  it('runs the shipped post-trained policy (models/vla-wmrl.onnx) in the page with the tokens Node takes', async () => {
    await page.selectOption('#ip-policy', 'vla-wmrl');
    await page.check('input[name=dynamics][value=physics]');
    const result = await inPageRun();
    expect(result.error).toBe('');
    const wmrl = await nodeTokens('physics', 'vla-wmrl');
    expect(result.tokens.physics).toEqual(wmrl);
    expect(wmrl).not.toEqual(await nodeTokens('physics')); // another policy than the base
    await page.selectOption('#ip-policy', 'vla-base');
  });

  it('a typed instruction picks its task family and a seed whose scene has that object and target', async () => {
    await page.fill('#ip-instruction', 'put the blue cube in the grey bin');
    await page.check('input[name=dynamics][value=physics]');
    await page.click('#ip-run');
    await page.waitForFunction(
      () => (window as unknown as { wmrlInPage: { done: boolean; error: string } }).wmrlInPage.done,
      null,
      { timeout: 60_000 },
    );
    const r = await page.evaluate(
      () => (window as unknown as { wmrlInPage: { task: string; seed: number } }).wmrlInPage,
    );
    expect(r.task).toBe('tabletop/put-in-bin');
    expect(await page.locator('#frameinfo').innerText()).toContain('put the blue cube in the grey bin');
  });
});
