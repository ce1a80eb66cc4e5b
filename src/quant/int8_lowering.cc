#include "quant/int8_lowering.h"

#include <fmt/format.h>

#include "ops/kiln_fused.h"
#include "ops/kiln_quant.h"
#include "quant/value_sign.h"
#include "quant/weight_quant.h"

namespace kiln::quant {
namespace {

ir::ValueId input_or_none(const ir::Node& n, size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : ir::kNoValue;
}

bool is_op(const ir::Node& n, std::string_view domain, std::string_view op) {
  return n.domain == domain && n.op_type == op;
}

Result<Tensor> float32_constant(const ir::Graph& g, ir::ValueId v, std::string_view what) {
  const Tensor* t = g.value(v).constant();
  if (!t) return unsupported("its {} '{}' is not a constant", what, g.value(v).name);
  // A copy: Tensor copies share storage, and the caller may scale the weights in place.
  if (t->dtype() == DType::kF32) return t->clone();
  if (t->dtype() == DType::kF16) return cast_tensor(*t, DType::kF32);
  return unsupported("its {} '{}' is {}, not float", what, g.value(v).name, t->desc());
}

Status check_depth(int64_t depth) {
  if (depth <= ops::kMaxQuantDepth) return Status::ok();
  return unsupported(
      "its depth {} exceeds {}, the most whose int32 sums of uint8 x int8 products stay exact",
      depth, ops::kMaxQuantDepth);
}

// A per-channel bias as float32 [channels], from a constant of `channels` elements or one that
// broadcasts (a scalar, [1, channels]); times `factor` (Gemm's beta).
Result<Tensor> channel_bias(const ir::Graph& g, ir::ValueId v, int64_t channels, float factor) {
  KILN_ASSIGN_OR_RETURN(const Tensor t, float32_constant(g, v, "bias"));
  const bool per_channel =
      t.numel() == channels && (t.rank() == 1 || (t.rank() == 2 && t.dim(0) == 1));
  if (!per_channel && t.numel() != 1) {
    return unsupported("its bias '{}' is {}: INT8 layers take one bias per output channel ({})",
                       g.value(v).name, t.desc(), channels);
  }
  Tensor out(DType::kF32, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    out.data<float>()[c] = factor * t.data<float>()[per_channel ? c : 0];
  }
  return out;
}

// The layer's int8 weights: with the QDQ model's own scales when it has them along the output
// channel axis (`transposed`: the weights were [N, K] and became [K, N]), else per channel onto
// [-qmax, qmax].
Result<ChannelQuantized> int8_weights(const Tensor& w, const WeightScales* given, int channel_axis,
                                      bool transposed, int qmax) {
  if (given) {
    const int axis = transposed ? 1 - given->axis : given->axis;
    if (given->scales.numel() == 1 || axis == channel_axis) {
      return quantize_with_scales(w, given->scales, channel_axis);
    }
  }
  return quantize_per_channel(w, channel_axis, qmax);
}

// The INT8 op's constant inputs: the int8 weights and their scales, named after the float weight,
// and the float32 bias (kNoValue without one).
struct Int8Constants {
  ir::ValueId weight, scales, bias;
};
Int8Constants add_int8_constants(ir::Graph& g, ir::ValueId w, ChannelQuantized q, ir::ValueId b,
                                 Tensor bias) {
  const std::string name = g.value(w).name;
  Int8Constants c;
  c.weight = ir::add_constant(g, name + "_int8", std::move(q.q));
  c.scales = ir::add_constant(g, name + "_scale", std::move(q.scales));
  c.bias = b == ir::kNoValue ? b : ir::add_constant(g, g.value(b).name + "_f32", std::move(bias));
  return c;
}

ir::Node int8_node(const ir::Node& from, std::string_view op, std::vector<ir::ValueId> inputs) {
  while (!inputs.empty() && inputs.back() == ir::kNoValue) inputs.pop_back();
  ir::Node n;
  n.name = from.name;
  n.op_type = std::string(op);
  n.domain = std::string(ops::kKilnDomain);
  n.opset = ops::kKilnOpset;
  n.inputs = std::move(inputs);
  n.outputs = from.outputs;
  n.fused_from = from.origins();
  return n;
}

void set_input_encoding(ir::Node& n, std::string_view prefix, const Uint8Encoding& e) {
  n.attrs.set(fmt::format("{}_scale", prefix), e.scale);
  n.attrs.set(fmt::format("{}_zero_point", prefix), int64_t{e.zero_point});
}

Result<ir::Node> lower_conv(ir::Graph& g, int at, InputQuantizer& inputs, int weight_qmax) {
  const ir::Node node = g.nodes[static_cast<size_t>(at)];
  const ir::ValueId x = node.inputs[0], w = node.inputs[1];
  const ir::ValueId b = input_or_none(node, 2), z = input_or_none(node, 3);
  KILN_ASSIGN_OR_RETURN(const Tensor wt, float32_constant(g, w, "weight"));
  if (wt.rank() < 3 || wt.rank() > 5) {
    return unsupported("its weights are {}: INT8 convolutions are 1-D to 3-D", wt.desc());
  }
  KILN_RETURN_IF_ERROR(check_depth(wt.numel() / std::max<int64_t>(wt.dim(0), 1)));
  Tensor bias;
  if (b != ir::kNoValue) {
    KILN_ASSIGN_OR_RETURN(bias, channel_bias(g, b, wt.dim(0), 1.0f));
  }
  if (z != ir::kNoValue && g.value(z).desc.dtype != DType::kF32) {
    return unsupported("its residual '{}' is {}", g.value(z).name, g.value(z).desc.to_string());
  }
  KILN_RETURN_IF_ERROR(inputs.check(x));
  KILN_ASSIGN_OR_RETURN(ChannelQuantized wq,
                        int8_weights(wt, inputs.ranges().weight_scales(g.value(w).name), 0,
                                     /*transposed=*/false, weight_qmax));
  const auto [xq, enc] = inputs.quantized(x, at);
  const Int8Constants k = add_int8_constants(g, w, std::move(wq), b, std::move(bias));
  ir::Node q = int8_node(node, "QConv", {xq, k.weight, k.scales, k.bias, z});
  q.attrs = node.attrs;  // Conv's attributes and the fused activation
  set_input_encoding(q, "x", enc);
  return q;
}

// Gemm / kiln.FusedGemm (alpha, beta, transB folded into the constants) and MatMul.
Result<ir::Node> lower_gemm(ir::Graph& g, int at, InputQuantizer& inputs, int weight_qmax) {
  const ir::Node node = g.nodes[static_cast<size_t>(at)];
  const bool matmul = is_op(node, "", "MatMul");
  const ir::ValueId a = node.inputs[0], b = node.inputs[1];
  const ir::ValueId c = matmul ? ir::kNoValue : input_or_none(node, 2);
  if (node.attrs.get_int("transA", 0) != 0) return unsupported("it transposes A (transA=1)");
  if (!g.value(a).desc.has_rank() || g.value(a).desc.rank() < 2) {
    return unsupported("its input '{}' is {}: INT8 GEMMs need rank >= 2", g.value(a).name,
                       g.value(a).desc.to_string());
  }
  KILN_ASSIGN_OR_RETURN(Tensor bt, float32_constant(g, b, "weight"));
  if (bt.rank() != 2) return unsupported("its weights are {}, not 2-D", bt.desc());
  if (node.attrs.get_int("transB", 0) != 0) {
    KILN_ASSIGN_OR_RETURN(bt, transpose_2d(bt));
  }
  const float alpha = node.attrs.get_float("alpha", 1.0f);
  if (alpha != 1.0f) {
    for (float& v : bt.span<float>()) v *= alpha;
  }
  KILN_RETURN_IF_ERROR(check_depth(bt.dim(0)));
  Tensor bias;
  if (c != ir::kNoValue) {
    KILN_ASSIGN_OR_RETURN(bias, channel_bias(g, c, bt.dim(1), node.attrs.get_float("beta", 1.0f)));
  }
  KILN_RETURN_IF_ERROR(inputs.check(a));
  // Scaling by alpha changes the weights, so a QDQ model's scales no longer fit them.
  const WeightScales* given =
      alpha == 1.0f ? inputs.ranges().weight_scales(g.value(b).name) : nullptr;
  KILN_ASSIGN_OR_RETURN(
      ChannelQuantized bq,
      int8_weights(bt, given, 1, node.attrs.get_int("transB", 0) != 0, weight_qmax));
  const auto [aq, enc] = inputs.quantized(a, at);
  const Int8Constants k = add_int8_constants(g, b, std::move(bq), c, std::move(bias));
  const ir::ValueId z = matmul ? ir::kNoValue : input_or_none(node, 3);  // FusedGemm's residual
  ir::Node q = int8_node(node, "QGemm", {aq, k.weight, k.scales, k.bias, z});
  for (std::string_view attr : {"activation", "activation_params"}) {
    if (const ir::AttrValue* v = node.attrs.find(attr)) q.attrs.set(std::string(attr), *v);
  }
  set_input_encoding(q, "a", enc);
  return q;
}

}  // namespace

InputQuantizer::InputQuantizer(ir::Graph& graph, const ir::GraphIndex& index,
                               const RangeTable& ranges)
    : graph_(graph), index_(index), ranges_(ranges), node_names_(graph) {}

Status InputQuantizer::check(ir::ValueId v) const {
  const ir::Value& value = graph_.value(v);
  if (value.desc.dtype != DType::kF32) {
    return unsupported("its input '{}' is {}, not float32", value.name, value.desc.to_string());
  }
  if (range(v) == nullptr) {
    return unsupported("the calibration has no range for its input '{}'", value.name);
  }
  return Status::ok();
}

const TensorRange* InputQuantizer::range(ir::ValueId v) const {
  const ir::Value& value = graph_.value(v);
  if (const TensorRange* r = ranges_.find(value.name, value.is_graph_input)) return r;
  const int p = index_.producer(v);
  if (p < 0) return nullptr;
  const ir::Node& n = graph_.nodes[static_cast<size_t>(p)];
  return rearranges_values(n) && !n.inputs.empty() ? range(n.inputs[0]) : nullptr;
}

std::pair<ir::ValueId, Uint8Encoding> InputQuantizer::quantized(ir::ValueId v, int reader) {
  if (auto it = done_.find(v); it != done_.end()) return it->second;
  const std::string name = graph_.value(v).name;
  const TensorRange& r = *range(v);
  const Uint8Encoding enc = value_encoding(graph_, index_, v, r);
  const ir::ValueId scale = ir::add_constant(graph_, name + "_qscale", Tensor::scalar(enc.scale));
  const ir::ValueId zero = ir::add_constant(graph_, name + "_qzero",
                                            Tensor::scalar(static_cast<uint8_t>(enc.zero_point)));
  const ir::ValueId out = add_uint8_value(graph_, v);
  ir::Node q;
  q.name = node_names_.take(name + "/QuantizeLinear", "_");
  q.op_type = "QuantizeLinear";
  q.opset = 13;
  q.inputs = {v, scale, zero};
  q.outputs = {out};
  inserted_[reader].push_back(std::move(q));
  done_[v] = {out, enc};
  return done_[v];
}

bool is_int8_candidate(const ir::Node& n) {
  return is_op(n, "", "Conv") || is_op(n, "kiln", "FusedConv") || is_op(n, "", "Gemm") ||
         is_op(n, "kiln", "FusedGemm") || (is_op(n, "", "MatMul") && n.inputs.size() == 2);
}

Result<ir::Node> lower_to_int8(ir::Graph& graph, int node_index, InputQuantizer& inputs,
                               int weight_qmax) {
  const ir::Node& n = graph.nodes[static_cast<size_t>(node_index)];
  if (n.op_type == "Conv" || n.op_type == "FusedConv") {
    return lower_conv(graph, node_index, inputs, weight_qmax);
  }
  return lower_gemm(graph, node_index, inputs, weight_qmax);
}

}  // namespace kiln::quant
