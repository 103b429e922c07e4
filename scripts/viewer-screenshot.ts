// npm run screenshot:viewer — docs/viewer/screenshot.png, the picture in the README and docs/viewer.md: the
// viewer built from the current source, a real training run (the shipped base VLA post-trained with WMRL
// for a few smoke-preset iterations with held-out evaluations, or the finished run given with --run) in
// the Runs tab at 1400x900, with its header, its curves and, when the run recorded episodes, one replayed
// side by side. Needs Debian's chromium (/usr/bin/chromium). About a minute on 2 cores.
//
//   node bin/run-ts.mjs scripts/viewer-screenshot.ts [--run runs/some-train-run] [--out file.png]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { build } from 'vite';
import { startViewer } from '../src/cli/serve.ts';
import { loadSceneFile, DEFAULT_SCENE_PATH } from '../src/scene/load-file.ts';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'];
/** The run made when none is given: short, but long enough for curves and a few held-out evaluations. */
const TRAIN = {
  iterations: 30,
  tasks: 'pick-place,put-in-bin',
  config: { evalEvery: 6, evalEpisodes: 8, lr: 2e-4 }, // the smoke preset's 1e-3 overshoots in 30 iterations
};

const { values } = parseArgs({
  options: { run: { type: 'string' }, out: { type: 'string', default: 'docs/viewer/screenshot.png' } },
});
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: sudo apt-get install -y chromium`);
const say = (line: string) => console.error(`screenshot: ${line}`);
const tmp = mkdtempSync(join(tmpdir(), 'wmrl-screenshot-'));

/** A fresh WMRL run of the shipped models, through the CLI as a user runs it. */
function trainRun(out: string): void {
  const config = join(tmp, 'config.json');
  writeFileSync(config, JSON.stringify(TRAIN.config));
  const args = [
    ...['train', '--mode', 'wmrl', '--preset', 'smoke', '--iterations', String(TRAIN.iterations)],
    ...['--task', TRAIN.tasks, '--config', config, '--out', out],
  ];
  say(`wmrl ${args.join(' ')}`);
  const r = spawnSync(process.execPath, ['bin/wmrl.mjs', ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`wmrl train exited with ${r.status ?? r.signal}`);
}

try {
  const run = values.run ? resolve(values.run) : join(tmp, 'runs', 'wmrl-pick-place-put-in-bin');
  if (!values.run) trainRun(run);
  if (!existsSync(join(run, 'config.json'))) throw new Error(`--run: ${run} is not a training run (no config.json)`);
  const viewerDir = join(tmp, 'viewer');
  say('building the viewer');
  await build({
    configFile: 'viewer/vite.config.ts',
    logLevel: 'error',
    mode: 'production',
    build: { outDir: viewerDir },
  });
  const server = await startViewer({
    scene: loadSceneFile(DEFAULT_SCENE_PATH),
    runs: dirname(run),
    worldModel: 'models/wm-base.onnx',
    port: 0,
    viewerDir,
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => say(`page error: ${err.message}`));
    await page.goto(server.url);
    const viewer = <T>(key: string) =>
      page.evaluate(
        (k) => (window as unknown as Record<string, Record<string, unknown>>).wmrlViewer[k],
        key,
      ) as Promise<T>;
    await page.waitForFunction(
      () => (window as unknown as { wmrlViewer: { connected: boolean } }).wmrlViewer.connected,
    );
    await page.click('button[data-tab=runs]');
    await page.selectOption('#runs', basename(run));
    await page.locator('#run-header [data-field=state]').waitFor();
    await page.waitForFunction(
      () => (window as unknown as { wmrlViewer: { curveSeries: number } }).wmrlViewer.curveSeries > 0,
    );
    const rows = page.locator('#episodes tbody tr');
    if ((await rows.count()) > 0) {
      await page.check('input[name=dynamics][value=side-by-side]');
      await rows.first().click();
      await page.waitForFunction(
        () => (window as unknown as { wmrlViewer: { framesShown: number } }).wmrlViewer.framesShown > 3,
      );
      await page.click('#play'); // pause, then show the middle of the episode
      const last = Number(await page.locator('#scrub').getAttribute('max'));
      await page.locator('#scrub').fill(String(Math.round(last / 2)));
    } else say('the run recorded no episodes: the 3D view shows the arm at home');
    await page.waitForTimeout(300); // the next animation frame draws the scene
    await page.screenshot({ path: values.out });
    say(
      `${values.out}: ${basename(run)}, state ${await page.locator('#run-header [data-field=state]').textContent()}, ` +
        `${await viewer<number>('curveSeries')} curves, ${await rows.count()} episodes`,
    );
  } finally {
    await browser.close();
    await server.close();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
