// Node-only scene file loader. Not exported from src/scene/index.ts (which must stay browser-safe):
// import it by path.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Scene } from './schema.ts';
import { SceneError, parseSceneText } from './load.ts';

/** Absolute path of the shipped scene, scenes/tabletop.json at the package root. */
export const DEFAULT_SCENE_PATH = fileURLToPath(new URL('../../scenes/tabletop.json', import.meta.url));

/** Read and validate a scene file. Every failure (missing file, JSON syntax, schema) is a SceneError
 *  whose message names the file and the JSON path. */
export function loadSceneFile(path: string): Scene {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'file not found' : e.code === 'EISDIR' ? 'is a directory, not a file' : e.message;
    throw new SceneError(path, [{ path: '$', message: `cannot read scene file: ${why}` }]);
  }
  return parseSceneText(text, path);
}
