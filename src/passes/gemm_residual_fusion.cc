#include "passes/gemm_residual_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace gemm_residual_fusion {
namespace {

constexpr std::string_view kName = "gemm_residual_fusion";
constexpr size_t kResidualInput = 3;

// A Gemm, or a kiln.FusedGemm with neither activation nor residual yet, whose C is one row.
bool takes_residual(const ir::Graph& graph, const ir::Node& n) {
  const bool gemm =
      is_onnx_op(n, "Gemm") ||
      (is_kiln_op(n, "FusedGemm") && !ops::has_activation(n.attrs) && ops::residual_input(n) < 0);
  return gemm && c_is_one_row(graph, n);
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  return find_residual_fusion(graph, index, n, takes_residual, as_fused_gemm, kResidualInput);
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace
}  // namespace gemm_residual_fusion

const PassDef& gemm_residual_fusion_pass() {
  static const PassDef def{gemm_residual_fusion::kName,
                           "Add(Gemm, same-shape residual) -> FusedGemm with input Z",
                           gemm_residual_fusion::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
