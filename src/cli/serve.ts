// Wiring of the viewer server for `serve` and the --serve flag of train, rollout and start: the scene's
// episode contract, world models for replays (one per task, opened on first use), the static mounts.
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { z } from 'zod';
import { sceneContract } from '../demos/index.ts';
import { fixedCameras, tabletopSpec } from '../physics/index.ts';
import type { LiveKind } from '../protocol/index.ts';
import type { Scene } from '../scene/index.ts';
import { type ReplayModel, type ViewerServer, checkBind, isLoopback, newToken, startServer } from '../server/index.ts';
import { openWorldModelEnv } from '../worldmodel/index.ts';
import { UsageError, intFlag } from './options.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const VIEWER_DIST = join(ROOT, 'viewer/dist');
/** Default port of the viewer; 0 picks a free one. */
export const DEFAULT_PORT = 8760;

export const ServeFlags = z.object({
  serve: z.boolean().optional(),
  port: intFlag(0).max(65535).optional(),
  host: z.string().min(1).optional(),
});

/** `on`: the viewer is served unless --no-serve (the main job); otherwise only with --serve. */
export function addServeFlags(cmd: Command, what: string, on = false): Command {
  return cmd
    .option(
      on ? '--no-serve' : '--serve',
      on ? `do not serve the live viewer while ${what}` : `serve the live viewer while ${what} (prints its URL first)`,
    )
    .option('--port <n>', `viewer port (default ${DEFAULT_PORT}; 0: any free port)`)
    .option('--host <h>', 'viewer bind address (default 127.0.0.1; any other needs the printed token)');
}

export interface ViewerOptions {
  scene: Scene;
  /** Run folder, or folder of runs, the viewer may read. */
  runs: string;
  /** The run being written now (inside `runs`). */
  liveRun?: string;
  /** What writes it (the viewer's header says "training live" or "rollout live"); default training. */
  liveKind?: LiveKind;
  worldModel?: string;
  host?: string;
  port?: number;
  /** The built viewer (default viewer/dist). */
  viewerDir?: string;
}

export async function startViewer(o: ViewerOptions): Promise<ViewerServer> {
  const host = o.host ?? '127.0.0.1';
  const token = isLoopback(host) ? undefined : newToken();
  checkBind(host, token);
  mkdirSync(o.runs, { recursive: true });
  const models = new Map<string, Promise<ReplayModel>>();
  const wm = o.worldModel && existsSync(o.worldModel) ? o.worldModel : undefined;
  const openModel =
    wm &&
    ((taskId: string) => {
      if (!models.has(taskId))
        models.set(
          taskId,
          openWorldModelEnv(wm, {
            scene: o.scene,
            spec: tabletopSpec(o.scene, taskId, fixedCameras(o.scene)),
            numEnvs: 1,
            render: false,
          }),
        );
      return models.get(taskId)!;
    });
  const viewerDir = o.viewerDir ?? VIEWER_DIST;
  if (!existsSync(join(viewerDir, 'index.html')))
    console.error(`wmrl: the viewer is not built (${relative(process.cwd(), viewerDir)}): run npm run build:viewer`);
  const liveRun = o.liveRun && relative(resolve(o.runs), resolve(o.liveRun)).split('\\').join('/');
  const options = {
    host,
    token,
    runRoot: o.runs,
    scene: o.scene,
    liveRun: liveRun || (o.liveRun ? '.' : undefined),
    liveKind: o.liveKind,
    replay: { scene: o.scene, contract: sceneContract(o.scene), openModel: openModel || undefined },
    mounts: [
      { prefix: '/', dir: viewerDir },
      { prefix: '/models/', dir: join(ROOT, 'models'), extensions: ['.onnx', '.json'] },
    ],
  };
  // the default port falls back to any free one; a port the user asked for is an error when taken
  const server = await startServer({ ...options, port: o.port ?? DEFAULT_PORT }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EADDRINUSE') throw err;
    if (o.port !== undefined) throw new UsageError(`--port: ${o.port} is in use (pass --port 0 for any free port)`);
    return startServer({ ...options, port: 0 });
  });
  const close = server.close;
  return {
    ...server,
    close: async () => {
      await close();
      for (const m of models.values()) (await m).close();
    },
  };
}
