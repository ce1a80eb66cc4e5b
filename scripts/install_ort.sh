#!/usr/bin/env bash
# Installs ONNX Runtime for the tests and bench/peers: npm's onnxruntime-node (it carries
# libonnxruntime.so.1; no PyPI here) into bench/.cache, once. Idempotent and quiet: prints only the
# library's path on stdout (progress and errors go to stderr).
#   ORT_LIB="$(bash scripts/install_ort.sh)"
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/bench/.cache"
ORT_VERSION=1.30.0

package="$CACHE/node_modules/onnxruntime-node/package.json"
if [ ! -f "$package" ] || ! grep -q "\"version\": \"$ORT_VERSION\"" "$package"; then
  command -v npm >/dev/null || { echo "[ort] npm is needed (scripts/install_deps.sh)" >&2; exit 1; }
  mkdir -p "$CACHE"
  echo "[ort] npm install onnxruntime-node@$ORT_VERSION into $CACHE" >&2
  (cd "$CACHE" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
    "onnxruntime-node@$ORT_VERSION" >/dev/null)
fi
lib="$(find "$CACHE/node_modules/onnxruntime-node/bin" -path '*linux/x64/*' -name 'libonnxruntime.so.1*' | head -n1)"
[ -n "$lib" ] || { echo "[ort] libonnxruntime.so.1 not found under $CACHE" >&2; exit 1; }
echo "$lib"
