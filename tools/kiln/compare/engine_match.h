#pragma once
// Loading the engines of `kiln compare` and refusing one built from another model: its inputs and
// outputs must have the model's names, dtypes and ranks, and equal dims wherever both know them
// (an engine built with static --shapes fixes dims the model leaves dynamic).

#include <memory>
#include <string>

#include "base/status.h"
#include "ir/graph.h"
#include "runtime/engine.h"

namespace kiln::cli::compare {

Result<std::shared_ptr<const runtime::Engine>> load_compare_engine(const std::string& path);

// InvalidArgument naming the engine file, the tensor and both descriptions.
Status check_engine_matches(const ir::Graph& model, const std::string& model_path,
                            const runtime::Engine& engine, const std::string& engine_path);

}  // namespace kiln::cli::compare
