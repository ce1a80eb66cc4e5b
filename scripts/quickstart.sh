#!/usr/bin/env bash
# The main job on the default model: installs dependencies, builds kiln, exports ResNet-18 (seeded
# random weights, dynamic batch) from PyTorch, and runs it. Extra arguments go to `kiln run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh release kiln
/usr/bin/python3 models/export.py resnet18
./build/release/tools/kiln/kiln run --onnx=models/cache/resnet18.onnx --shapes=input:1x3x224x224 \
  --exportOutput=build/resnet18_outputs.json "$@"
