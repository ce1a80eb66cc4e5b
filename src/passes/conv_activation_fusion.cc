#include "passes/conv_activation_fusion.h"

#include "passes/fusion_util.h"

namespace kiln::passes {
namespace conv_activation_fusion {
namespace {

constexpr std::string_view kName = "conv_activation_fusion";

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  return find_activation_fusion(graph, index, n, "Conv", "FusedConv", as_fused_conv);
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace
}  // namespace conv_activation_fusion

const PassDef& conv_activation_fusion_pass() {
  static const PassDef def{
      conv_activation_fusion::kName,
      "Conv + activation (Relu, Clip, LeakyRelu, SiLU, HardSwish, GELU, ...) -> FusedConv",
      conv_activation_fusion::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
