// Copies a policy file (.onnx + sidecar) to another path as one commit, keeping its provenance:
// node bin/run-ts.mjs scripts/export-policy.ts runs/vla-wmrl/policy.onnx models/vla-wmrl.onnx
import { loadPolicy, savePolicy } from '../src/policy/model.ts';

const [from, to] = process.argv.slice(2);
if (!from || !to?.endsWith('.onnx')) {
  console.error('usage: export-policy.ts FROM.onnx TO.onnx');
  process.exit(2);
}
const p = await loadPolicy(from);
await savePolicy(to, p.config, p.params, { provenance: p.sidecar.provenance, specHash: p.sidecar.specHash });
console.log(`wrote ${to} (${p.sidecar.provenance.notes ?? p.sidecar.provenance.producer})`);
