#pragma once
// `kiln run`: run a model with the reference executor (--onnx) or an engine (--loadEngine) on
// given or random inputs; print the outputs and the wall time.

#include <iosfwd>
#include <string>

#include "base/status.h"

namespace kiln::cli {

struct RunOptions {
  std::string onnx;           // --onnx: run the model with the reference executor
  std::string load_engine;    // --loadEngine: run an engine built by `kiln build`
  std::string shapes;         // --shapes=name:1x3x224x224,...
  std::string load_inputs;    // --loadInputs=name:file.npy,...
  std::string export_output;  // --exportOutput=out.json
  int iterations = 1;         // --iterations
  uint64_t seed = 0;          // --seed, for random inputs
  int print_values = 8;       // --printValues: values shown per output
  int threads = 0;            // --threads of the execution context (0: every core)
};

// Prints the report to `out`; returns the first error (nothing is written for a failed run).
Status run_command(const RunOptions& opts, std::ostream& out);

}  // namespace kiln::cli
