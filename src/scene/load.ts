import { z } from 'zod';
import { formatZodError } from '../core/spec.ts';
import { SceneSchema, type Scene } from './schema.ts';
import { jsonErrorOffset, lineColumn } from './json-error.ts';

export interface SceneIssue {
  /** JSON path of the bad field, e.g. "$.robot.joints[2].axis" ("$" for the whole document). */
  path: string;
  message: string;
}

/** A scene that cannot be used: names the source file and the JSON path of every bad field. */
export class SceneError extends Error {
  readonly source: string;
  readonly issues: SceneIssue[];

  constructor(source: string, issues: SceneIssue[]) {
    super(issues.map((i) => `${source}: ${i.path}: ${i.message}`).join('\n'));
    this.name = 'SceneError';
    this.source = source;
    this.issues = issues;
  }
}

/** Validate parsed JSON against SceneSchema (defaults filled in). Browser-safe. */
export function parseScene(json: unknown, source: string): Scene {
  const result = SceneSchema.safeParse(json);
  if (result.success) return result.data;
  // formatZodError writes "$.path: message"; one issue at a time so a multi-line message stays whole.
  const issues = result.error.issues.map((issue) => {
    const line = formatZodError(new z.ZodError([issue]));
    const cut = line.indexOf(': ');
    return { path: line.slice(0, cut), message: line.slice(cut + 2) };
  });
  throw new SceneError(source, issues);
}

/** Parse scene JSON text; syntax errors become a SceneError with line and column. */
export function parseSceneText(text: string, source: string): Scene {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SceneError(source, [{ path: '$', message: describeJsonError(text, err as Error) }]);
  }
  return parseScene(json, source);
}

function describeJsonError(text: string, err: Error): string {
  const reason = err.message
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/\s*in JSON at position \d+/, '')
    .replace(/, ".*" is not valid JSON$/s, ''); // V8 quotes the whole text here
  const offset = jsonErrorOffset(text);
  if (offset < 0) return `invalid JSON: ${reason}`;
  const { line, column } = lineColumn(text, offset);
  return `invalid JSON at line ${line} column ${column}: ${reason}`;
}
