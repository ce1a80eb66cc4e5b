#pragma once
// Validation of user-provided inputs against a graph's declared inputs: names, dtypes, ranks, known
// dims, and that a symbolic dim ("batch") takes one value across all inputs.

#include <map>
#include <string>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/graph.h"

namespace kiln::runtime {

using NamedTensors = std::map<std::string, Tensor, std::less<>>;

// Every required input is present, no unknown names, and each tensor matches its declaration.
Status check_inputs(const ir::Graph& graph, const NamedTensors& inputs);

}  // namespace kiln::runtime
