#!/usr/bin/env bash
# The ablation study of docs/curriculum.md: every row of scripts/curriculum/*.json (trainer config fields
# on top of the defaults) trained on all four families for $ITERATIONS iterations with training seeds
# $SEEDS, each policy evaluated on $EPISODES held-out episodes per family (seeds 0..), then the table.
# Resumable: finished runs and evaluations are kept, interrupted runs continue from their checkpoint.
# Several copies may run at once (a lock per run); then print the table with scripts/curriculum-table.ts.
# Other studies reuse it: CONFIGS names the folder of row configs, TASK the tasks trained and evaluated.
# FIELDS (JSON) adds top-level config fields to every row, for fields that decide no result: with two
# copies on 2 cores, FIELDS='{"helpers":0}' runs each run on one core (about 1.8x faster than two runs
# each with a helper thread).
set -euo pipefail
OUT=${1:-runs/curriculum}
ITERATIONS=${ITERATIONS:-100}
SEEDS=${SEEDS:-"1 2 3"}
EPISODES=${EPISODES:-100}
ROWS=${ROWS:-"none evolution relabel-pmi repeat all starts"}
CONFIGS=${CONFIGS:-scripts/curriculum}
TASK=${TASK:-all}
FIELDS=${FIELDS:-}
wmrl() { node bin/wmrl.mjs "$@"; }
mkdir -p "$OUT"

evaluate() { # policy, folder
  [ -f "$2/report.json" ] || wmrl eval --policy "$1" --task "$TASK" --episodes "$EPISODES" --out "$2" --json > /dev/null
}

exec 9> "$OUT/base.lock"
flock 9
evaluate models/vla-base.onnx "$OUT/base-eval"
flock -u 9

for seed in $SEEDS; do
  for row in $ROWS; do
    run="$OUT/$row-s$seed"
    exec 9> "$OUT/$row-s$seed.lock"
    flock -n 9 || continue # another copy has it
    if [ ! -f "$run/policy.onnx" ]; then
      [ -f "$run/checkpoint.json" ] || rm -rf "$run" # stopped before its first checkpoint: start again
      if [ -f "$run/checkpoint.json" ]; then
        wmrl train --resume "$run" --iterations "$ITERATIONS" > /dev/null
      else
        config="$CONFIGS/$row.json"
        if [ -n "$FIELDS" ]; then
          mkdir -p "$OUT/configs"
          config="$OUT/configs/$row-s$seed.json"
          node -e 'const fs = require("node:fs"); const [row, fields, out] = process.argv.slice(1);
            const c = { ...JSON.parse(fs.readFileSync(row, "utf8")), ...JSON.parse(fields) };
            fs.writeFileSync(out, JSON.stringify(c) + "\n");' "$CONFIGS/$row.json" "$FIELDS" "$config"
        fi
        wmrl train --task "$TASK" --config "$config" --seed "$seed" \
          --iterations "$ITERATIONS" --out "$run" > /dev/null
      fi
    fi
    evaluate "$run/policy.onnx" "$run/eval"
    echo "$(date -u +%H:%M:%S) $row seed $seed done"
    flock -u 9
  done
done
