#pragma once
// Evaluating one node on concrete input values with its reference kernel. Shape inference uses it
// to make Shape -> Gather -> Concat chains static, constant folding to turn constant subgraphs
// into initializers.

#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/graph.h"
#include "ops/infer_graph.h"

namespace kiln::ops {

// The descs of concrete tensors (an undefined desc for nullptr, an absent optional input).
std::vector<ir::TensorDesc> descs_of(const std::vector<const Tensor*>& values);

// Runs the node's shape function with every input value known: the output descs are then static
// unless the op is data-dependent (NonZero, ...).
Result<NodeInference> infer_node_on_values(const ir::Node& node, const ResolvedOp& op,
                                           const std::vector<const Tensor*>& values);

// Runs the node's reference kernel on `inputs` (nullptr for an absent optional input), given the
// output descs shape inference derived for them. Returns one tensor per node output (undefined for
// an absent output). A kernel error is returned as is; running out of memory is an
// InvalidArgument naming the node; an output the kernel failed to produce or that disagrees with
// its desc is an internal error naming the node.
Result<std::vector<Tensor>> run_node_kernel(const ir::Node& node, const ResolvedOp& op,
                                            const std::vector<const Tensor*>& inputs,
                                            const std::vector<ir::TensorDesc>& output_descs);

}  // namespace kiln::ops
