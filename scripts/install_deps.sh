#!/usr/bin/env bash
# Installs everything kiln needs from Debian 12's packages. Idempotent and quick when all is present:
# apt is only called for what is missing. Run as root (or with sudo available).
set -euo pipefail

PACKAGES=(
  # build
  g++ cmake ninja-build git pkg-config lld
  # ONNX protobuf classes and schemas, protobuf runtime
  libonnx-dev libprotobuf-dev protobuf-compiler
  # ONNX backend conformance data
  libonnx-testdata
  # CLI, JSON, formatting, tests
  libcli11-dev nlohmann-json3-dev libfmt-dev libgtest-dev libgmock-dev
  # images for calibration and accuracy runs
  libstb-dev
  # kernel benchmarks (bench/kernels)
  libbenchmark-dev
  # the oneDNN tactic source (oneDNN 2.6, OpenMP runtime). Debian's dnnl-config.cmake asks for
  # OpenCL (its GPU runtime) at configure time, and --no-install-recommends leaves it out.
  libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
  # model export (PyTorch is the tool that makes the models; scikit-learn has the digits data of
  # models/digits/train.py)
  python3 python3-numpy python3-torch python3-torchvision python3-sklearn
  # real photos (astronaut, chelsea, coffee) for kiln pipeline's CLI test; skipped without it
  python3-skimage
  # kiln report's rendering test and docs screenshots (headless)
  chromium fonts-dejavu-core
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# ONNX Runtime for the QDQ tests and bench/peers comes from npm (scripts/install_ort.sh). Any npm
# will do: a NodeSource nodejs bundles its own, and Debian's npm package conflicts with it.
command -v npm >/dev/null || missing+=(npm)

if [ ${#missing[@]} -eq 0 ]; then
  echo "[deps] all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "[deps] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[deps] done"
