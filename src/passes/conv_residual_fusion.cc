#include "passes/conv_residual_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace {

constexpr std::string_view kName = "conv_residual_fusion";
constexpr size_t kResidualInput = 3;

// The conv producing `c`, when a residual can be added to it; else -1.
int residual_target(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId c) {
  const int p = index.producer(c);
  if (p < 0 || !index.has_single_reader(c)) return -1;
  const ir::Node& n = graph.nodes[static_cast<size_t>(p)];
  const bool has_residual =
      n.inputs.size() > kResidualInput && n.inputs[kResidualInput] != ir::kNoValue;
  const bool plain = is_onnx_op(n, "Conv") ||
                     (is_kiln_op(n, "FusedConv") && !ops::has_activation(n.attrs) && !has_residual);
  if (!plain || n.outputs.size() != 1 || !is_fusable_dtype(graph.value(c).desc.dtype)) return -1;
  return p;
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  const ir::Node& add = graph.nodes[static_cast<size_t>(n)];
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) {
    return std::nullopt;
  }
  int conv = -1;
  size_t conv_input = 0;
  for (const size_t i : {size_t{0}, size_t{1}}) {
    const ir::ValueId c = add.inputs[i];
    const ir::ValueId other = add.inputs[1 - i];
    const int p = residual_target(graph, index, c);
    if (p < 0 || other == ir::kNoValue ||
        !same_shape(graph.value(c).desc, graph.value(other).desc)) {
      continue;
    }
    if (p > conv) {  // the later-produced conv when both qualify
      conv = p;
      conv_input = i;
    }
  }
  if (conv < 0) return std::nullopt;
  Fusion f{{conv, n}, as_fused_conv(graph.nodes[static_cast<size_t>(conv)])};
  f.fused.inputs.resize(kResidualInput + 1, ir::kNoValue);
  f.fused.inputs[kResidualInput] = add.inputs[1 - conv_input];
  f.fused.outputs = add.outputs;
  return f;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace

const PassDef& conv_residual_fusion_pass() {
  static const PassDef def{kName, "Add(Conv, same-shape residual) -> FusedConv with input Z", run};
  return def;
}

}  // namespace kiln::passes
