#include "passes/fusion_util.h"

#include <algorithm>
#include <cassert>

#include "ops/kiln_fused.h"
#include "passes/activation_match.h"

namespace kiln::passes {

const Tensor* constant_tensor(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v) {
  if (v == ir::kNoValue) return nullptr;
  if (const Tensor* t = graph.value(v).constant()) return t;
  const int p = index.producer(v);
  if (p < 0) return nullptr;
  const ir::Node& node = graph.nodes[static_cast<size_t>(p)];
  if (!is_onnx_op(node, "Constant")) return nullptr;
  return node.attrs.get_tensor("value");
}

bool same_shape(const ir::TensorDesc& a, const ir::TensorDesc& b) {
  if (a.dtype != b.dtype || !a.has_rank() || !b.has_rank() || a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    if (!same_dim(a.dim(i), b.dim(i))) return false;
  }
  return true;
}

bool is_onnx_op(const ir::Node& node, std::string_view op_type) {
  return node.domain.empty() && node.op_type == op_type;
}

bool is_kiln_op(const ir::Node& node, std::string_view op_type) {
  return node.domain == ops::kKilnDomain && node.op_type == op_type;
}

bool is_fusable_dtype(DType t) { return t == DType::kF32 || t == DType::kF16; }

namespace {

ir::Node as_kiln_op(const ir::Node& node, std::string_view op_type) {
  ir::Node fused = node;
  fused.op_type = std::string(op_type);
  fused.domain = std::string(ops::kKilnDomain);
  fused.opset = ops::kKilnOpset;
  return fused;
}

}  // namespace

ir::Node as_fused_conv(const ir::Node& conv) { return as_kiln_op(conv, "FusedConv"); }

ir::Node as_fused_gemm(const ir::Node& gemm) {
  ir::Node fused = as_kiln_op(gemm, "FusedGemm");
  fused.attrs.erase("broadcast");
  return fused;
}

bool c_is_one_row(const ir::Graph& graph, const ir::Node& gemm) {
  if (gemm.inputs.size() < 3 || gemm.inputs[2] == ir::kNoValue) return true;
  const ir::TensorDesc& c = graph.value(gemm.inputs[2]).desc;
  return c.has_rank() &&
         (c.rank() <= 1 || (c.rank() == 2 && same_dim(c.dim(0), ir::Dim::known(1))));
}

std::optional<Fusion> find_residual_fusion(const ir::Graph& graph, const ir::GraphIndex& index,
                                           int n,
                                           bool (*takes_residual)(const ir::Graph&,
                                                                  const ir::Node&),
                                           ir::Node (*as_fused)(const ir::Node&), size_t z_input) {
  const ir::Node& add = graph.nodes[static_cast<size_t>(n)];
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1) {
    return std::nullopt;
  }
  int target = -1;
  size_t target_input = 0;
  for (const size_t i : {size_t{0}, size_t{1}}) {
    const ir::ValueId y = add.inputs[i];
    const ir::ValueId other = add.inputs[1 - i];
    const int p = index.producer(y);
    if (p < 0 || !index.has_single_reader(y) || other == ir::kNoValue) continue;
    const ir::Node& producer = graph.nodes[static_cast<size_t>(p)];
    if (producer.outputs.size() != 1 || !is_fusable_dtype(graph.value(y).desc.dtype) ||
        !takes_residual(graph, producer) ||
        !same_shape(graph.value(y).desc, graph.value(other).desc)) {
      continue;
    }
    if (p > target) {
      target = p;
      target_input = i;
    }
  }
  if (target < 0) return std::nullopt;
  Fusion f{{target, n}, as_fused(graph.nodes[static_cast<size_t>(target)])};
  f.fused.inputs.resize(z_input + 1, ir::kNoValue);
  f.fused.inputs[z_input] = add.inputs[1 - target_input];
  f.fused.outputs = add.outputs;
  return f;
}

namespace {

// Replaces the fusion's nodes; returns how many of the removed nodes were before `anchor`.
int apply(ir::Graph& graph, PassContext& ctx, std::string_view pass, Fusion f, int anchor) {
  std::sort(f.nodes.begin(), f.nodes.end());
  assert(!f.nodes.empty());
  std::vector<std::string> origins;
  for (int n : f.nodes) {
    for (std::string& o : graph.nodes[static_cast<size_t>(n)].origins()) {
      origins.push_back(std::move(o));
    }
  }
  ir::Node& fused = f.fused;
  fused.fused_from = origins;
  if (fused.domain == ops::kKilnDomain) {
    fused.opset = ops::kKilnOpset;
    graph.opset_imports.try_emplace(std::string(ops::kKilnDomain), ops::kKilnOpset);
  }
  const std::string qualified =
      fused.domain.empty() ? fused.op_type : fused.domain + "." + fused.op_type;
  ctx.log.fused(pass, origins, qualified, fused.name);

  const int last = f.nodes.back();
  graph.nodes[static_cast<size_t>(last)] = std::move(fused);
  std::vector<bool> dead(graph.nodes.size(), false);
  int removed_before_anchor = 0;
  for (size_t i = 0; i + 1 < f.nodes.size(); ++i) {
    dead[static_cast<size_t>(f.nodes[i])] = true;
    if (f.nodes[i] < anchor) ++removed_before_anchor;
  }
  ir::remove_nodes(graph, dead);
  return removed_before_anchor;
}

}  // namespace

int apply_fusions(ir::Graph& graph, PassContext& ctx, std::string_view pass,
                  const FindFusion& find) {
  int applied = 0;
  // After a fusion the index is rebuilt and the scan resumes at the anchor's position. Nodes passed
  // over cannot have become anchors: a fusion moves the group's reads of outside values to the
  // fused node (a reader count only drops for constants, which no pattern counts readers of).
  ir::GraphIndex index(graph);
  for (int n = 0; n < static_cast<int>(graph.nodes.size());) {
    std::optional<Fusion> f = find(graph, index, n);
    if (!f) {
      ++n;
      continue;
    }
    n -= apply(graph, ctx, pass, std::move(*f), n);
    index = ir::GraphIndex(graph);
    ++applied;
  }
  return applied;
}

std::optional<Fusion> find_activation_fusion(const ir::Graph& graph, const ir::GraphIndex& index,
                                             int n, std::string_view onnx_op,
                                             std::string_view fused_op,
                                             ir::Node (*as_fused)(const ir::Node&)) {
  const ir::Node& node = graph.nodes[static_cast<size_t>(n)];
  const bool producer =
      is_onnx_op(node, onnx_op) || (is_kiln_op(node, fused_op) && !ops::has_activation(node.attrs));
  if (!producer || node.outputs.size() != 1 ||
      !is_fusable_dtype(graph.value(node.outputs[0]).desc.dtype)) {
    return std::nullopt;
  }
  std::optional<ActivationMatch> act = match_activation(graph, index, node.outputs[0]);
  if (!act) return std::nullopt;
  Fusion f{std::move(act->nodes), as_fused(node)};
  f.nodes.push_back(n);
  ops::set_activation_attrs(f.fused.attrs, act->params);
  f.fused.outputs = {act->output};
  return f;
}

}  // namespace kiln::passes
