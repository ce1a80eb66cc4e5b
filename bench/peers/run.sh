#!/usr/bin/env bash
# Runs the peers comparison end to end: installs what it needs (idempotent), builds the runners,
# exports the models (and OpenCV's copies), then run.py. Every argument goes to run.py, e.g.
#   bash bench/peers/run.sh --quick
#   bash bench/peers/run.sh --models resnet50,mobilenet_v2 --batches 1 --extra resnet50:8:2 --update-docs
# except --int8 (run.sh's own): calibrate every model on python3-skimage's photos (kiln calibrate,
# entropy) and write its QDQ model from that calibration (kiln quantize), into bench/.cache/int8,
# then measure kiln's INT8 engine, ONNX Runtime on the QDQ model and PyTorch's own INT8 (FX
# post-training quantization on the same photos) too (run.py's kiln-int8, onnxruntime-qdq and
# pytorch-int8 engines), next to the FP32 engines.
# Environment: BUILD_DIR (default build/release), KILN_MODEL_DIR (default models/cache),
# SKIP_INSTALL=1 to skip the apt/npm step.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/bench/.cache"
BUILD_DIR="${BUILD_DIR:-$ROOT/build/release}"
MODEL_DIR="${KILN_MODEL_DIR:-$ROOT/models/cache}"

# The models run.py will touch: --models (default set) and the models named by --extra.
models="resnet50,mobilenet_v2,efficientnet_b0,vit_tiny"
batches="1,8"
int8=0
args=()
for a in "$@"; do
  if [ "$a" = "--int8" ]; then int8=1; else args+=("$a"); fi
done
set -- "${args[@]+"${args[@]}"}"
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --models) models="${args[$((i + 1))]}" ;;
    --models=*) models="${args[$i]#--models=}" ;;
    --batches) batches="${args[$((i + 1))]}" ;;
    --batches=*) batches="${args[$i]#--batches=}" ;;
  esac
done
all_models="$models"
extras=()  # MODEL:BATCH pairs of --extra
for ((i = 0; i < ${#args[@]}; i++)); do
  if [ "${args[$i]}" = "--extra" ]; then
    IFS=: read -r m b _ <<<"${args[$((i + 1))]}"
    all_models="$all_models,$m"
    extras+=("$m:$b")
  fi
done
all_models="$(tr ',' '\n' <<<"$all_models" | awk 'NF && !seen[$0]++' | paste -sd, -)"

# 1. Peers. OpenCV DNN and OpenBLAS from Debian; Debian's torch links the reference BLAS through
#    the libblas.so.3 alternative, which libopenblas0-pthread takes over (about 100x faster
#    matmuls). ONNX Runtime from npm: onnxruntime-node carries libonnxruntime.so.1.
if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  need=()
  for p in libopencv-dnn-dev libopenblas0-pthread python3-onnx python3-torch python3-torchvision; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    echo "[peers] installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  fi
  ORT_LIB="$(bash "$ROOT/scripts/install_ort.sh")"
fi
if [ -z "${ORT_LIB:-}" ]; then
  ORT_LIB="$(find "$CACHE/node_modules/onnxruntime-node/bin" -path '*linux/x64/*' -name 'libonnxruntime.so.1*' | head -n1)"
fi
[ -n "$ORT_LIB" ] || { echo "[peers] libonnxruntime.so.1 not found under $CACHE" >&2; exit 1; }
export ORT_LIB

# 2. Runners (bench targets are EXCLUDE_FROM_ALL: build them by name).
[ -f "$BUILD_DIR/build.ninja" ] || cmake --preset release
cmake --build "$BUILD_DIR" -j2 --target kiln_peers_runners

# 3. Models: kiln's exports (also ONNX Runtime's) and OpenCV's static-batch copies.
IFS=, read -r -a model_list <<<"$all_models"
KILN_MODEL_DIR="$MODEL_DIR" /usr/bin/python3 "$ROOT/models/export.py" --out "$MODEL_DIR" "${model_list[@]}"
IFS=, read -r -a main_models <<<"$models"
cv_ok=1
/usr/bin/python3 "$HERE/cv_export.py" --out "$CACHE/cv" --batches "$batches" "${main_models[@]}" || cv_ok=0
for e in "${extras[@]+"${extras[@]}"}"; do
  /usr/bin/python3 "$HERE/cv_export.py" --out "$CACHE/cv" --batches "${e#*:}" "${e%%:*}" || cv_ok=0
done
[ "$cv_ok" = 1 ] || echo "[peers] some OpenCV exports failed: those cells report why"

# 3b. INT8: one calibration per model on the same photos, and the QDQ model written from it, so
#     that kiln's INT8 engine and ONNX Runtime's run the same quantization.
engines=()
if [ "$int8" = 1 ]; then
  cmake --build "$BUILD_DIR" -j2 --target kiln
  KILN="$BUILD_DIR/tools/kiln/kiln"
  PHOTOS=/usr/lib/python3/dist-packages/skimage/data
  [ -d "$PHOTOS" ] || { echo "[peers] --int8 needs python3-skimage's photos in $PHOTOS" >&2; exit 1; }
  # The 30 PNG photos alone: skimage's folder also holds .npy files and a truncated JPEG (its own
  # test data), and a calibration folder holds one kind of file.
  mkdir -p "$CACHE/int8/photos"
  for f in "$PHOTOS"/*.png; do ln -sf "$f" "$CACHE/int8/photos/"; done
  for m in "${model_list[@]}"; do
    calib="$CACHE/int8/$m.calib" qdq="$CACHE/int8/$m.qdq.onnx"
    if [ ! -f "$calib" ] || [ "$MODEL_DIR/$m.onnx" -nt "$calib" ]; then
      "$KILN" calibrate --onnx="$MODEL_DIR/$m.onnx" --data="$CACHE/int8/photos" -o "$calib" --batch=8
    fi
    if [ ! -f "$qdq" ] || [ "$calib" -nt "$qdq" ]; then
      "$KILN" quantize --onnx="$MODEL_DIR/$m.onnx" --calib="$calib" -o "$qdq" --activationType=uint8
    fi
  done
  grep -q -- "--engines" <<<"$*" ||
    engines=(--engines "kiln,onnxruntime,pytorch,opencv,kiln-int8,onnxruntime-qdq,pytorch-int8")
fi

# 4. Measure.
exec /usr/bin/python3 "$HERE/run.py" --model-dir "$MODEL_DIR" --build-dir "$BUILD_DIR" \
  --ort-lib "$ORT_LIB" --int8-dir "$CACHE/int8" "${engines[@]+"${engines[@]}"}" "$@"
