#include "passes/gemm_activation_fusion.h"

#include "passes/fusion_util.h"

namespace kiln::passes {
namespace gemm_activation_fusion {
namespace {

constexpr std::string_view kName = "gemm_activation_fusion";

// Any ONNX Gemm qualifies: its A is 2-D, and for a 2-D A FusedGemm broadcasts C by Gemm's rules.
std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  return find_activation_fusion(graph, index, n, "Gemm", "FusedGemm", as_fused_gemm);
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace
}  // namespace gemm_activation_fusion

const PassDef& gemm_activation_fusion_pass() {
  static const PassDef def{gemm_activation_fusion::kName,
                           "Gemm/FusedGemm + activation (Relu, GELU, SiLU, ...) -> FusedGemm",
                           gemm_activation_fusion::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
