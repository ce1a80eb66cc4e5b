#include "passes/identity_elimination.h"

#include <fmt/format.h>

#include <optional>

#include "ir/graph_edit.h"
#include "passes/bypass.h"

namespace kiln::passes {
namespace identity_elimination {
namespace {

constexpr std::string_view kName = "identity_elimination";

bool is_read(const ir::Graph& graph, ir::ValueId v) {
  if (graph.value(v).is_graph_output) return true;
  for (const ir::Node& node : graph.nodes) {
    for (ir::ValueId in : node.inputs) {
      if (in == v) return true;
    }
  }
  return false;
}

// Dropout is the identity at inference unless it is asked to train (training_mode, opset 12+, not
// known to be false) or someone reads its mask.
std::optional<std::string> dropout_passes_through(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue &&
      is_read(graph, node.outputs[1])) {
    return std::nullopt;
  }
  if (node.inputs.size() > 2 && node.inputs[2] != ir::kNoValue) {
    const Tensor* mode = graph.value(node.inputs[2]).constant();
    if (mode == nullptr || mode->dtype() != DType::kBool || mode->numel() != 1 ||
        mode->data<bool>()[0]) {
      return std::nullopt;
    }
  }
  return std::string("inference Dropout");
}

// Why `node` outputs its input 0 unchanged, or nullopt when it does not (or may not).
std::optional<std::string> passthrough_reason(const ir::Graph& graph, const ir::Node& node) {
  if (!node.domain.empty() || node.inputs.empty() || node.outputs.empty() ||
      node.inputs[0] == ir::kNoValue || node.outputs[0] == ir::kNoValue) {
    return std::nullopt;
  }
  if (node.op_type == "Identity") return std::string("Identity");
  if (node.op_type == "Dropout") return dropout_passes_through(graph, node);
  if (node.op_type == "Cast" || node.op_type == "CastLike") {
    const DType from = graph.value(node.inputs[0]).desc.dtype;
    const DType to = graph.value(node.outputs[0]).desc.dtype;
    if (from == DType::kUndefined || from != to) return std::nullopt;
    return fmt::format("{} to {}, the input's dtype", node.op_type, dtype_name(to));
  }
  return std::nullopt;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    const std::optional<std::string> why = passthrough_reason(graph, node);
    if (!why) continue;
    const ir::ValueId in = node.inputs[0];
    const ir::ValueId out = node.outputs[0];
    if (!can_bypass(graph, in, out)) continue;
    bypass(graph, in, out);
    dead[n] = true;
    ctx.log.add(kName, fmt::format("removed {} ({})", join_origins(node.origins()), *why));
  }
  ir::remove_nodes(graph, dead);
  return Status::ok();
}

}  // namespace
}  // namespace identity_elimination

const PassDef& identity_elimination_pass() {
  static const PassDef def{identity_elimination::kName,
                           "removes Identity, inference Dropout and Casts to the input's own dtype",
                           identity_elimination::run};
  return def;
}

}  // namespace kiln::passes
