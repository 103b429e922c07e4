import type { Command } from 'commander';
import { z } from 'zod';
import { existsSync, statSync } from 'node:fs';
import { UsageError, parseOptions } from '../options.ts';
import { loadScene } from '../scene.ts';
import { ServeFlags, addServeFlags, startViewer } from '../serve.ts';

const ServeOptions = ServeFlags.extend({
  run: z.string().min(1),
  worldModel: z.string(),
  scene: z.string().optional(),
});

export function registerServe(program: Command): void {
  const cmd = program
    .command('serve')
    .description(
      'the browser viewer: recorded runs and episodes (physics, world model, side by side), training curves, ' +
        'live frames, the policy in the page',
    )
    .option('--run <dir>', 'a run folder or a folder of runs to list and replay', 'runs')
    .option('--world-model <file>', 'world model for replays and side by side', 'models/wm-base.onnx')
    .option('--scene <file>', 'scene file (default: scenes/tabletop.json)');
  addServeFlags(cmd, 'serving').action(async (raw) => {
    const o = parseOptions(ServeOptions, raw);
    if (!existsSync(o.run) || !statSync(o.run).isDirectory()) throw new UsageError(`--run: ${o.run} is not a folder`);
    const server = await startViewer({
      scene: loadScene(o.scene),
      runs: o.run,
      worldModel: o.worldModel,
      host: o.host,
      port: o.port,
    });
    console.log(`wmrl viewer: ${server.url}  (Ctrl-C to stop)`);
    await new Promise<never>(() => {}); // serves until Ctrl-C ends the process (exit 130, cli/interrupt.ts)
  });
}
