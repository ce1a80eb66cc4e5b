#pragma once
// ONNX Runtime in tests: the npm package's libonnxruntime.so.1 (scripts/test.sh installs it and
// exports its path as KILN_ORT_LIB), dlopened and driven through tools/ort/ort_api.h, to run the
// QDQ models `kiln quantize` writes.

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kiln::testing {

// KILN_ORT_LIB, else the copy bench/peers/run.sh and scripts/test.sh install under bench/.cache;
// empty when neither exists.
std::string ort_library_path();

struct OrtRunOptions {
  int threads = 1;
  // When set, ONNX Runtime writes the model it runs after its graph optimizations here (its QDQ
  // fusions show as QLinearConv, QGemm, ...).
  std::string optimized_model_path;
};

// Runs `model` (one float32 input, one float32 output whose dims the caller knows) once on CPU
// with every graph optimization. The output buffer is the caller's: ONNX Runtime checks its shape.
Result<std::vector<float>> ort_run(const std::string& library, const std::string& model,
                                   const std::string& input_name, const std::vector<int64_t>& dims,
                                   std::vector<float> input, const std::string& output_name,
                                   const std::vector<int64_t>& output_dims,
                                   const OrtRunOptions& options = {});

}  // namespace kiln::testing
