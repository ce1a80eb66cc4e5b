#include "passes/conv_activation_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/activation_match.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace {

constexpr std::string_view kName = "conv_activation_fusion";

bool takes_activation(const ir::Graph& graph, const ir::Node& n) {
  const bool conv =
      is_onnx_op(n, "Conv") || (is_kiln_op(n, "FusedConv") && !ops::has_activation(n.attrs));
  return conv && n.outputs.size() == 1 && is_fusable_dtype(graph.value(n.outputs[0]).desc.dtype);
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  const ir::Node& conv = graph.nodes[static_cast<size_t>(n)];
  if (!takes_activation(graph, conv)) return std::nullopt;
  std::optional<ActivationMatch> act = match_activation(graph, index, conv.outputs[0]);
  if (!act) return std::nullopt;
  Fusion f{std::move(act->nodes), as_fused_conv(conv)};
  f.nodes.push_back(n);
  ops::set_activation_attrs(f.fused.attrs, act->params);
  f.fused.outputs = {act->output};
  return f;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace

const PassDef& conv_activation_fusion_pass() {
  static const PassDef def{
      kName, "Conv + activation (Relu, Clip, LeakyRelu, SiLU, HardSwish, GELU, ...) -> FusedConv",
      run};
  return def;
}

}  // namespace kiln::passes
