#!/usr/bin/env bash
# INT8 against FP32 on the model set, on held-out photos: issue 5's accuracy target (cosine of
# every held-out image's output >= 0.98). python3-skimage's 30 PNG photos sorted by name: every 4th
# is held out (7 photos), the other 23 calibrate (models/export.py settles BatchNorm on the same 23).
# For each model and calibrator: kiln calibrate on the 23, kiln build --int8 (and an FP32 engine),
# then one kiln compare of every engine against the reference executor on the 7, one image per run
# (--batch=1), whose per-sample cosines give the worst and the median image.
#
#   bash bench/accuracy/int8_model_set.sh [--models a,b] [--algos entropy,minmax,percentile]
#
# Writes bench/results/accuracy-<UTC stamp>/: per model the compare output (<model>.txt, .json),
# and summary.md, the table docs/accuracy.md quotes (INT8 layers: of the layers with a precision,
# by kiln inspect, the first calibrator's engine). Engines, calibrations and photo folders stay in
# bench/.cache/accuracy. Environment: BUILD_DIR (default build/release), KILN_MODEL_DIR (default models/cache),
# SKIP_EXPORT=1 to take the models in KILN_MODEL_DIR as they are (else export.py refreshes them).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build/release}"
MODEL_DIR="${KILN_MODEL_DIR:-$ROOT/models/cache}"
KILN="$BUILD_DIR/tools/kiln/kiln"
PHOTOS=/usr/lib/python3/dist-packages/skimage/data
models="resnet18,resnet50,vit_tiny,mobilenet_v2,mobilenet_v3_large,efficientnet_b0,yolov8n,deeplabv3_mobilenet_v3_large"
algos="entropy,minmax,percentile"
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models="$2"; shift 2 ;;
    --algos) algos="$2"; shift 2 ;;
    *) echo "int8_model_set.sh: unknown argument '$1' (--models a,b | --algos a,b)" >&2; exit 1 ;;
  esac
done
[ -x "$KILN" ] || { echo "int8_model_set.sh: no kiln binary at $KILN (bash scripts/build.sh release)" >&2; exit 1; }
[ -d "$PHOTOS" ] || { echo "int8_model_set.sh: no photos in $PHOTOS (apt install python3-skimage)" >&2; exit 1; }
IFS=, read -r -a model_list <<<"$models"
IFS=, read -r -a algo_list <<<"$algos"

OUT="$ROOT/bench/results/accuracy-$(date -u +%Y%m%dT%H%M%SZ)"
WORK="$ROOT/bench/.cache/accuracy"
rm -rf "$WORK/calib" "$WORK/held"
mkdir -p "$OUT" "$WORK/calib" "$WORK/held"
i=0
for f in $(ls "$PHOTOS"/*.png | LC_ALL=C sort); do
  if [ $((i % 4)) = 3 ]; then ln -s "$f" "$WORK/held/"; else ln -s "$f" "$WORK/calib/"; fi
  i=$((i + 1))
done

[ "${SKIP_EXPORT:-0}" = 1 ] || /usr/bin/python3 "$ROOT/models/export.py" --out "$MODEL_DIR" "${model_list[@]}"

{
  echo "| model | INT8 layers | $(printf '%s: cosine min / median, top-1 agreement | ' "${algo_list[@]}")"
  echo "|---|---|$(printf -- '---|%.0s' "${algo_list[@]}")"
} >"$OUT/summary.md"

for m in "${model_list[@]}"; do
  onnx="$MODEL_DIR/$m.onnx"
  shape=$(/usr/bin/python3 -c "import json,sys; print('x'.join(map(str, json.load(open(sys.argv[1]))['shape'])))" "$MODEL_DIR/$m.json")
  pre=()
  [ "$m" = yolov8n ] && pre=(--resize=320 --mean=0,0,0 --std=1,1,1)
  "$KILN" build --onnx="$onnx" --shapes=input:"$shape" --saveEngine="$WORK/$m.fp32.plan" >/dev/null
  engines="$WORK/$m.fp32.plan"
  for a in "${algo_list[@]}"; do
    "$KILN" calibrate --onnx="$onnx" --data="$WORK/calib" --algo="$a" --batch=8 \
      -o "$WORK/$m.$a.calib" "${pre[@]+"${pre[@]}"}" >/dev/null
    "$KILN" build --onnx="$onnx" --shapes=input:"$shape" --int8 --calib="$WORK/$m.$a.calib" \
      --saveEngine="$WORK/$m.$a.plan" >/dev/null
    "$KILN" inspect "$WORK/$m.$a.plan" >"$WORK/$m.$a.inspect.txt"
    engines="$engines,$WORK/$m.$a.plan"
  done
  "$KILN" compare --onnx="$onnx" --engines="$engines" --data="$WORK/held" --batch=1 \
    "${pre[@]+"${pre[@]}"}" --json="$OUT/$m.json" | tee "$OUT/$m.txt"
  # One table row: the worst and median held-out image per calibrator, top-1 agreement when the
  # output is a classifier's, and how many of the engine's layers run in INT8.
  listing="$WORK/$m.${algo_list[0]}.inspect.txt"
  row="| $m | $(grep -cE ' int8$' "$listing") of $(grep -cE '^  \[[0-9]+\] .* (int8|fp32|fp16)$' "$listing") |"
  for a in "${algo_list[@]}"; do
    spread=$(sed -nE "s/^\[I\] $m\.$a\.plan '[^']*': per sample cosine min ([0-9.]+) \(sample [0-9]+\), median ([0-9.]+)$/\1 \/ \2/p" "$OUT/$m.txt" | head -1)
    top1=$(awk -v e="$m.$a.plan" '$1 == e && $8 ~ /%$/ {print ", top-1 " $8}' "$OUT/$m.txt" | head -1)
    row="$row $spread$top1 |"
  done
  echo "$row" >>"$OUT/summary.md"
done
echo
cat "$OUT/summary.md"
echo "[accuracy] wrote $OUT"
