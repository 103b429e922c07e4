#!/usr/bin/env bash
# AgentBrew offline against rejection sampling on the same stored rollouts (docs/curriculum.md): the base
# policy's rollouts on $EPISODES train episodes per family, then `wmrl brew` three ways from the same data
# and seed, each evaluated paired with the base on $EVAL held-out episodes per family. Resumable.
set -euo pipefail
OUT=${1:-runs/brew}
EPISODES=${EPISODES:-100}
EVAL=${EVAL:-100}
STEPS=${STEPS:-1500}
wmrl() { node bin/wmrl.mjs "$@"; }
mkdir -p "$OUT"
[ -f "$OUT/rollouts/index.json" ] || wmrl rollout --policy models/vla-base.onnx --split train --episodes "$EPISODES" \
  --num-envs 16 --out "$OUT/rollouts" > /dev/null
for method in rejection agentbrew agentbrew-pmi; do
  flags="--method ${method%-pmi}"
  [ "$method" = agentbrew-pmi ] && flags="$flags --pmi"
  [ -f "$OUT/$method.onnx" ] || wmrl brew --data "$OUT/rollouts" --out "$OUT/$method.onnx" $flags --steps "$STEPS" --json \
    > "$OUT/$method.summary.json"
  [ -f "$OUT/$method-eval/report.json" ] || wmrl eval --compare "$OUT/$method.onnx" models/vla-base.onnx \
    --episodes "$EVAL" --out "$OUT/$method-eval" --json > /dev/null
  echo "$(date -u +%H:%M:%S) $method done"
done
