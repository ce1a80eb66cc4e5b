#include "quant/qdq_extract.h"

#include <fmt/format.h>

#include "ir/graph_edit.h"
#include "ops/evaluate.h"
#include "ops/infer_graph.h"

namespace kiln::quant {
namespace {

bool is_onnx(const ir::Node& n, std::string_view op) { return n.domain.empty() && n.op_type == op; }

// The node's constant inputs (nullptr for an absent one); nullopt when one is not constant.
std::optional<std::vector<const Tensor*>> constant_inputs(const ir::Graph& g, const ir::Node& n) {
  std::vector<const Tensor*> values;
  for (ir::ValueId v : n.inputs) {
    if (v == ir::kNoValue) {
      values.push_back(nullptr);
      continue;
    }
    const Tensor* t = g.value(v).constant();
    if (!t) return std::nullopt;
    values.push_back(t);
  }
  return values;
}

// Runs a node whose inputs are all constant with its reference kernel; its output becomes an
// initializer of the same name.
Status fold_node(ir::Graph& g, const ir::Node& n, const std::vector<const Tensor*>& values) {
  const ops::ResolvedOp op = ops::resolve_op(n);
  KILN_ASSIGN_OR_RETURN(ops::NodeInference inf, ops::infer_node_on_values(n, op, values));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> out, ops::run_node_kernel(n, op, values, inf.outputs));
  ir::Value& v = g.value(n.outputs[0]);
  v.desc = ir::TensorDesc::of_dims(out[0].dtype(), out[0].dims());
  v.initializer = std::move(out[0]);
  return Status::ok();
}

// DequantizeLinear's axis, normalized against its input's rank.
int dq_axis(const ir::Node& dq, int rank) {
  const int64_t axis = dq.attrs.get_int("axis", 1);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

// A per-tensor Q or DQ's (scale, zero point) as a uint8 encoding; nullopt for other forms.
std::optional<Uint8Encoding> per_tensor_encoding(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() < 2) return std::nullopt;
  const Tensor* scale = g.value(n.inputs[1]).constant();
  const Tensor* zero = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue
                           ? g.value(n.inputs[2]).constant()
                           : nullptr;
  if (!scale || scale->numel() != 1 || scale->dtype() != DType::kF32) return std::nullopt;
  if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue && (!zero || zero->numel() != 1)) {
    return std::nullopt;
  }
  const DType zt = zero ? zero->dtype() : DType::kU8;
  if (zt != DType::kU8 && zt != DType::kI8) return std::nullopt;
  const int32_t z = zero ? static_cast<int32_t>(zero->value_as_int(0)) : 0;
  return Uint8Encoding{scale->data<float>()[0], zt == DType::kI8 ? z + 128 : z};
}

bool same_encoding(const std::optional<Uint8Encoding>& a, const std::optional<Uint8Encoding>& b) {
  return a && b && a->scale == b->scale && a->zero_point == b->zero_point;
}

struct Extractor {
  ir::Graph& g;
  RangeTable& table;
  std::vector<std::string>& log;
  QdqSummary summary;
  std::vector<bool> dead;

  // DQ of a constant: a float constant; int8 weights keep their scales.
  Status fold_dequantize(size_t n, const std::vector<const Tensor*>& values) {
    const ir::Node node = g.nodes[n];
    KILN_RETURN_IF_ERROR(fold_node(g, node, values));
    if (values[0]->dtype() == DType::kI8 && values[1]->dtype() == DType::kF32) {
      table.add_weight_scales(g.value(node.outputs[0]).name,
                              WeightScales{*values[1], dq_axis(node, values[0]->rank())});
    }
    dead[n] = true;
    ++summary.constants;
    return Status::ok();
  }

  // Q -> DQ on an activation: readers of the DQ read the Q's input.
  void remove_pair(size_t dq_index, const ir::Node& q) {
    const ir::Node& dq = g.nodes[dq_index];
    const ir::ValueId x = q.inputs[0];
    const std::optional<Uint8Encoding> e = per_tensor_encoding(g, q);
    if (g.value(dq.outputs[0]).is_graph_output || g.value(x).desc.dtype != DType::kF32 ||
        !same_encoding(e, per_tensor_encoding(g, dq))) {
      log.push_back(
          fmt::format("explicit quantization: '{}' -> '{}' stay as they are (not a "
                      "per-tensor pair on a float32 tensor)",
                      q.name, dq.name));
      return;
    }
    if (!table.add_encoding(g.value(x).name, *e)) {
      log.push_back(
          fmt::format("warning: explicit quantization: '{}' is quantized twice; the "
                      "first scale is kept",
                      g.value(x).name));
    }
    ir::replace_uses(g, dq.outputs[0], x);
    dead[dq_index] = true;
    ++summary.activation_pairs;
  }

  Status visit(size_t n, const ir::GraphIndex& index) {
    const ir::Node& node = g.nodes[n];
    const bool q = is_onnx(node, "QuantizeLinear"), dq = is_onnx(node, "DequantizeLinear");
    if (!q && !dq) return Status::ok();
    if (auto values = constant_inputs(g, node)) {
      if (dq) return fold_dequantize(n, *values);
      KILN_RETURN_IF_ERROR(fold_node(g, node, *values));  // its DQ then folds as a constant
      dead[n] = true;
      return Status::ok();
    }
    const int producer = index.producer(node.inputs[0]);
    if (dq && producer >= 0 && is_onnx(g.nodes[static_cast<size_t>(producer)], "QuantizeLinear")) {
      remove_pair(n, g.nodes[static_cast<size_t>(producer)]);
    }
    return Status::ok();
  }
};

}  // namespace

bool has_qdq(const ir::Graph& graph) {
  for (const ir::Node& n : graph.nodes) {
    if (is_onnx(n, "QuantizeLinear") || is_onnx(n, "DequantizeLinear")) return true;
  }
  return false;
}

Result<QdqSummary> extract_qdq(ir::Graph& graph, RangeTable& table, std::vector<std::string>& log) {
  Extractor x{graph, table, log, {}, std::vector<bool>(graph.nodes.size(), false)};
  const ir::GraphIndex index(graph);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    Status st = x.visit(n, index);
    if (!st.is_ok()) return st.with_context(fmt::format("node '{}'", graph.nodes[n].name));
  }
  ir::remove_nodes(graph, x.dead);
  ir::remove_dead_nodes(graph);
  ir::compact_values(graph);
  for (const ir::Node& n : graph.nodes) {
    x.summary.left += is_onnx(n, "QuantizeLinear") || is_onnx(n, "DequantizeLinear");
  }
  KILN_RETURN_IF_ERROR(graph.verify().with_context("after extracting Q/DQ"));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(graph).with_context("after extracting Q/DQ"));
  return x.summary;
}

}  // namespace kiln::quant
