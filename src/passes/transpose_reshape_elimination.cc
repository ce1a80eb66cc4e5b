#include "passes/transpose_reshape_elimination.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>

#include "ir/graph_edit.h"
#include "ops/infer_graph.h"
#include "passes/bypass.h"

namespace kiln::passes {
namespace transpose_reshape_elimination {
namespace {

constexpr std::string_view kName = "transpose_reshape_elimination";

using Perm = std::vector<int64_t>;

bool is_onnx_op(const ir::Node& node, std::string_view op_type) {
  return node.domain.empty() && node.op_type == op_type && !node.inputs.empty() &&
         node.inputs[0] != ir::kNoValue && !node.outputs.empty() && node.outputs[0] != ir::kNoValue;
}

// Ops whose output is their input's data in the same order, with another shape.
bool is_view_op(const ir::Node& node) {
  return is_onnx_op(node, "Reshape") || is_onnx_op(node, "Flatten") ||
         is_onnx_op(node, "Squeeze") || is_onnx_op(node, "Unsqueeze");
}

// The Transpose's perm (absent: reversed dims, which needs the input's rank); nullopt when unknown
// or not a permutation.
std::optional<Perm> perm_of(const ir::Graph& graph, const ir::Node& t) {
  const int rank = graph.value(t.inputs[0]).desc.rank();
  Perm perm;
  if (t.attrs.has("perm")) {
    perm = t.attrs.get_ints("perm");
  } else {
    if (rank < 0) return std::nullopt;
    for (int64_t i = rank; i-- > 0;) perm.push_back(i);
  }
  Perm sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != static_cast<int64_t>(i)) return std::nullopt;
  }
  if (rank >= 0 && static_cast<int>(perm.size()) != rank) return std::nullopt;
  return perm;
}

bool is_identity(const Perm& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Same rank and every dim the same known number or the same named symbol (one symbol is one
// value throughout the graph).
bool same_shape(const ir::TensorDesc& a, const ir::TensorDesc& b) {
  if (!a.has_rank() || a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    const ir::Dim& x = a.dim(i);
    const ir::Dim& y = b.dim(i);
    const bool same = x.is_known() ? x.value == y.value : !x.symbol.empty() && x.symbol == y.symbol;
    if (!same) return false;
  }
  return true;
}

void erase_nodes(ir::Graph& graph, std::vector<size_t> indices) {
  std::vector<bool> dead(graph.nodes.size(), false);
  for (size_t i : indices) dead[i] = true;
  ir::remove_nodes(graph, dead);
}

// A Transpose with the identity perm, or a view op whose output shape is its input's.
bool remove_noop(ir::Graph& graph, size_t n, PassContext& ctx) {
  const ir::Node& node = graph.nodes[n];
  std::string why;
  if (is_onnx_op(node, "Transpose")) {
    const std::optional<Perm> perm = perm_of(graph, node);
    if (!perm || !is_identity(*perm)) return false;
    why = fmt::format("Transpose with the identity perm [{}]", fmt::join(*perm, ", "));
  } else if (is_view_op(node)) {
    const ir::TensorDesc& in = graph.value(node.inputs[0]).desc;
    if (!same_shape(in, graph.value(node.outputs[0]).desc)) return false;
    why = fmt::format("{} to its input's shape {}", node.op_type, in.to_string());
  } else {
    return false;
  }
  if (!can_bypass(graph, node.inputs[0], node.outputs[0])) return false;
  ctx.log.add(kName, fmt::format("removed {} ({})", join_origins(node.origins()), why));
  bypass(graph, node.inputs[0], node.outputs[0]);
  erase_nodes(graph, {n});
  return true;
}

// A Transpose that moves only dims of size 1 (PyTorch's [1, seq, d] <-> [seq, 1, d] around
// nn.MultiheadAttention, with a batch of 1) keeps the elements in order: it becomes a Reshape to
// its output shape, which the rule above merges or the engine runs as a view.
bool transpose_to_reshape(ir::Graph& graph, size_t n, PassContext& ctx) {
  const ir::Node& node = graph.nodes[n];
  if (!is_onnx_op(node, "Transpose") || node.opset < 5) return false;  // Reshape's shape input: 5
  const ir::TensorDesc& in = graph.value(node.inputs[0]).desc;
  const ir::TensorDesc& out = graph.value(node.outputs[0]).desc;
  const std::optional<Perm> perm = perm_of(graph, node);
  if (!perm || is_identity(*perm) || !in.is_static() || !out.is_static()) return false;
  const Dims dims = in.static_dims();
  int64_t last = -1;
  for (int64_t from : *perm) {
    if (dims[static_cast<size_t>(from)] == 1) continue;
    if (from < last) return false;
    last = from;
  }
  const Dims to = out.static_dims();
  ctx.log.add(kName,
              fmt::format("{} with perm [{}] on {} moves only dims of size 1: a Reshape",
                          join_origins(node.origins()), fmt::join(*perm, ", "), in.to_string()));
  const ir::ValueId shape =
      ir::add_constant(graph, node.name + "_shape",
                       Tensor::from_vector<int64_t>({static_cast<int64_t>(to.size())}, to));
  ir::Node& reshape = graph.nodes[n];
  reshape.op_type = "Reshape";
  reshape.attrs = ir::Attributes();
  reshape.inputs.push_back(shape);
  return true;
}

// Transpose(p1) -> Transpose(p2) at `n`: out[j] = x[p1[p2[j]]].
bool merge_transposes(ir::Graph& graph, const ir::GraphIndex& index, size_t n, PassContext& ctx) {
  const ir::Node& second = graph.nodes[n];
  if (!is_onnx_op(second, "Transpose")) return false;
  const int p = index.producer(second.inputs[0]);
  if (p < 0 || !is_onnx_op(graph.nodes[static_cast<size_t>(p)], "Transpose")) return false;
  const ir::Node& first = graph.nodes[static_cast<size_t>(p)];
  const std::optional<Perm> p1 = perm_of(graph, first);
  const std::optional<Perm> p2 = perm_of(graph, second);
  if (!p1 || !p2 || p1->size() != p2->size()) return false;
  Perm composed;
  for (int64_t j : *p2) composed.push_back((*p1)[static_cast<size_t>(j)]);
  const ir::ValueId x = first.inputs[0];
  const bool first_only_feeds_second = index.has_single_reader(first.outputs[0]);
  const std::string names = join_origins(first.origins()) + " + " + join_origins(second.origins());
  if (is_identity(composed)) {
    // The second Transpose undoes the first: its readers read x. The first stays for its other
    // readers, if any.
    if (!can_bypass(graph, x, second.outputs[0])) return false;
    ctx.log.add(kName, fmt::format("removed {} (perms [{}] and [{}] cancel)", names,
                                   fmt::join(*p1, ", "), fmt::join(*p2, ", ")));
    bypass(graph, x, second.outputs[0]);
    if (first_only_feeds_second) {
      erase_nodes(graph, {static_cast<size_t>(p), n});
    } else {
      erase_nodes(graph, {n});
    }
    return true;
  }
  if (!first_only_feeds_second) return false;
  ir::Node& merged = graph.nodes[n];
  ctx.log.add(kName, fmt::format("merged {} into Transpose '{}' (perm [{}])", names, merged.name,
                                 fmt::join(composed, ", ")));
  merged.inputs[0] = x;
  merged.attrs.set("perm", composed);
  ir::add_origins(merged, first, /*from_runs_first=*/true);
  erase_nodes(graph, {static_cast<size_t>(p)});
  return true;
}

// A view op -> Reshape(constant shape) at `n`: the Reshape's result depends only on the element
// count, unless its shape has a 0 that copies a dim of the intermediate (allowzero = 0).
bool merge_reshapes(ir::Graph& graph, const ir::GraphIndex& index, size_t n, PassContext& ctx) {
  const ir::Node& second = graph.nodes[n];
  if (!is_onnx_op(second, "Reshape") || second.inputs.size() < 2 ||
      second.inputs[1] == ir::kNoValue) {
    return false;
  }
  const Tensor* shape = graph.value(second.inputs[1]).constant();
  if (shape == nullptr || !dtype_is_integer(shape->dtype())) return false;
  const std::vector<int64_t> dims = shape->to_int64_vector();
  const bool allowzero =
      ops::resolve_op(second).since_version >= 14 && second.attrs.get_int("allowzero", 0) != 0;
  if (!allowzero && std::find(dims.begin(), dims.end(), 0) != dims.end()) return false;
  const int p = index.producer(second.inputs[0]);
  if (p < 0 || !is_view_op(graph.nodes[static_cast<size_t>(p)]) ||
      !index.has_single_reader(second.inputs[0])) {
    return false;
  }
  const ir::Node& first = graph.nodes[static_cast<size_t>(p)];
  ir::Node& merged = graph.nodes[n];
  ctx.log.add(kName, fmt::format("merged {} + {} into Reshape '{}' (shape [{}])",
                                 join_origins(first.origins()), join_origins(merged.origins()),
                                 merged.name, fmt::join(dims, ", ")));
  merged.inputs[0] = first.inputs[0];
  ir::add_origins(merged, first, /*from_runs_first=*/true);
  erase_nodes(graph, {static_cast<size_t>(p)});
  return true;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  ir::GraphIndex index(graph);
  size_t n = 0;
  while (n < graph.nodes.size()) {
    if (!remove_noop(graph, n, ctx) && !merge_transposes(graph, index, n, ctx) &&
        !transpose_to_reshape(graph, n, ctx) && !merge_reshapes(graph, index, n, ctx)) {
      ++n;
      continue;
    }
    // A rewrite changes readers and producers anywhere (a removed reader can leave an earlier
    // intermediate with a single one): re-index and start over. Every rewrite removes a node or
    // turns a Transpose into a Reshape, so the loop ends.
    index = ir::GraphIndex(graph);
    n = 0;
  }
  return Status::ok();
}

}  // namespace
}  // namespace transpose_reshape_elimination

const PassDef& transpose_reshape_elimination_pass() {
  static const PassDef def{
      transpose_reshape_elimination::kName,
      "removes no-op Transposes and Reshapes and merges Transpose and Reshape chains",
      transpose_reshape_elimination::run};
  return def;
}

}  // namespace kiln::passes
