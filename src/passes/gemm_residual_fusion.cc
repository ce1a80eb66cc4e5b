#include "passes/gemm_residual_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace {

constexpr std::string_view kName = "gemm_residual_fusion";
constexpr size_t kResidualInput = 3;

// C absent, or of rank <= 1, or [1, N]: a bias per column, not a matrix the residual would have to
// share the epilogue's addend with.
bool c_is_one_row(const ir::Graph& graph, const ir::Node& n) {
  if (n.inputs.size() < 3 || n.inputs[2] == ir::kNoValue) return true;
  const ir::TensorDesc& c = graph.value(n.inputs[2]).desc;
  return c.has_rank() &&
         (c.rank() <= 1 || (c.rank() == 2 && same_dim(c.dim(0), ir::Dim::known(1))));
}

// A Gemm, or a kiln.FusedGemm with neither activation nor residual yet.
bool takes_residual(const ir::Graph& graph, const ir::Node& n) {
  const bool has_residual =
      n.inputs.size() > kResidualInput && n.inputs[kResidualInput] != ir::kNoValue;
  const bool gemm = is_onnx_op(n, "Gemm") ||
                    (is_kiln_op(n, "FusedGemm") && !ops::has_activation(n.attrs) && !has_residual);
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

const PassDef& gemm_residual_fusion_pass() {
  static const PassDef def{kName, "Add(Gemm, same-shape residual) -> FusedGemm with input Z", run};
  return def;
}

}  // namespace kiln::passes
