// Copies a policy file (.onnx + sidecar) to another path as one commit, keeping its provenance; with
// --notes, the sidecar's provenance notes say that instead (e.g. the command that reproduces it):
// node bin/run-ts.mjs scripts/export-policy.ts runs/vla-wmrl/policy.onnx models/vla-wmrl.onnx --notes "..."
import { loadPolicy, savePolicy } from '../src/policy/model.ts';

const [from, to, flag, notes] = process.argv.slice(2);
if (!from || !to?.endsWith('.onnx') || (flag !== undefined && (flag !== '--notes' || !notes))) {
  console.error('usage: export-policy.ts FROM.onnx TO.onnx [--notes TEXT]');
  process.exit(2);
}
const p = await loadPolicy(from);
const provenance = { ...p.sidecar.provenance, ...(notes && { notes }) };
await savePolicy(to, p.config, p.params, { provenance, specHash: p.sidecar.specHash });
console.log(`wrote ${to} (${provenance.notes ?? provenance.producer})`);
