#!/usr/bin/env bash
# npm run models:remake-base: re-makes the base VLA and the models made from it, in order:
# models/vla-base.onnx, models/wm-base.onnx (trained partly on the base's rollouts) and
# models/vla-wmrl.onnx (post-trained from the base). Each step is resumable; each prints its wall time.
set -euo pipefail
for model in vla-base wm-base vla-wmrl; do
  started=$SECONDS
  bash "scripts/make-$model.sh"
  echo "models:$model: $((SECONDS - started)) s"
done
