#pragma once
// Graph-level checks and shape inference, driven by the op definitions.

#include <optional>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "ops/op_def.h"

namespace kiln::ops {

// Every node's op is known at its opset, its arity is in range, and its attributes are declared
// with the right types. Collects all problems and reports them at once: a user with three
// unsupported ops wants to hear about all three, with node names.
Status check_graph_ops(const ir::Graph& graph);

// The op definition and effective since_version for a node that passed check_graph_ops.
struct ResolvedOp {
  const OpDef* def;
  int since_version;
};
ResolvedOp resolve_op(const ir::Node& node);

// Runs one node's shape function. `values` may hold nullptr for unknown values; `dims_values`
// (empty, or one per input, nullptr where unknown) what ops/dims_values.h traced of the others.
struct NodeInference {
  std::vector<ir::TensorDesc> outputs;
  std::vector<std::optional<Tensor>> values;  // set when the op could derive the value (Shape)
  std::optional<ir::SymInts> dims_value;      // output 0's traced elements (ops/dims_values.h)
};
Result<NodeInference> infer_node(const ir::Node& node, const ResolvedOp& op,
                                 const std::vector<const ir::TensorDesc*>& inputs,
                                 const std::vector<const Tensor*>& values,
                                 const std::vector<const ir::SymInts*>& dims_values = {});

// Infers the desc of every value produced by a node, in topological order. Small integer tensors
// whose inputs are all known are evaluated along the way (Shape -> Gather -> Concat -> Reshape
// chains), so shapes stay static where the model allows; where they hold symbols, their elements
// are traced (ops/dims_values.h), so a dynamic batch stays "batch". Declared output shapes in the
// model that disagree with what kiln derives are an error naming the tensor.
Status infer_graph_shapes(ir::Graph& graph);

}  // namespace kiln::ops
