#include "passes/nchw16c_scale_fusion.h"

#include <algorithm>

#include "base/cpu_features.h"
#include "ops/kiln_layout.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace {

constexpr std::string_view kName = "nchw16c_scale_fusion";

// kiln's own kernels' rule: the fused scale needs their 1x1 kernel (group 1, no padding).
bool kiln_kernels_run(const ir::Graph& g, const ir::Node& conv) {
  if ((host_cpu_features() & kIsaAvx2) != kIsaAvx2) return false;
  const Tensor* w = g.value(conv.inputs[1]).constant();
  if (w == nullptr || w->rank() != 4 || w->dims()[2] != 1 || w->dims()[3] != 1) return false;
  const std::vector<int64_t> pads = conv.attrs.get_ints("pads");
  return conv.attrs.get_int("group", 1) == 1 &&
         std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; });
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

const PassDef& nchw16c_scale_fusion_pass() {
  static const PassDef def{
      kName, "MulNchw16c (a squeeze-and-excitation's scale) + 1x1 ConvNchw16c -> ConvNchw16c", run};
  return def;
}

}  // namespace kiln::passes
