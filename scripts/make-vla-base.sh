#!/usr/bin/env bash
# models/vla-base.onnx: the base VLA (docs/base-model.md#recipe). Clean demonstrations of the scripted
# expert, then behaviour cloning of the roles16 network on the front and wrist cameras (the wrist through
# the light encoder), images shifted by up to 2 pixels, the checkpoint with the best validation score
# written to models/. No DAgger rounds: they lowered strong clones (docs/base-model.md).
# Seeded and resumable: run it again after a kill and each step continues where it stopped.
# SEED=1 OUT=runs/vla-base-s1 MODEL=runs/vla-base-s1.onnx re-makes it with another training seed;
# EPISODES, STEPS, SELECT_EVERY and SELECT_EPISODES scale it down (test/scripts/make-vla-base.test.ts).
set -euo pipefail
SEED=${SEED:-0}
OUT=${OUT:-runs/vla-base}
MODEL=${MODEL:-models/vla-base.onnx}
EPISODES=${EPISODES:-1000}
DEMOS=${DEMOS:-runs/demos-$EPISODES}
mkdir -p "$OUT"

if [ ! -f "$DEMOS/demos.json" ]; then
  node bin/wmrl.mjs collect --task all --episodes "$EPISODES" --noise 0 --seed 0 --out "$DEMOS"
fi

resume() { if [ -f "$1/checkpoint.json" ]; then echo --resume; fi; }
node bin/wmrl.mjs pretrain --data "$DEMOS" --out "$MODEL" --run-dir "$OUT/bc" $(resume "$OUT/bc") \
  --cameras front,wrist --second-encoder light --shift 2 \
  --size roles16 --lr 0.002 --steps "${STEPS:-20000}" --word-dropout 0.1 --threads 1 --seed "$SEED" \
  --select-every "${SELECT_EVERY:-4000}" --select-episodes "${SELECT_EPISODES:-50}"
