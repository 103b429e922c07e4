// The base AutoResearch agent (models/agent-base.onnx): behaviour cloning of the training tasks'
// reference programs (src/autoresearch/leaderboards.json) from the first turn's observation.
// node bin/run-ts.mjs scripts/make-agent-base.ts [--steps N] [--seed S] [--out FILE]
import { parseArgs } from 'node:util';
import { agentSpecHash, cloneReferencePrograms } from '../src/experiment/research.ts';
import { savePolicy } from '../src/policy/model.ts';

const { values } = parseArgs({
  options: {
    steps: { type: 'string', default: '1500' },
    seed: { type: 'string', default: '0' },
    out: { type: 'string', default: 'models/agent-base.onnx' },
    help: { type: 'boolean' },
  },
});
if (values.help) {
  console.log('usage: node bin/run-ts.mjs scripts/make-agent-base.ts [--steps N] [--seed S] [--out FILE]');
  process.exit(0);
}
const steps = Number(values.steps),
  seed = Number(values.seed);
const { config, params } = await cloneReferencePrograms({
  steps,
  seed,
  onStep: (s, loss) => {
    if (s % 250 === 0 || s === steps) console.error(`step ${s}/${steps} loss ${loss.toFixed(4)}`);
  },
});
await savePolicy(values.out!, config, params, {
  provenance: {
    producer: 'scripts/make-agent-base.ts',
    seed,
    steps,
    notes: "behaviour cloning of the training tasks' reference programs",
  },
  specHash: agentSpecHash(),
});
console.log(`wrote ${values.out}`);
