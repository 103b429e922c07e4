#!/usr/bin/env bash
# models/vla-wmrl.onnx: the shipped post-trained policy. A `wmrl train` run on all four families from
# models/vla-base.onnx with the config that measured best in docs/curriculum.md, then its policy.onnx
# (+ sidecar, whose provenance notes name the train command) exported to models/. Resumable: run it again.
set -euo pipefail
OUT=${OUT:-runs/vla-wmrl}
ITERATIONS=${ITERATIONS:-600}
CONFIG=${CONFIG:-scripts/curriculum/evolution.json}
if [ -f "$OUT/checkpoint.json" ]; then
  node bin/wmrl.mjs train --resume "$OUT" --iterations "$ITERATIONS"
else
  rm -rf "$OUT"
  node bin/wmrl.mjs train --task all --config "$CONFIG" --seed 0 --iterations "$ITERATIONS" --out "$OUT"
fi
command="wmrl train --task all --config $CONFIG --seed 0 --iterations $ITERATIONS --out $OUT"
node bin/run-ts.mjs scripts/export-policy.ts "$OUT/policy.onnx" models/vla-wmrl.onnx \
  --notes "npm run models:vla-wmrl: $command"
