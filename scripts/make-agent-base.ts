// The base AutoResearch agent (models/agent-base.onnx): behaviour cloning of the training tasks'
// reference programs (src/autoresearch/leaderboards.json) from the first turn's observation; with
// --below P only those whose validation leaderboard position is below P (models/agent-weak.onnx: 0.5).
// node bin/run-ts.mjs scripts/make-agent-base.ts [--steps N] [--seed S] [--below P] [--out FILE]
import { parseArgs } from 'node:util';
import { agentSpecHash, cloneReferencePrograms } from '../src/experiment/research.ts';
import { savePolicy } from '../src/policy/model.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '1500' },
    seed: { type: 'string', default: '0' },
    below: { type: 'string' },
    out: { type: 'string', default: 'models/agent-base.onnx' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  console.log('usage: node bin/run-ts.mjs scripts/make-agent-base.ts [--steps N] [--seed S] [--below P] [--out FILE]');
  process.exit(0);
}
const steps = Number(values.steps),
  seed = Number(values.seed),
  below = values.below === undefined ? undefined : Number(values.below);
if (!Number.isInteger(steps) || steps < 1 || !Number.isInteger(seed) || seed < 0 || Number.isNaN(below)) {
  console.error('--steps must be a positive integer, --seed a non-negative integer, --below a number');
  process.exit(2);
}
const { config, params } = await cloneReferencePrograms({
  steps,
  seed,
  below,
  onStep: (s, loss) => {
    if (s % 250 === 0 || s === steps) console.error(`step ${s}/${steps} loss ${loss.toFixed(4)}`);
  },
});
await savePolicy(values.out!, config, params, {
  provenance: {
    producer: 'scripts/make-agent-base.ts',
    seed,
    steps,
    notes:
      below === undefined
        ? "behaviour cloning of the training tasks' reference programs"
        : `behaviour cloning of the training tasks' reference programs below validation position ${below}`,
  },
  specHash: agentSpecHash(),
});
console.log(`wrote ${values.out}`);
