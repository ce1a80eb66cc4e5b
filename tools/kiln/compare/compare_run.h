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
};

Status run_comparison(const RunSetup& s, CompareResult& result);

}  // namespace kiln::cli::compare
