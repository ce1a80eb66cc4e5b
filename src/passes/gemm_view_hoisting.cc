#include "passes/gemm_view_hoisting.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace gemm_view_hoisting {
namespace {

constexpr std::string_view kName = "gemm_view_hoisting";

// The GEMM producing `y` when its rows can be regrouped through A; else -1.
int hoistable_gemm(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId y) {
  const int p = index.producer(y);
  if (p < 0 || !index.has_single_reader(y)) return -1;
  const ir::Node& g = graph.nodes[static_cast<size_t>(p)];
  const bool gemm =
      is_onnx_op(g, "Gemm") || (is_kiln_op(g, "FusedGemm") && ops::residual_input(g) < 0);
  if (!gemm || g.outputs.size() != 1 || g.attrs.get_int("transA", 0) != 0) return -1;
  const ir::TensorDesc& a = graph.value(g.inputs[0]).desc;
  if (!a.has_rank() || a.rank() < 2 || !a.dim(a.rank() - 1).is_known()) return -1;
  return c_is_one_row(graph, g) ? p : -1;
}

// The Reshape's constant target when it keeps the last dim (N) and has no 0; else nullopt.
std::optional<std::vector<int64_t>> row_regrouping(const ir::Graph& graph,
                                                   const ir::GraphIndex& index,
                                                   const ir::Node& reshape, const ir::Node& gemm) {
  if (reshape.inputs.size() != 2) return std::nullopt;
  const Tensor* shape = constant_tensor(graph, index, reshape.inputs[1]);
  if (shape == nullptr || !dtype_is_integer(shape->dtype()) || shape->rank() != 1) {
    return std::nullopt;
  }
  std::vector<int64_t> dims = shape->to_int64_vector();
  const ir::TensorDesc& y = graph.value(gemm.outputs[0]).desc;
  if (dims.size() < 2 || !y.has_rank() || !y.dim(y.rank() - 1).is_known() ||
      dims.back() != y.dim(y.rank() - 1).value) {
    return std::nullopt;
  }
  for (int64_t d : dims) {
    if (d == 0) return std::nullopt;
  }
  return dims;
}

bool hoist(ir::Graph& graph, const ir::GraphIndex& index, size_t r, PassContext& ctx) {
  const ir::Node& reshape = graph.nodes[r];
  if (!is_onnx_op(reshape, "Reshape") || reshape.outputs.size() != 1) return false;
  const int g = hoistable_gemm(graph, index, reshape.inputs[0]);
  if (g < 0) return false;
  const std::optional<std::vector<int64_t>> dims =
      row_regrouping(graph, index, reshape, graph.nodes[static_cast<size_t>(g)]);
  if (!dims) return false;

  const ir::ValueId a = graph.nodes[static_cast<size_t>(g)].inputs[0];
  // Read before the graph grows (adding values may move them).
  const DType a_dtype = graph.value(a).desc.dtype;
  const int64_t k = graph.value(a).desc.shape->back().value;
  std::vector<int64_t> a_dims = *dims;
  a_dims.back() = k;
  ir::TensorDesc rows = graph.value(reshape.outputs[0]).desc;
  rows.dtype = a_dtype;
  if (rows.has_rank()) (*rows.shape).back() = ir::Dim::known(k);

  ir::Node view;
  view.name = reshape.name;
  view.op_type = "Reshape";
  view.opset = reshape.opset;
  view.inputs = {a, ir::add_constant(graph, reshape.name + "_rows",
                                     Tensor::from_vector<int64_t>(
                                         {static_cast<int64_t>(a_dims.size())}, a_dims))};
  view.outputs = {
      graph.add_value(ir::unique_value_name(graph, graph.value(a).name + "_rows"), rows)};
  const ir::ValueId out = reshape.outputs[0];
  ir::Node fused = as_fused_gemm(graph.nodes[static_cast<size_t>(g)]);
  fused.opset = ops::kKilnOpset;
  fused.inputs[0] = view.outputs[0];
  fused.outputs = {out};
  ctx.log.add(kName, fmt::format("{} reads A as [{}] and writes {}'s shape (the Reshape moved "
                                 "before it)",
                                 fused.name, fmt::join(a_dims, ", "), reshape.name));
  graph.opset_imports.try_emplace(std::string(ops::kKilnDomain), ops::kKilnOpset);
  graph.nodes[static_cast<size_t>(g)] = std::move(fused);
  graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(r));
  graph.nodes.insert(graph.nodes.begin() + g, std::move(view));
  return true;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  ir::GraphIndex index(graph);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (hoist(graph, index, n, ctx)) index = ir::GraphIndex(graph);
  }
  return Status::ok();
}

}  // namespace
}  // namespace gemm_view_hoisting

const PassDef& gemm_view_hoisting_pass() {
  static const PassDef def{
      gemm_view_hoisting::kName,
      "Reshape(Gemm(A)) that regroups rows -> FusedGemm(Reshape(A)), ahead of a residual",
      gemm_view_hoisting::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
