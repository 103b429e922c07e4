// Recomputes AutoResearch speedup reports (report-seedS.json of `wmrl experiment speedup --suite
// autoresearch`) with the studies' one speedup definition (src/experiment/study-speedup.ts) from the
// curves and final evaluations they hold, and rewrites report-seedS.json, seedS.md and seedS.html beside
// them. Reports made before that definition (speedupWall / speedupExecutions) are read too.
//   node bin/run-ts.mjs scripts/research-speedup-refit.ts docs/autoresearch/report-seed0.json [...]
import { dirname } from 'node:path';
import { z } from 'zod';
import { readInputJson } from '../src/core/input-file.ts';
import {
  type ResearchModeRun,
  ResearchSpeedupSchema,
  researchSpeedupReport,
  writeResearchReport,
} from '../src/experiment/index.ts';

const files = process.argv.slice(2);
if (!files.length || files.includes('--help')) {
  console.error('usage: node bin/run-ts.mjs scripts/research-speedup-refit.ts REPORT.json [REPORT.json...]');
  process.exit(files.includes('--help') ? 0 : 2);
}
const Report = z.looseObject({
  command: z.string().optional(),
  config: ResearchSpeedupSchema,
  base: z.looseObject({ position: z.number() }),
  runs: z.array(z.looseObject({ mode: z.string(), curve: z.array(z.looseObject({ iteration: z.number() })) })),
  final: z.array(
    z.looseObject({ agent: z.string(), perTask: z.array(z.looseObject({ perEpisode: z.array(z.number()) })) }),
  ),
});
for (const file of files) {
  const r = readInputJson(file, Report, 'AutoResearch speedup report');
  const made =
    r.command ??
    `wmrl experiment speedup --suite autoresearch --config runs/research-speedup.json --seeds ${r.config.seed}`;
  const report = researchSpeedupReport(
    r.config,
    r.base as never,
    r.runs as unknown as ResearchModeRun[],
    r.final.map((f) => [f.agent, f.perTask as never]),
  );
  const command = `node bin/run-ts.mjs scripts/research-speedup-refit.ts ${file} (of: ${made.replace(/ \(of: .*\)$/, '')})`;
  const old =
    r.speedupWall === undefined
      ? ''
      : ` (before: ${r.speedupWall ?? 'not reached'} / ${r.speedupExecutions ?? 'not reached'})`;
  writeResearchReport(dirname(file), report, command);
  console.log(`${file}: wall ${report.speedup.wall.estimate}, executions ${report.speedup.executions.estimate}${old}`);
}
