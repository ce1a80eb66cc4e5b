#!/usr/bin/env bash
# The main job on the default model: installs dependencies, builds kiln, exports ResNet-18 (seeded
# random weights, dynamic batch) from PyTorch, builds an engine for batch 1 to 8 and runs it on the
# model's exported input. Extra arguments go to `kiln run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh release kiln
/usr/bin/python3 models/export.py resnet18
kiln=./build/release/tools/kiln/kiln
$kiln build --onnx=models/cache/resnet18.onnx --saveEngine=build/resnet18.plan \
  --minShapes=input:1x3x224x224 --optShapes=input:1x3x224x224 --maxShapes=input:8x3x224x224
$kiln run --loadEngine=build/resnet18.plan --loadInputs=input:models/cache/resnet18.input.npy \
  --exportOutput=build/resnet18_outputs.json "$@"
