#!/usr/bin/env bash
# npm run models:wm-base — re-makes models/wm-base.onnx (+ sidecars) from seeded physics rollouts:
# scripted expert, noisy expert, random and the base VLA (models/vla-base.onnx) on the train split;
# checkpoints are selected on validation-split episodes, and the stored report is measured on
# held-out-split episodes (three disjoint seed ranges). About 10 minutes on 2 CPU cores.
set -euo pipefail
R="node bin/wmrl.mjs rollout --task all --json --num-envs 8"
$R --policy expert --noise 0   --episodes 40  --seed 0    --out runs/wm/expert   > /dev/null
$R --policy expert --noise 0   --episodes 60  --seed 5000 --out runs/wm/expert2  > /dev/null
$R --policy expert --noise 0.1 --episodes 100 --seed 4000 --out runs/wm/noisy01  > /dev/null
$R --policy expert --noise 0.2 --episodes 80  --seed 1000 --out runs/wm/noisy02  > /dev/null
$R --policy expert --noise 0.5 --episodes 60  --seed 2000 --out runs/wm/noisy05  > /dev/null
$R --policy random --episodes 15 --seed 3000 --out runs/wm/random > /dev/null
$R --policy models/vla-base.onnx --episodes 100 --seed 6000 --out runs/wm/base > /dev/null
for split in validation heldout; do
  $R --policy expert --noise 0.2 --episodes 25 --seed 0   --split $split --out runs/wm/$split-noisy02 > /dev/null
  $R --policy expert --noise 0   --episodes 15 --seed 100 --split $split --out runs/wm/$split-expert  > /dev/null
  $R --policy models/vla-base.onnx --episodes 25 --seed 300 --split $split --out runs/wm/$split-base > /dev/null
done
node bin/wmrl.mjs wm train --data runs/wm/expert --data runs/wm/expert2 --data runs/wm/noisy01 \
  --data runs/wm/noisy02 --data runs/wm/noisy05 --data runs/wm/random --data runs/wm/base \
  --val runs/wm/validation-expert --val runs/wm/validation-noisy02 --val runs/wm/validation-base \
  --out models/wm-base.onnx --members 5 --hidden 200,200,200 --steps 24000 --eval-every 1000 --lr 0.001 --seed 0
node bin/wmrl.mjs wm eval --model models/wm-base.onnx --data runs/wm/heldout-expert --data runs/wm/heldout-noisy02 \
  --data runs/wm/heldout-base --save-report
