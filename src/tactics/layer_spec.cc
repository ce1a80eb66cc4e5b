#include "ops/infer_graph.h"
#include "tactics/tactic.h"

namespace kiln::tactics {

LayerSpec make_layer_spec(const ir::Graph& graph, const ir::Node& node) {
  LayerSpec spec;
  spec.node = &node;
  spec.since_version = ops::resolve_op(node).since_version;
  for (ir::ValueId v : node.inputs) {
    spec.inputs.push_back(v == ir::kNoValue ? ir::TensorDesc{} : graph.value(v).desc);
    spec.constants.push_back(v == ir::kNoValue ? nullptr : graph.value(v).constant());
  }
  for (ir::ValueId v : node.outputs) {
    spec.outputs.push_back(v == ir::kNoValue ? ir::TensorDesc{} : graph.value(v).desc);
  }
  return spec;
}

}  // namespace kiln::tactics
