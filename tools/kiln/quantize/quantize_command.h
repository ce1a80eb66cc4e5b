#pragma once
// `kiln quantize`: writes a QDQ ONNX model from a float model and its calibration, with the
// QuantizeLinear/DequantizeLinear pairs where kiln's implicit INT8 build runs INT8 layers, so that
// kiln (explicit path), ONNX Runtime and TensorRT 11 (QDQ only) fuse the same layers. See
// docs/quantization.md ("kiln quantize") and src/quant/qdq_export.h.

#include <iosfwd>
#include <string>

#include "base/status.h"

namespace kiln::cli::quantize {

struct QuantizeOptions {
  std::string onnx;
  std::string calib;                     // kiln calibration file or TensorRT calibration cache
  std::string output;                    // the QDQ model to write
  std::string activation_type = "int8";  // int8 (TensorRT and ONNX Runtime) or uint8
  std::string layer_precisions;          // name:fp32|int8[,...], as kiln build
  std::string constraints = "none";      // none, prefer, obey
};

// Checks every option before reading anything big; errors name the flag and the file.
Status check_quantize_options(const QuantizeOptions& o);

Status quantize_command(const QuantizeOptions& o, std::ostream& out);

}  // namespace kiln::cli::quantize
