#include "passes/gemm_slice_split.h"

#include <fmt/format.h>

#include <cstring>
#include <iterator>
#include <optional>

#include "ops/kiln_fused.h"
#include "ops/shape_common.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace gemm_slice_split {
namespace {

constexpr std::string_view kName = "gemm_slice_split";

struct Range {
  int64_t begin = 0, end = 0;
};

// The one integer a constant 1-element int32/int64 input holds.
std::optional<int64_t> constant_int(const ir::Graph& g, const ir::GraphIndex& index,
                                    const ir::Node& n, size_t i) {
  if (i >= n.inputs.size() || n.inputs[i] == ir::kNoValue) return std::nullopt;
  const Tensor* t = constant_tensor(g, index, n.inputs[i]);
  if (t == nullptr || t->numel() != 1 || (t->dtype() != DType::kI64 && t->dtype() != DType::kI32)) {
    return std::nullopt;
  }
  return t->to_int64_vector()[0];
}

// [begin, end) of Slice `s` along the last axis of a rank-`rank` tensor `n` wide (ONNX's bounds
// rules, ops/shape_common.h), when it slices only that axis, with constant bounds and step 1, and
// keeps at least one column.
std::optional<Range> last_axis_range(const ir::Graph& g, const ir::GraphIndex& index,
                                     const ir::Node& s, int64_t rank, int64_t n) {
  if (!is_onnx_op(s, "Slice") || s.opset < 10 || s.inputs.size() < 4) return std::nullopt;
  const auto axis = constant_int(g, index, s, 3);
  if (!axis || (*axis != -1 && *axis != rank - 1)) return std::nullopt;
  if (s.inputs.size() > 4 && s.inputs[4] != ir::kNoValue && constant_int(g, index, s, 4) != 1) {
    return std::nullopt;
  }
  const auto start = constant_int(g, index, s, 1), end = constant_int(g, index, s, 2);
  if (!start || !end) return std::nullopt;
  const ops::shape_detail::AxisRange r = ops::shape_detail::clamp_range(*start, *end, 1, n);
  if (r.count == 0) return std::nullopt;
  return Range{r.start, r.start + r.count};
}

// Columns [r.begin, r.end) of a weight: B [K, N] (transB 0) or [N, K] (transB 1), or C [N] /
// [1, N].
Tensor columns(const Tensor& t, Range r, bool rows_are_columns) {
  const size_t elem = dtype_size(t.dtype());
  const int64_t width = r.end - r.begin;
  if (rows_are_columns) {  // [N, K]: rows r.begin .. r.end
    const int64_t k = t.dim(1);
    Tensor out(t.dtype(), {width, k});
    std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + r.begin * k * elem,
                static_cast<size_t>(width * k) * elem);
    return out;
  }
  const int64_t n = t.dims().back(), rows = t.numel() / n;
  Dims dims = t.dims();
  dims.back() = width;
  Tensor out(t.dtype(), dims);
  for (int64_t i = 0; i < rows; ++i) {
    std::memcpy(static_cast<char*>(out.raw_data()) + i * width * elem,
                static_cast<const char*>(t.raw_data()) + (i * n + r.begin) * elem,
                static_cast<size_t>(width) * elem);
  }
  return out;
}

struct Split {
  int gemm = -1;
  std::vector<int> slices;
  std::vector<Range> ranges;
};

// The split of node `n` when it qualifies (see the header).
std::optional<Split> find(const ir::Graph& g, const ir::GraphIndex& index, int n) {
  const ir::Node& gemm = g.nodes[static_cast<size_t>(n)];
  const bool fused = is_kiln_op(gemm, "FusedGemm") && ops::residual_input(gemm) < 0;
  if ((!fused && !is_onnx_op(gemm, "Gemm")) || gemm.outputs.size() != 1) return std::nullopt;
  const ir::ValueId y = gemm.outputs[0];
  const ir::TensorDesc& yd = g.value(y).desc;
  const Tensor* b = constant_tensor(g, index, gemm.inputs[1]);
  if (b == nullptr || b->rank() != 2 || !yd.has_rank() || g.value(y).is_graph_output ||
      !c_is_one_row(g, gemm)) {
    return std::nullopt;
  }
  const bool trans_b = gemm.attrs.get_int("transB", 0) != 0;
  const int64_t cols = trans_b ? b->dim(0) : b->dim(1);
  if (gemm.inputs.size() > 2 && gemm.inputs[2] != ir::kNoValue) {
    const Tensor* c = constant_tensor(g, index, gemm.inputs[2]);
    if (c == nullptr || (c->numel() != 1 && c->numel() != cols)) return std::nullopt;
  }
  Split split{n, {}, {}};
  for (const ir::Use& u : index.uses(y)) {
    const ir::Node& s = g.nodes[static_cast<size_t>(u.node)];
    const auto r = u.input == 0
                       ? last_axis_range(g, index, s, static_cast<int64_t>(yd.rank()), cols)
                       : std::nullopt;
    if (!r) return std::nullopt;
    split.slices.push_back(u.node);
    split.ranges.push_back(*r);
  }
  if (split.slices.empty()) return std::nullopt;
  return split;
}

// The GEMMs that replace `split`, in the Slices' order.
std::vector<ir::Node> parts(ir::Graph& g, const ir::GraphIndex& index, const Split& split) {
  const ir::Node& gemm = g.nodes[static_cast<size_t>(split.gemm)];
  const bool trans_b = gemm.attrs.get_int("transB", 0) != 0;
  // Copies: add_constant below adds values, which may move the initializers B and C live in.
  const Tensor b = *constant_tensor(g, index, gemm.inputs[1]);
  const bool has_c = gemm.inputs.size() > 2 && gemm.inputs[2] != ir::kNoValue;
  const std::optional<Tensor> c =
      has_c ? std::optional<Tensor>(*constant_tensor(g, index, gemm.inputs[2])) : std::nullopt;
  std::vector<ir::Node> out;
  for (size_t j = 0; j < split.slices.size(); ++j) {
    const ir::Node& slice = g.nodes[static_cast<size_t>(split.slices[j])];
    const Range r = split.ranges[j];
    ir::Node part = as_fused_gemm(gemm);
    part.name = fmt::format("{}.cols{}_{}", gemm.name, r.begin, r.end);
    part.opset = ops::kKilnOpset;
    part.inputs[1] = ir::add_constant(g, part.name + "_B", columns(b, r, trans_b));
    if (c && c->numel() != 1) {
      part.inputs[2] = ir::add_constant(g, part.name + "_C", columns(*c, r, false));
    }
    part.outputs = slice.outputs;
    part.fused_from = gemm.origins();
    ir::add_origins(part, slice, false);
    out.push_back(std::move(part));
  }
  return out;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  std::optional<ir::GraphIndex> index;  // rebuilt only after a split changed the graph
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    if (!is_onnx_op(node, "Gemm") && !is_kiln_op(node, "FusedGemm")) continue;
    if (!index) index.emplace(graph);
    const std::optional<Split> split = find(graph, *index, static_cast<int>(n));
    if (!split) continue;
    std::vector<ir::Node> gemms = parts(graph, *index, *split);
    index.reset();
    for (const ir::Node& part : gemms) {
      ctx.log.fused(kName, part.fused_from, "kiln.FusedGemm", part.name);
    }
    std::vector<bool> dead(graph.nodes.size(), false);
    for (int s : split->slices) dead[static_cast<size_t>(s)] = true;
    ir::remove_nodes(graph, dead);  // every Slice comes after the GEMM: n stays its index
    graph.nodes[n] = std::move(gemms[0]);
    graph.nodes.insert(graph.nodes.begin() + static_cast<std::ptrdiff_t>(n) + 1,
                       std::make_move_iterator(gemms.begin() + 1),
                       std::make_move_iterator(gemms.end()));
    graph.opset_imports.try_emplace(std::string(ops::kKilnDomain), ops::kKilnOpset);
    n += gemms.size() - 1;
  }
  return Status::ok();
}

}  // namespace
}  // namespace gemm_slice_split

const PassDef& gemm_slice_split_pass() {
  static const PassDef def{
      gemm_slice_split::kName,
      "Slices of a GEMM's last axis -> one FusedGemm per Slice over its columns",
      gemm_slice_split::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
