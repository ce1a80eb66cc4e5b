#pragma once
// The precision flags `kiln build`, `kiln exec` and `kiln sweep` share (trtexec's --int8, --calib,
// --best, --fp16, --layerPrecisions, --precisionConstraints): checked in one place and applied to
// the builder's options.

#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/builder.h"
#include "engine/plan.h"

namespace kiln::cli {

struct PrecisionFlags {
  bool fp16 = false, int8 = false, best = false;
  std::string calib;  // a kiln calibration file or a TensorRT calibration cache
  std::map<std::string, std::string> layer_precisions;  // layer name (one '*' allowed) -> precision
  std::string constraints = "none";
  int int8_weight_bits = 8;  // --int8WeightBits: 8 or 7
};

// Sets o's precision fields. Reads the calibration (either format); a kiln calibration made from a
// different model than `onnx_path` is a warning, as are --calib without --int8 and --best's
// meaning. Warnings are appended to `warnings` without a prefix.
Status apply_precision_flags(const PrecisionFlags& flags, const std::string& onnx_path,
                             engine::BuildOptions& o, std::vector<std::string>& warnings);

// The precision an engine's summary reports: "int8" when any layer runs in INT8, else "fp32".
std::string engine_precision(const engine::Plan& plan);

}  // namespace kiln::cli
