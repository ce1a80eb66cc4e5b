#include "quant/value_sign.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "ops/kiln_fused.h"

namespace kiln::quant {
namespace {

// Activations whose every output is >= 0 (for Clip and HardSigmoid it depends on the bounds).
bool nonnegative_activation(std::string_view name, const std::vector<float>& params) {
  if (name == "Relu" || name == "Sigmoid") return true;
  if (name == "Clip" || name == "HardSigmoid")
    return name == "HardSigmoid" || (!params.empty() && params[0] >= 0);
  return false;
}

// Ops whose output is >= 0 whenever their first input is.
bool keeps_sign(const ir::Node& n) {
  static constexpr std::array<std::string_view, 4> pools = {"MaxPool", "AveragePool",
                                                            "GlobalAveragePool", "GlobalMaxPool"};
  if (rearranges_values(n)) return true;
  return n.domain.empty() && std::find(pools.begin(), pools.end(), n.op_type) != pools.end();
}

bool clip_min_nonnegative(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
    const Tensor* lo = g.value(n.inputs[1]).constant();
    return lo && lo->numel() == 1 && lo->value_as_double(0) >= 0;
  }
  return n.attrs.has("min") && n.attrs.get_float("min", -1) >= 0;  // Clip-6
}

}  // namespace

bool rearranges_values(const ir::Node& n) {
  static constexpr std::array<std::string_view, 6> views = {"Reshape",   "Flatten",   "Squeeze",
                                                            "Unsqueeze", "Transpose", "Identity"};
  if (n.domain == ops::kKilnDomain) return n.op_type == ops::kPatches;
  return n.domain.empty() && std::find(views.begin(), views.end(), n.op_type) != views.end();
}

bool is_nonnegative(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v) {
  for (int depth = 0; depth < 16; ++depth) {  // a bounded walk up through pooling/reshapes
    const int p = index.producer(v);
    if (p < 0) return false;
    const ir::Node& n = graph.nodes[static_cast<size_t>(p)];
    if (n.domain == "kiln") {
      const std::string act = n.attrs.get_string("activation", "");
      const std::vector<float> params = n.attrs.get_floats("activation_params", {0, 0});
      return !act.empty() && nonnegative_activation(act, params);
    }
    if (!n.domain.empty()) return false;
    if (n.op_type == "Relu" || n.op_type == "Sigmoid") return true;
    if (n.op_type == "Clip") return clip_min_nonnegative(graph, n);
    if (!keeps_sign(n) || n.inputs.empty()) return false;
    v = n.inputs[0];
  }
  return false;
}

bool range_nonnegative(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v,
                       const TensorRange& r) {
  return is_nonnegative(graph, index, v) || (r.min && *r.min >= 0);
}

Uint8Encoding value_encoding(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v,
                             const TensorRange& r) {
  return r.encoding ? *r.encoding : uint8_encoding(r.amax, range_nonnegative(graph, index, v, r));
}

ir::ValueId add_uint8_value(ir::Graph& g, ir::ValueId v) {
  ir::TensorDesc desc = g.value(v).desc;
  desc.dtype = DType::kU8;
  return g.add_value(ir::unique_value_name(g, g.value(v).name + "_u8"), desc);
}

}  // namespace kiln::quant
