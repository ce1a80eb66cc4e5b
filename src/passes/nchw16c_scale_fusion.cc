#include "passes/nchw16c_scale_fusion.h"

#include "ops/kiln_layout.h"
#include "passes/fusion_util.h"
#include "passes/nchw16c_rule.h"

namespace kiln::passes {
namespace nchw16c_scale_fusion {
namespace {

constexpr std::string_view kName = "nchw16c_scale_fusion";

// kiln's own kernels' rule (passes/nchw16c_rule.h): the fused scale needs their 1x1 kernel.
bool kiln_kernels_run(const ir::Graph& g, const ir::Node& conv) {
  const Tensor* w = g.value(conv.inputs[1]).constant();
  return host_runs_blocked_kernels() && w != nullptr && blocked_pointwise(conv, w->dims());
}

// Anchored at a MulNchw16c whose output only a blocked-X ConvNchw16c without a scale reads, as X.
std::optional<Fusion> find(const ir::Graph& g, const ir::GraphIndex& index, int n,
                           const PassContext& ctx) {
  const ir::Node& mul = g.nodes[static_cast<size_t>(n)];
  if (!is_kiln_op(mul, ops::kMulNchw16c) || mul.outputs.size() != 1) return std::nullopt;
  const ir::ValueId scaled = mul.outputs[0];
  const std::vector<ir::Use>& uses = index.uses(scaled);
  if (g.value(scaled).is_graph_output || uses.size() != 1 || uses[0].input != 0) {
    return std::nullopt;
  }
  const ir::Node& conv = g.nodes[static_cast<size_t>(uses[0].node)];
  const size_t s_at = ops::kConvNchw16cScaleInput;
  if (!is_kiln_op(conv, ops::kConvNchw16c) ||
      conv.attrs.get_string("x_layout", "nchw16c") != "nchw16c" ||
      (conv.inputs.size() > s_at && conv.inputs[s_at] != ir::kNoValue)) {
    return std::nullopt;
  }
  Fusion f{{n, uses[0].node}, conv};
  f.fused.inputs.resize(s_at + 1, ir::kNoValue);
  f.fused.inputs[0] = mul.inputs[0];
  f.fused.inputs[s_at] = mul.inputs[1];
  const bool runs = ctx.runs_blocked ? ctx.runs_blocked(g, f.fused) : kiln_kernels_run(g, conv);
  if (!runs) return std::nullopt;
  return f;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, [&ctx](const ir::Graph& g, const ir::GraphIndex& index, int n) {
    return find(g, index, n, ctx);
  });
  return Status::ok();
}

}  // namespace
}  // namespace nchw16c_scale_fusion

const PassDef& nchw16c_scale_fusion_pass() {
  static const PassDef def{
      nchw16c_scale_fusion::kName,
      "MulNchw16c (a squeeze-and-excitation's scale) + 1x1 ConvNchw16c -> ConvNchw16c",
      nchw16c_scale_fusion::run};
  return def;
}

}  // namespace kiln::passes
