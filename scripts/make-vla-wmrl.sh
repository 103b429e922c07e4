#!/usr/bin/env bash
# models/vla-wmrl.onnx: the shipped post-trained policy. A `wmrl train` run on all four families from
# models/vla-base.onnx with the default preset (CONFIG: a --config file on top of it), then its policy.onnx
# (+ sidecar, whose provenance notes name the train command) exported to models/. Resumable: run it again.
set -euo pipefail
OUT=${OUT:-runs/vla-wmrl}
ITERATIONS=${ITERATIONS:-600}
CONFIG=${CONFIG:-}
config=()
[ -n "$CONFIG" ] && config=(--config "$CONFIG")
if [ -f "$OUT/checkpoint.json" ]; then
  node bin/wmrl.mjs train --resume "$OUT" --iterations "$ITERATIONS"
else
  rm -rf "$OUT"
  node bin/wmrl.mjs train --task all "${config[@]}" --seed 0 --iterations "$ITERATIONS" --out "$OUT"
fi
command="wmrl train --task all${CONFIG:+ --config $CONFIG} --seed 0 --iterations $ITERATIONS --out $OUT"
node bin/run-ts.mjs scripts/export-policy.ts "$OUT/policy.onnx" models/vla-wmrl.onnx \
  --notes "npm run models:vla-wmrl: $command"
