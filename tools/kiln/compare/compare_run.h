#pragma once
// The comparison loop of `kiln compare`: batch by batch, the reference executor runs the model and
// every engine runs the same samples; outputs (and with all_layers, every shared tensor) are
// accumulated into the result.

#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "compare/compare_inputs.h"
#include "compare/compare_result.h"
#include "runtime/engine.h"

namespace kiln::cli::compare {

struct RunSetup {
  const ir::Graph* model = nullptr;
  std::vector<std::string> engine_paths;
  std::vector<std::shared_ptr<const runtime::Engine>> engines;
  const CompareInputs* inputs = nullptr;
  std::optional<Tensor> labels;  // int64 [samples]
  int64_t batch = 1;
  bool all_layers = false;
  Tolerance tol;
  int threads = 0;
  // The reference's outputs of each batch, computed beforehand (a caller comparing many engines
  // on the same samples runs the reference once); null: run_comparison runs the reference itself.
  // Not with all_layers, which needs the reference's intermediate tensors.
  const std::vector<std::vector<Tensor>>* reference_outputs = nullptr;
};

Status run_comparison(const RunSetup& s, CompareResult& result);

}  // namespace kiln::cli::compare
