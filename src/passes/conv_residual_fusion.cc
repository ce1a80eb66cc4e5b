#include "passes/conv_residual_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace conv_residual_fusion {
namespace {

constexpr std::string_view kName = "conv_residual_fusion";
constexpr size_t kResidualInput = 3;

// A Conv, or a kiln.FusedConv with neither activation nor residual yet.
bool takes_residual(const ir::Graph&, const ir::Node& n) {
  return is_onnx_op(n, "Conv") || (is_kiln_op(n, "FusedConv") && !ops::has_activation(n.attrs) &&
                                   ops::residual_input(n) < 0);
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  return find_residual_fusion(graph, index, n, takes_residual, as_fused_conv, kResidualInput);
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace
}  // namespace conv_residual_fusion

const PassDef& conv_residual_fusion_pass() {
  static const PassDef def{conv_residual_fusion::kName,
                           "Add(Conv, same-shape residual) -> FusedConv with input Z",
                           conv_residual_fusion::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
