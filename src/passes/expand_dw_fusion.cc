#include "passes/expand_dw_fusion.h"

#include <algorithm>

#include "base/cache_sizes.h"
#include "ops/kiln_layout.h"
#include "passes/fusion_util.h"
#include "passes/nchw16c_rule.h"

namespace kiln::passes {
namespace expand_dw_fusion {
namespace {

constexpr std::string_view kName = "expand_dw_fusion";

bool all_ones(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

// A pointwise ConvNchw16c on a blocked X with nothing but its weights, bias and activation.
bool plain_expansion(const ir::Graph& g, const ir::Node& conv) {
  if (!is_kiln_op(conv, ops::kConvNchw16c) || conv.outputs.size() != 1 ||
      conv.attrs.get_string("x_layout", "nchw16c") != "nchw16c" || conv.inputs.size() > 3) {
    return false;
  }
  const Tensor* w = g.value(conv.inputs[1]).constant();
  return w != nullptr && blocked_pointwise(conv, w->dims()) &&
         all_ones(conv.attrs.get_ints("strides")) && all_ones(conv.attrs.get_ints("dilations"));
}

// A depthwise ConvNchw16c over `channels` channels, without a channel scale.
bool depthwise_of(const ir::Graph& g, const ir::Node& conv, int64_t channels) {
  if (!is_kiln_op(conv, ops::kConvNchw16c) ||
      (conv.inputs.size() > ops::kConvNchw16cScaleInput &&
       conv.inputs[ops::kConvNchw16cScaleInput] != ir::kNoValue)) {
    return false;
  }
  const Tensor* w = g.value(conv.inputs[1]).constant();
  return w != nullptr && w->rank() == 4 && w->dims()[0] == channels && w->dims()[1] == 1 &&
         conv.attrs.get_int("group", 1) == channels;
}

// The expanded tensor's bytes, or 0 when its shape is not known.
int64_t tensor_bytes(const ir::Value& v) {
  if (!v.desc.is_static()) return 0;
  return dims_numel(v.desc.static_dims()) * static_cast<int64_t>(sizeof(float));
}

ir::Node fused_node(const ir::Node& pw, const ir::Node& dw) {
  ir::Node f = dw;
  f.op_type = std::string(ops::kExpandDwNchw16c);
  f.attrs.erase("x_layout");
  const auto input = [](const ir::Node& n, size_t i) {
    return i < n.inputs.size() ? n.inputs[i] : ir::kNoValue;
  };
  f.inputs = {pw.inputs[0], pw.inputs[1], input(pw, 2), dw.inputs[1], input(dw, 2), input(dw, 3)};
  while (f.inputs.back() == ir::kNoValue) f.inputs.pop_back();
  if (const std::string act = pw.attrs.get_string("activation", ""); !act.empty()) {
    f.attrs.set("expand_activation", act);
    const std::vector<float> params = pw.attrs.get_floats("activation_params");
    if (!params.empty()) f.attrs.set("expand_activation_params", params);
  }
  return f;
}

// Anchored at the expansion.
std::optional<Fusion> find(const ir::Graph& g, const ir::GraphIndex& index, int n,
                           const PassContext& ctx, int64_t l2_bytes) {
  const ir::Node& pw = g.nodes[static_cast<size_t>(n)];
  if (!plain_expansion(g, pw)) return std::nullopt;
  const ir::ValueId e = pw.outputs[0];
  const std::vector<ir::Use>& uses = index.uses(e);
  if (g.value(e).is_graph_output || uses.size() != 1 || uses[0].input != 0) return std::nullopt;
  const ir::Node& dw = g.nodes[static_cast<size_t>(uses[0].node)];
  const int64_t channels = g.value(pw.inputs[1]).constant()->dims()[0];
  if (!depthwise_of(g, dw, channels) || tensor_bytes(g.value(e)) <= l2_bytes) return std::nullopt;
  Fusion f{{n, uses[0].node}, fused_node(pw, dw)};
  const bool runs = ctx.runs_blocked ? ctx.runs_blocked(g, f.fused) : host_runs_blocked_kernels();
  if (!runs) return std::nullopt;
  return f;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  const auto l2 = static_cast<int64_t>(host_cache_sizes().l2_bytes);
  apply_fusions(graph, ctx, kName,
                [&ctx, l2](const ir::Graph& g, const ir::GraphIndex& index, int n) {
                  return find(g, index, n, ctx, l2);
                });
  return Status::ok();
}

}  // namespace
}  // namespace expand_dw_fusion

const PassDef& expand_dw_fusion_pass() {
  static const PassDef def{expand_dw_fusion::kName,
                           "1x1 ConvNchw16c + depthwise ConvNchw16c -> ExpandDwNchw16c, where "
                           "the expanded tensor outgrows L2",
                           expand_dw_fusion::run};
  return def;
}

}  // namespace kiln::passes
