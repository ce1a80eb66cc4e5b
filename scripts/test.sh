#!/usr/bin/env bash
# Builds and runs every test: the release build, then the whole suite again under AddressSanitizer +
# UndefinedBehaviorSanitizer, then the concurrency tests under ThreadSanitizer. Installs dependencies
# and exports the model set first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
/usr/bin/python3 models/export.py resnet18 resnet50 mobilenet_v2 mobilenet_v3_large efficientnet_b0 \
  yolov8n deeplabv3_mobilenet_v3_large vit_tiny tiny_bert
for preset in release asan; do
  echo "=== ${preset}: build"
  bash scripts/build.sh "$preset"
  echo "=== ${preset}: test"
  ctest --preset "$preset" -j "$(nproc)"
done
echo "=== tsan: build and run the concurrency tests"
bash scripts/build.sh tsan kiln_concurrency_tests
ctest --preset tsan -R '^concurrency$'
