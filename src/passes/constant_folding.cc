#include "passes/constant_folding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <optional>

#include "ir/graph_edit.h"
#include "ops/evaluate.h"

namespace kiln::passes {

bool is_nondeterministic(const ir::Node& node) {
  static constexpr std::array<std::string_view, 6> kRandomOps = {
      "RandomNormal",      "RandomNormalLike", "RandomUniform",
      "RandomUniformLike", "Multinomial",      "Bernoulli"};
  return std::find(kRandomOps.begin(), kRandomOps.end(), node.op_type) != kRandomOps.end();
}

namespace constant_folding {
namespace {

// A QDQ model's quantized weights (DequantizeLinear of int8 constants, or Q -> DQ of float ones)
// are the qdq_extraction pass's: folding them here would lose their scales.
bool is_quantize_dequantize(const ir::Node& node) {
  return node.domain.empty() &&
         (node.op_type == "QuantizeLinear" || node.op_type == "DequantizeLinear");
}

constexpr std::string_view kName = "constant_folding";

// Folding stores a node's result in the engine instead of computing it at run time.
// ConstantOfShape, Expand, Tile, Range, EyeLike or OneHot turn a few bytes into megabytes: stored,
// they would bloat the engine file, its load time and its memory, while computing them at run time
// costs about a memset. So a result above kAlwaysFoldBytes is stored only when it is at most
// kMaxGrowth times the size of the constants it is computed from (a Transpose or a float16 ->
// float32 Cast of a weight, arithmetic on weights). A Constant node's output is its attribute,
// already part of the model.
constexpr uint64_t kAlwaysFoldBytes = 64 * 1024;
constexpr uint64_t kMaxGrowth = 2;

// Stand-ins for the unknown dims of a Shape's input, distinct per axis, so that a Gather/Slice
// result holding one picked an unknown dim. Real dims are smaller (a tensor's size is capped at
// 64 GiB); one this large, possible only in an empty tensor, would merely prevent the fold.
constexpr int64_t kUnknownDimBase = int64_t{1} << 62;

using Outputs = std::vector<Tensor>;

uint64_t bytes_of(const std::vector<const Tensor*>& tensors) {
  uint64_t n = 0;
  for (const Tensor* t : tensors) n += t != nullptr ? t->nbytes() : 0;
  return n;
}

uint64_t bytes_of(const Outputs& tensors) {
  uint64_t n = 0;
  for (const Tensor& t : tensors) n += t.defined() ? t.nbytes() : 0;
  return n;
}

bool worth_storing(const ir::Node& node, uint64_t in_bytes, uint64_t out_bytes) {
  return node.op_type == "Constant" ||
         out_bytes <= std::max(kAlwaysFoldBytes, kMaxGrowth * in_bytes);
}

// The node's constant inputs (nullptr for an absent or non-constant one).
std::vector<const Tensor*> constant_inputs(const ir::Graph& graph, const ir::Node& node) {
  std::vector<const Tensor*> values;
  for (ir::ValueId v : node.inputs) {
    values.push_back(v == ir::kNoValue ? nullptr : graph.value(v).constant());
  }
  return values;
}

// True when every present input from `first` on has a value.
bool all_known(const ir::Node& node, const std::vector<const Tensor*>& values, size_t first) {
  for (size_t i = first; i < node.inputs.size(); ++i) {
    if (node.inputs[i] != ir::kNoValue && values[i] == nullptr) return false;
  }
  return true;
}

// Runs the node on known input values; nullopt when it fails or the result is not worth storing.
std::optional<Outputs> evaluate(const ir::Node& node, const ops::ResolvedOp& op,
                                const std::vector<const Tensor*>& inputs) {
  Result<ops::NodeInference> inf = ops::infer_node_on_values(node, op, inputs);
  if (!inf.is_ok()) return std::nullopt;
  // Check the size before computing anything when shape inference knows it; the outputs of
  // data-dependent ops (NonZero, Unique, ...) are checked once computed. Each tensor is capped at
  // 64 GiB by check_dims, so the sums cannot overflow.
  const uint64_t in_bytes = bytes_of(inputs);
  uint64_t planned = 0;
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const ir::TensorDesc& d = inf->outputs[i];
    if (node.outputs[i] == ir::kNoValue || !d.is_static()) continue;
    if (!check_dims(d.static_dims(), d.dtype, "folded value").is_ok()) return std::nullopt;
    planned += static_cast<uint64_t>(dims_numel(d.static_dims())) * dtype_size(d.dtype);
  }
  if (!worth_storing(node, in_bytes, planned)) return std::nullopt;
  Result<Outputs> out = ops::run_node_kernel(node, op, inputs, inf->outputs);
  if (!out.is_ok() || !worth_storing(node, in_bytes, bytes_of(*out))) return std::nullopt;
  return std::move(out).value();
}

// Shape and Size of a tensor with a static shape: shape inference knows their values.
std::optional<Outputs> values_from_descs(const ir::Graph& graph, const ir::Node& node,
                                         const ops::ResolvedOp& op,
                                         const std::vector<const Tensor*>& values) {
  static const ir::TensorDesc kAbsent;
  std::vector<const ir::TensorDesc*> descs;
  for (ir::ValueId v : node.inputs) {
    descs.push_back(v == ir::kNoValue ? &kAbsent : &graph.value(v).desc);
  }
  Result<ops::NodeInference> inf = ops::infer_node(node, op, descs, values);
  if (!inf.is_ok()) return std::nullopt;
  Outputs out(node.outputs.size());
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] == ir::kNoValue) continue;
    if (!inf->values[i]) return std::nullopt;
    out[i] = *inf->values[i];
  }
  if (!worth_storing(node, bytes_of(values), bytes_of(out))) return std::nullopt;
  return out;
}

bool holds_stand_in(const Tensor& t) {
  if (!dtype_is_integer(t.dtype())) return false;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.value_as_int(i) >= kUnknownDimBase) return true;
  }
  return false;
}

// A Gather or Slice of Shape(x) where x has unknown dims: evaluated on x's shape with stand-ins for
// the unknown dims, it folds when the result holds none of them (it picked only known dims).
std::optional<Outputs> select_known_dims(const ir::Graph& graph, const ir::GraphIndex& index,
                                         const ir::Node& node, const ops::ResolvedOp& op,
                                         std::vector<const Tensor*> values) {
  if (!node.domain.empty() || (node.op_type != "Gather" && node.op_type != "Slice") ||
      !all_known(node, values, 1)) {
    return std::nullopt;
  }
  const int p = index.producer(node.inputs[0]);
  if (p < 0) return std::nullopt;
  const ir::Node& shape = graph.nodes[static_cast<size_t>(p)];
  if (shape.op_type != "Shape" || !shape.domain.empty()) return std::nullopt;
  ir::TensorDesc x = graph.value(shape.inputs[0]).desc;
  if (!x.has_rank()) return std::nullopt;
  for (size_t i = 0; i < x.shape->size(); ++i) {
    ir::Dim& d = (*x.shape)[i];
    if (!d.is_known()) d = ir::Dim::known(kUnknownDimBase + static_cast<int64_t>(i));
  }
  Result<ops::NodeInference> dims =
      ops::infer_node(shape, ops::resolve_op(shape), {&x}, std::vector<const Tensor*>{nullptr});
  if (!dims.is_ok() || !dims->values[0]) return std::nullopt;
  values[0] = &*dims->values[0];
  std::optional<Outputs> out = evaluate(node, op, values);
  if (!out || std::any_of(out->begin(), out->end(), holds_stand_in)) return std::nullopt;
  return out;
}

std::optional<Outputs> try_fold(const ir::Graph& graph, const ir::GraphIndex& index,
                                const ir::Node& node) {
  const ops::ResolvedOp op = ops::resolve_op(node);
  if (op.def == nullptr || op.def->run == nullptr || op.since_version == 0 ||
      is_nondeterministic(node) || is_quantize_dequantize(node)) {
    return std::nullopt;
  }
  bool produces = false;
  for (ir::ValueId v : node.outputs) {
    if (v == ir::kNoValue) continue;
    // A graph output must stay produced by a node: the engine's outputs are computed values.
    if (graph.value(v).is_graph_output) return std::nullopt;
    produces = true;
  }
  if (!produces) return std::nullopt;
  const std::vector<const Tensor*> values = constant_inputs(graph, node);
  if (all_known(node, values, 0)) return evaluate(node, op, values);
  if (auto out = values_from_descs(graph, node, op, values)) return out;
  return select_known_dims(graph, index, node, op, values);
}

Status run(ir::Graph& graph, PassContext& ctx) {
  // Only producers are looked up, and they do not change: folded nodes are removed at the end.
  const ir::GraphIndex index(graph);
  std::vector<bool> folded(graph.nodes.size(), false);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const ir::Node& node = graph.nodes[n];
    std::optional<Outputs> out = try_fold(graph, index, node);
    if (!out) continue;
    std::vector<std::string> results;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] == ir::kNoValue) continue;
      ir::Value& v = graph.value(node.outputs[i]);
      const Tensor& t = (*out)[i];
      v.desc = ir::TensorDesc::of_dims(t.dtype(), t.dims());
      v.initializer = t;
      results.push_back(fmt::format("'{}' {}", v.name, t.desc()));
    }
    folded[n] = true;
    ctx.log.add(kName, fmt::format("folded {} ({}) into constant {}", join_origins(node.origins()),
                                   node.op_type, fmt::join(results, ", ")));
  }
  ir::remove_nodes(graph, folded);
  return Status::ok();
}

}  // namespace
}  // namespace constant_folding

const PassDef& constant_folding_pass() {
  static const PassDef def{
      constant_folding::kName,
      "replaces nodes computable before running (constant inputs, known shapes) by constants",
      constant_folding::run};
  return def;
}

}  // namespace kiln::passes
