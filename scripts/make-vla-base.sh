#!/usr/bin/env bash
# models/vla-base.onnx: the base VLA (docs/base-model.md#recipe). DART demonstrations of the scripted
# expert, behaviour cloning of the roles16 network with checkpoints selected on the validation split, then
# expert-corrected rounds (wmrl dagger) whose best round on the validation split is written to models/.
# Seeded and resumable: run it again after a kill and each step continues where it stopped.
# SEED=1 OUT=runs/vla-base-s1 MODEL=runs/vla-base-s1.onnx re-makes it with another training seed.
set -euo pipefail
SEED=${SEED:-0}
OUT=${OUT:-runs/vla-base}
MODEL=${MODEL:-models/vla-base.onnx}
DEMOS=runs/demos-400
mkdir -p "$OUT"

if [ ! -f "$DEMOS/demos.json" ]; then
  node bin/wmrl.mjs collect --task all --episodes 400 --noise 0.05 --seed 0 --out "$DEMOS"
fi

resume() { if [ -f "$1/checkpoint.json" ]; then echo --resume; fi; }
# the rounds read their rows from $OUT/dagger/rows: behaviour cloning fills it, so the demonstrations are
# re-simulated once
node bin/wmrl.mjs pretrain --data "$DEMOS" --out "$OUT/bc.onnx" --run-dir "$OUT/bc" $(resume "$OUT/bc") \
  --rows-dir "$OUT/dagger/rows" \
  --size roles16 --lr 0.002 --steps 12000 --word-dropout 0.1 --threads 1 --seed "$SEED" \
  --select-every 2000 --select-episodes 50

node bin/wmrl.mjs dagger --data "$DEMOS" --policy "$OUT/bc.onnx" --out "$MODEL" --dir "$OUT/dagger" \
  --rounds 3 --episodes 200 --expert-share 0.5 --decay 0.5 --steps 4000 --lr 0.001 \
  --size roles16 --word-dropout 0.1 --threads 1 --seed "$SEED" --validation-episodes 100
