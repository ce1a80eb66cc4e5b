#include "quant/qdq_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/graph_edit.h"
#include "ops/infer_graph.h"
#include "quant/value_sign.h"
#include "quant/weight_quant.h"

namespace kiln::quant {
namespace {

bool qdq_is_op(const ir::Node& n, std::string_view op) {
  return n.domain.empty() && n.op_type == op;
}

// The activation's scale and zero point in the chosen storage type.
struct QdqActivationEncoding {
  float scale = 1;
  Tensor zero_point;  // int8 or uint8 scalar
};

QdqActivationEncoding qdq_activation_encoding(const TensorRange& r, bool nonnegative,
                                              QdqActivationType type) {
  if (type == QdqActivationType::kUint8) {
    const Uint8Encoding e = r.encoding ? *r.encoding : uint8_encoding(r.amax, nonnegative);
    return {e.scale, Tensor::scalar(static_cast<uint8_t>(e.zero_point))};
  }
  // TensorRT's symmetric int8: [-amax, amax] on [-127, 127], zero point 0.
  const bool usable = r.amax > 0 && std::isfinite(r.amax);
  const float scale = usable ? static_cast<float>(r.amax / 127.0) : 1.0f;
  return {scale, Tensor::scalar(int8_t{0})};
}

class QdqWriter {
 public:
  QdqWriter(ir::Graph& g, const RangeTable& ranges, QdqActivationType type)
      : g_(g), index_(g), values_(g.values.size()), ranges_(ranges), type_(type), node_names_(g) {}

  // The dequantized version of activation `x` and its scale; one Q -> DQ per tensor.
  Result<std::pair<ir::ValueId, float>> activation(ir::ValueId x) {
    if (auto it = pairs_.find(x); it != pairs_.end()) return it->second;
    const ir::Value& v = g_.value(x);
    if (v.desc.dtype != DType::kF32) {
      return unsupported("'{}' is {}, not float32", v.name, v.desc.to_string());
    }
    const TensorRange* r = ranges_.find(v.name, v.is_graph_input);
    if (!r) return unsupported("the calibration has no range for '{}'", v.name);
    QdqActivationEncoding e =
        qdq_activation_encoding(*r, range_nonnegative(g_, index_, x, *r), type_);
    const std::string name = v.name;
    ir::TensorDesc qdesc = v.desc;
    qdesc.dtype = e.zero_point.dtype();
    const ir::TensorDesc fdesc = v.desc;
    const ir::ValueId scale = ir::add_constant(g_, name + "_scale", Tensor::scalar(e.scale));
    const ir::ValueId zero = ir::add_constant(g_, name + "_zero_point", std::move(e.zero_point));
    const ir::ValueId q = g_.add_value(ir::unique_value_name(g_, name + "_quantized"), qdesc);
    const ir::ValueId dq = g_.add_value(ir::unique_value_name(g_, name + "_dequantized"), fdesc);
    std::vector<ir::Node>& at = after_[index_.producer(x)];
    at.push_back(make_node("QuantizeLinear", name, {x, scale, zero}, q));
    at.push_back(make_node("DequantizeLinear", name, {q, scale, zero}, dq));
    ++report_.activation_pairs;
    return pairs_[x] = {dq, e.scale};
  }

  // Int8 weights behind a DequantizeLinear along `axis`; the per-channel scales.
  Result<std::pair<ir::ValueId, Tensor>> weight(ir::ValueId w, int axis) {
    const ir::Value& v = g_.value(w);
    const Tensor* t = v.constant();
    if (!t || t->dtype() != DType::kF32) {
      return unsupported("its weight '{}' is not a float32 constant", v.name);
    }
    KILN_ASSIGN_OR_RETURN(ChannelQuantized q, quantize_per_channel(*t, axis));
    const std::string name = v.name;
    const ir::TensorDesc fdesc = v.desc;
    Tensor zeros(DType::kI8, {q.scales.numel()});
    std::fill_n(zeros.data<int8_t>(), zeros.numel(), int8_t{0});
    const ir::ValueId qw = ir::add_constant(g_, name + "_quantized", std::move(q.q));
    const ir::ValueId s = ir::add_constant(g_, name + "_scale", q.scales);
    const ir::ValueId z = ir::add_constant(g_, name + "_zero_point", std::move(zeros));
    const ir::ValueId out = g_.add_value(ir::unique_value_name(g_, name + "_dequantized"), fdesc);
    ir::Node dq = make_node("DequantizeLinear", name, {qw, s, z}, out);
    dq.attrs.set("axis", int64_t{axis});
    constants_.push_back(std::move(dq));
    return std::pair<ir::ValueId, Tensor>{out, q.scales};
  }

  // A per-channel float bias as int32 with scale in_scale * w_scales[c]; kNoValue when the bias is
  // not a float32 constant of one value per channel (it then stays float).
  ir::ValueId bias(ir::ValueId b, float in_scale, const Tensor& w_scales) {
    const Tensor* t = g_.value(b).constant();
    const int64_t channels = w_scales.numel();
    if (!t || t->dtype() != DType::kF32 || t->rank() != 1 || t->numel() != channels) {
      return ir::kNoValue;
    }
    Tensor q(DType::kI32, {channels}), scales(DType::kF32, {channels}),
        zeros(DType::kI32, {channels});
    constexpr double kMax = std::numeric_limits<int32_t>::max();
    for (int64_t c = 0; c < channels; ++c) {
      const float s = in_scale * w_scales.data<float>()[c];
      scales.data<float>()[c] = s;
      const double v = s > 0 ? std::nearbyint(double(t->data<float>()[c]) / s) : 0.0;
      q.data<int32_t>()[c] = static_cast<int32_t>(std::clamp(v, -kMax, kMax));
      zeros.data<int32_t>()[c] = 0;
    }
    const std::string name = g_.value(b).name;
    const ir::TensorDesc fdesc = g_.value(b).desc;
    const ir::ValueId qb = ir::add_constant(g_, name + "_quantized", std::move(q));
    const ir::ValueId s = ir::add_constant(g_, name + "_scale", std::move(scales));
    const ir::ValueId z = ir::add_constant(g_, name + "_zero_point", std::move(zeros));
    const ir::ValueId out = g_.add_value(ir::unique_value_name(g_, name + "_dequantized"), fdesc);
    ir::Node dq = make_node("DequantizeLinear", name, {qb, s, z}, out);
    dq.attrs.set("axis", int64_t{0});
    constants_.push_back(std::move(dq));
    ++report_.int32_biases;
    return out;
  }

  // Constant DQs first (they read initializers only), then each activation pair right after the
  // producer of its tensor (graph inputs: before every node).
  void splice() {
    std::vector<ir::Node> nodes = std::move(constants_);
    auto append = [&](int producer) {
      if (auto it = after_.find(producer); it != after_.end()) {
        for (ir::Node& n : it->second) nodes.push_back(std::move(n));
      }
    };
    append(-1);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      nodes.push_back(std::move(g_.nodes[i]));
      append(static_cast<int>(i));
    }
    g_.nodes = std::move(nodes);
  }

  const ir::GraphIndex& index() const { return index_; }
  QdqActivationType type() const { return type_; }
  // The values the graph had before the writer added any (those index() knows).
  size_t original_values() const { return values_; }
  QdqReport& report() { return report_; }

 private:
  ir::Node make_node(std::string_view op, const std::string& tensor,
                     std::vector<ir::ValueId> inputs, ir::ValueId output) {
    ir::Node n;
    n.name = node_names_.take(fmt::format("{}_{}", tensor, op), "_");
    n.op_type = std::string(op);
    n.opset = static_cast<int>(g_.opset_imports[""]);
    n.inputs = std::move(inputs);
    n.outputs = {output};
    return n;
  }

  ir::Graph& g_;
  const ir::GraphIndex index_;
  const size_t values_;
  const RangeTable& ranges_;
  const QdqActivationType type_;
  QdqReport report_;
  ir::NodeNames node_names_;
  std::vector<ir::Node> constants_;
  std::map<int, std::vector<ir::Node>> after_;
  std::map<ir::ValueId, std::pair<ir::ValueId, float>> pairs_;
};

// The output-channel axis of a layer's weights.
int qdq_weight_axis(const ir::Node& n) {
  if (qdq_is_op(n, "Conv")) return 0;
  if (qdq_is_op(n, "Gemm")) return n.attrs.get_int("transB", 0) != 0 ? 0 : 1;
  return 1;  // MatMul: [K, N]
}

// Gives one INT8 layer its Q/DQ input, int8 weights and (when it can) int32 bias. The node's
// inputs are rewritten in place at index `i`.
Status qdq_layer(ir::Graph& g, size_t i, QdqWriter& w) {
  const ir::Node& node = g.nodes[i];
  if (node.inputs.size() < 2) return unsupported("it has no weight input");
  const ir::ValueId x = node.inputs[0], wv = node.inputs[1];
  const bool gemm = qdq_is_op(node, "Gemm");
  if (gemm && node.attrs.get_int("transA", 0) != 0) return unsupported("it transposes A");
  const ir::ValueId b = node.inputs.size() > 2 && (!gemm || node.attrs.get_float("beta", 1) == 1)
                            ? node.inputs[2]
                            : ir::kNoValue;
  KILN_ASSIGN_OR_RETURN(auto wq, w.weight(wv, qdq_weight_axis(node)));
  KILN_ASSIGN_OR_RETURN(auto xq, w.activation(x));
  ir::ValueId bq = ir::kNoValue;
  // int32 biases for ONNX Runtime only: TensorRT's parser refuses a DequantizeLinear of int32
  // ("only activation types allowed as input to this layer") and wants float biases.
  const bool int32_bias = w.type() == QdqActivationType::kUint8 && !qdq_is_op(node, "MatMul");
  if (b != ir::kNoValue && int32_bias) bq = w.bias(b, xq.second, wq.second);
  ir::Node& n = g.nodes[i];
  n.inputs[0] = xq.first;
  n.inputs[1] = wq.first;
  if (bq != ir::kNoValue) n.inputs[2] = bq;
  return Status::ok();
}

// The residual input of an Add fused into an INT8 convolution: the input no node of that fused
// layer produces.
void qdq_residual(ir::Graph& g, size_t i, const std::set<std::string>& layer, QdqWriter& w) {
  for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k) {
    const ir::ValueId v = g.nodes[i].inputs[k];
    const int producer = w.index().producer(v);
    if (g.value(v).constant()) continue;
    if (producer >= 0 && layer.count(g.nodes[static_cast<size_t>(producer)].name)) {
      // The convolution's own output: ONNX Runtime's DQ -> Conv -> Q group closes on a pair here
      // (uint8 files; kiln drops it and TensorRT wants none). Calibrations that lack its range
      // leave it float.
      if (w.type() != QdqActivationType::kUint8) continue;
      Result<std::pair<ir::ValueId, float>> q = w.activation(v);
      if (q.is_ok()) g.nodes[i].inputs[k] = q->first;
      continue;
    }
    Result<std::pair<ir::ValueId, float>> q = w.activation(v);
    if (!q.is_ok()) {
      w.report().log.push_back(fmt::format("warning: residual '{}' of '{}' stays float: {}",
                                           g.value(v).name, g.nodes[i].name, q.status().message()));
      continue;
    }
    g.nodes[i].inputs[k] = q->first;
    ++w.report().residual_inputs;
  }
}

// ONNX Runtime's form: a pair on each INT8 layer's output, read by every reader of that output.
void qdq_outputs(ir::Graph& g, const QdqPlacement& placement, QdqWriter& w) {
  const size_t values = w.original_values();
  for (size_t v = 0; v < values; ++v) {
    const auto id = static_cast<ir::ValueId>(v);
    const ir::Value& value = g.value(id);
    if (value.is_graph_output || !placement.int8_outputs.count(value.name)) continue;
    if (w.index().uses(id).empty()) continue;
    Result<std::pair<ir::ValueId, float>> q = w.activation(id);
    if (!q.is_ok()) {
      w.report().log.push_back(
          fmt::format("warning: output '{}' stays float: {}", value.name, q.status().message()));
      continue;
    }
    for (const ir::Use& use : w.index().uses(id)) {
      g.nodes[static_cast<size_t>(use.node)].inputs[static_cast<size_t>(use.input)] = q->first;
    }
  }
}

}  // namespace

Result<QdqActivationType> parse_qdq_activation_type(std::string_view text) {
  if (text == "int8") return QdqActivationType::kInt8;
  if (text == "uint8") return QdqActivationType::kUint8;
  return invalid_argument("unknown activation type '{}' (int8 or uint8)", text);
}

QdqPlacement qdq_placement(const ir::Graph& quantized) {
  QdqPlacement p;
  for (const ir::Node& n : quantized.nodes) {
    if (n.domain != "kiln" || (n.op_type != "QConv" && n.op_type != "QGemm")) continue;
    const std::vector<std::string> origins = n.origins();
    p.int8_layers.insert(origins.begin(), origins.end());
    p.int8_outputs.insert(quantized.value(n.outputs[0]).name);
    if (n.op_type != "QConv") continue;
    // Which origin is the Add is only known in the unfused graph: every origin is a candidate.
    for (const std::string& o : origins) p.residual_adds[o] = {origins.begin(), origins.end()};
  }
  return p;
}

Result<QdqReport> insert_qdq(ir::Graph& g, const QdqPlacement& placement, const RangeTable& ranges,
                             QdqActivationType type) {
  const auto opset = g.opset_imports.find("");
  if (opset == g.opset_imports.end() || opset->second < 13) {
    return unsupported(
        "the model imports ai.onnx opset {}; per-channel DequantizeLinear needs opset 13 or newer "
        "(convert the model first)",
        opset == g.opset_imports.end() ? 0 : opset->second);
  }
  QdqWriter w(g, ranges, type);
  const size_t count = g.nodes.size();
  for (size_t i = 0; i < count; ++i) {
    const ir::Node& n = g.nodes[i];
    const bool layer = qdq_is_op(n, "Conv") || qdq_is_op(n, "Gemm") || qdq_is_op(n, "MatMul");
    if (layer && placement.int8_layers.count(n.name)) {
      const std::string name = n.name, op = n.op_type;
      Status st = qdq_layer(g, i, w);
      if (!st.is_ok()) {
        w.report().log.push_back(
            fmt::format("warning: layer '{}' ({}) stays float: {}", name, op, st.message()));
        continue;
      }
      ++w.report().layers;
      continue;
    }
    auto add = placement.residual_adds.find(n.name);
    if (qdq_is_op(n, "Add") && add != placement.residual_adds.end()) {
      qdq_residual(g, i, add->second, w);
    }
  }
  if (type == QdqActivationType::kUint8) qdq_outputs(g, placement, w);
  w.splice();
  QdqReport report = std::move(w.report());
  ir::compact_values(g);
  KILN_RETURN_IF_ERROR(g.verify().with_context("after inserting Q/DQ"));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(g).with_context("after inserting Q/DQ"));
  report.log.push_back(fmt::format(
      "qdq: {} layers with int8 weights, {} activation Q/DQ pairs, {} residual Add inputs behind "
      "one, {} int32 biases",
      report.layers, report.activation_pairs, report.residual_inputs, report.int32_biases));
  return report;
}

}  // namespace kiln::quant
