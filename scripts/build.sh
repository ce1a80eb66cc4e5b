#!/usr/bin/env bash
# Configures and builds one CMake preset (release by default): scripts/build.sh [preset] [targets...]
# KILN_CMAKE_ARGS: extra configure arguments (e.g. -DKILN_OPTIMIZE_FOREIGN_ISA=OFF).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"
shift || true
# shellcheck disable=SC2086 # word splitting intended: several -D arguments
cmake --preset "$preset" ${KILN_CMAKE_ARGS:-} >/dev/null
if [ $# -gt 0 ]; then
  cmake --build --preset "$preset" -j "$(nproc)" --target "$@"
else
  cmake --build --preset "$preset" -j "$(nproc)"
fi
