#include "passes/gemm_activation_fusion.h"

#include "ops/kiln_fused.h"
#include "passes/activation_match.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace {

constexpr std::string_view kName = "gemm_activation_fusion";

// Any ONNX Gemm qualifies: its A is 2-D, and for a 2-D A FusedGemm broadcasts C by Gemm's rules.
bool takes_activation(const ir::Graph& graph, const ir::Node& n) {
  const bool gemm =
      is_onnx_op(n, "Gemm") || (is_kiln_op(n, "FusedGemm") && !ops::has_activation(n.attrs));
  return gemm && n.outputs.size() == 1 && is_fusable_dtype(graph.value(n.outputs[0]).desc.dtype);
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  const ir::Node& gemm = graph.nodes[static_cast<size_t>(n)];
  if (!takes_activation(graph, gemm)) return std::nullopt;
  std::optional<ActivationMatch> act = match_activation(graph, index, gemm.outputs[0]);
  if (!act) return std::nullopt;
  Fusion f{std::move(act->nodes), as_fused_gemm(gemm)};
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

const PassDef& gemm_activation_fusion_pass() {
  static const PassDef def{kName,
                           "Gemm/FusedGemm + activation (Relu, GELU, SiLU, ...) -> FusedGemm", run};
  return def;
}

}  // namespace kiln::passes
