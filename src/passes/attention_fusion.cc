#include "passes/attention_fusion.h"

#include <cmath>

#include "ops/kiln_fused.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace attention_fusion {
namespace {

constexpr std::string_view kName = "attention_fusion";

bool is_f32_of_rank2(const ir::Graph& graph, ir::ValueId v) {
  const ir::TensorDesc& d = graph.value(v).desc;
  return d.dtype == DType::kF32 && d.has_rank() && d.rank() >= 2;
}

// The node that produces `v` when `v` is read only by its one consumer; -1 otherwise.
int sole_producer(const ir::GraphIndex& index, ir::ValueId v) {
  return index.has_single_reader(v) ? index.producer(v) : -1;
}

// x * c or x / c (c a finite float32 scalar constant, nonzero for Div) producing `v` and read only
// by the chain: the scale it applies, and x. nullopt otherwise.
struct Scaled {
  int node;
  ir::ValueId x;
  float scale;
};
std::optional<Scaled> scalar_scale(const ir::Graph& graph, const ir::GraphIndex& index,
                                   ir::ValueId v) {
  const int n = sole_producer(index, v);
  if (n < 0) return std::nullopt;
  const ir::Node& node = graph.nodes[static_cast<size_t>(n)];
  const bool div = is_onnx_op(node, "Div");
  if ((!div && !is_onnx_op(node, "Mul")) || node.inputs.size() != 2 || node.opset < 7) {
    return std::nullopt;
  }
  for (int side : {1, 0}) {
    if (div && side == 0) break;  // x / c only
    const Tensor* c = constant_tensor(graph, index, node.inputs[static_cast<size_t>(side)]);
    if (c == nullptr || c->dtype() != DType::kF32 || c->numel() != 1) continue;
    const float value = c->data<float>()[0];
    if (!std::isfinite(value) || (div && value == 0.0f)) return std::nullopt;
    const ir::ValueId x = node.inputs[static_cast<size_t>(1 - side)];
    // The scalar must not broadcast x to a higher rank.
    if (!is_f32_of_rank2(graph, x) || c->rank() > graph.value(x).desc.rank()) return std::nullopt;
    return Scaled{n, x, div ? 1.0f / value : value};
  }
  return std::nullopt;
}

// The perm of a Transpose node whose input has that known rank (>= 2); nullopt otherwise.
std::optional<std::vector<int64_t>> transpose_perm(const ir::Graph& graph, const ir::Node& t) {
  if (!is_onnx_op(t, "Transpose") || !t.attrs.has("perm")) return std::nullopt;
  std::vector<int64_t> perm = t.attrs.get_ints("perm");
  const int rank = graph.value(t.inputs[0]).desc.rank();
  if (rank < 2 || static_cast<int>(perm.size()) != rank) return std::nullopt;
  return perm;
}

// An operand of the chain with the nodes that only transpose or scale it peeled off: the value in
// memory, how it is transposed (empty: not), and the scalar it is multiplied by.
struct Operand {
  ir::ValueId value;
  std::vector<int64_t> perm;
  float scale = 1.0f;
};

// Peels off, from the operand `v`, a Transpose and (when `scalable`) a scalar Mul or Div, in
// either order, each read only by the chain; the peeled nodes go to `group`.
Operand peel(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v, bool scalable,
             std::vector<int>& group) {
  Operand op{v, {}, 1.0f};
  bool scaled = !scalable, transposed = false;
  while (!scaled || !transposed) {
    if (!scaled) {
      if (const auto s = scalar_scale(graph, index, op.value)) {
        group.push_back(s->node);
        op.scale = s->scale;
        op.value = s->x;
        scaled = true;
        continue;
      }
    }
    const int n = transposed ? -1 : sole_producer(index, op.value);
    if (n < 0) break;
    const ir::Node& t = graph.nodes[static_cast<size_t>(n)];
    const auto perm = transpose_perm(graph, t);
    if (!perm) break;
    group.push_back(n);
    op.perm = *perm;
    op.value = t.inputs[0];
    transposed = true;
  }
  return op;
}

// The product of the chain behind `v`: a MatMul producing it, or a scalar Mul/Div of one, each
// read only by the chain; -1 otherwise.
int product_behind(const ir::Graph& graph, const ir::GraphIndex& index, ir::ValueId v) {
  if (const auto s = scalar_scale(graph, index, v)) v = s->x;
  const int p = sole_producer(index, v);
  return p >= 0 && is_onnx_op(graph.nodes[static_cast<size_t>(p)], "MatMul") ? p : -1;
}

// An Add of a mask to the (scaled) scores producing `v`, read only by the chain: the Add, the
// scores' side and the mask. The mask must be float32 of known rank, and must not give the scores
// more rows: its query dim is 1 or the scores' own (the same number or symbol). A mask whose key
// dim would broadcast a single key is refused when the layer runs.
struct Masked {
  int node;
  ir::ValueId scores, mask;
};
std::optional<Masked> additive_mask(const ir::Graph& graph, const ir::GraphIndex& index,
                                    ir::ValueId v) {
  const int n = sole_producer(index, v);
  if (n < 0) return std::nullopt;
  const ir::Node& add = graph.nodes[static_cast<size_t>(n)];
  if (!is_onnx_op(add, "Add") || add.inputs.size() != 2 || add.inputs[0] == add.inputs[1]) {
    return std::nullopt;
  }
  for (int side : {0, 1}) {
    const ir::ValueId scores = add.inputs[static_cast<size_t>(side)];
    const ir::ValueId mask = add.inputs[static_cast<size_t>(1 - side)];
    const ir::TensorDesc& md = graph.value(mask).desc;
    if (product_behind(graph, index, scores) < 0 || md.dtype != DType::kF32 || !md.has_rank()) {
      continue;
    }
    const ir::TensorDesc& sd = graph.value(scores).desc;
    if (md.rank() >= 2 && sd.has_rank()) {
      const ir::Dim& mq = md.dim(md.rank() - 2);
      if (!same_dim(mq, ir::Dim::known(1)) && !same_dim(mq, sd.dim(sd.rank() - 2))) continue;
    }
    return Masked{n, scores, mask};
  }
  return std::nullopt;
}

// Softmax along the last axis of an input of known rank >= 2 (before opset 13 the axis flattens
// the dims after it: the last axis only when it is the last dim).
bool softmax_over_last_axis(const ir::Graph& graph, const ir::Node& sm) {
  if (!is_onnx_op(sm, "Softmax") || sm.inputs.size() != 1 || sm.outputs.size() != 1) return false;
  if (!is_f32_of_rank2(graph, sm.inputs[0])) return false;
  const int64_t rank = graph.value(sm.inputs[0]).desc.rank();
  int64_t axis = sm.attrs.get_int("axis", sm.opset >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  return axis == rank - 1;
}

std::optional<Fusion> find(const ir::Graph& graph, const ir::GraphIndex& index, int n) {
  const ir::Node& sm = graph.nodes[static_cast<size_t>(n)];
  if (!softmax_over_last_axis(graph, sm) || !index.has_single_reader(sm.outputs[0])) {
    return std::nullopt;
  }
  const int mm2_index = index.uses(sm.outputs[0])[0].node;
  const ir::Node& mm2 = graph.nodes[static_cast<size_t>(mm2_index)];
  if (!is_onnx_op(mm2, "MatMul") || mm2.inputs.size() != 2 || mm2.inputs[0] != sm.outputs[0] ||
      !is_f32_of_rank2(graph, mm2.inputs[1])) {
    return std::nullopt;
  }
  std::vector<int> group;
  float scale = 1.0f;
  ir::ValueId scores = sm.inputs[0];
  ir::ValueId mask = ir::kNoValue;
  if (const auto m = additive_mask(graph, index, scores)) {
    group.push_back(m->node);
    scores = m->scores;
    mask = m->mask;
  }
  if (const auto s = scalar_scale(graph, index, scores)) {
    group.push_back(s->node);
    scale *= s->scale;
    scores = s->x;
  }
  const int mm1_index = sole_producer(index, scores);
  if (mm1_index < 0) return std::nullopt;
  const ir::Node& mm1 = graph.nodes[static_cast<size_t>(mm1_index)];
  if (!is_onnx_op(mm1, "MatMul") || mm1.inputs.size() != 2) return std::nullopt;
  const Operand q = peel(graph, index, mm1.inputs[0], true, group);
  const Operand k = peel(graph, index, mm1.inputs[1], false, group);
  const Operand v = peel(graph, index, mm2.inputs[1], false, group);
  scale *= q.scale;
  for (const Operand* o : {&q, &k, &v}) {
    if (!is_f32_of_rank2(graph, o->value)) return std::nullopt;
  }
  group.insert(group.end(), {mm1_index, n, mm2_index});
  // A Transpose of the result that keeps its rows' elements together is its store's strides.
  std::vector<int64_t> perm_y;
  std::vector<ir::ValueId> outputs = mm2.outputs;
  if (index.has_single_reader(mm2.outputs[0])) {
    const int t = index.uses(mm2.outputs[0])[0].node;
    const auto perm = transpose_perm(graph, graph.nodes[static_cast<size_t>(t)]);
    if (perm && perm->back() == static_cast<int64_t>(perm->size()) - 1) {
      group.push_back(t);
      perm_y = *perm;
      outputs = graph.nodes[static_cast<size_t>(t)].outputs;
    }
  }

  ir::Node fused;
  fused.name = mm2.name;
  fused.op_type = "Attention";
  fused.domain = std::string(ops::kKilnDomain);
  fused.inputs = {q.value, k.value, v.value};
  if (mask != ir::kNoValue) fused.inputs.push_back(mask);
  fused.outputs = outputs;
  if (scale != 1.0f) fused.attrs.set("scale", scale);
  const std::pair<const char*, const std::vector<int64_t>*> perms[] = {
      {"perm_q", &q.perm}, {"perm_k", &k.perm}, {"perm_v", &v.perm}, {"perm_y", &perm_y}};
  for (const auto& [name, perm] : perms) {
    if (!perm->empty()) fused.attrs.set(name, *perm);
  }
  return Fusion{std::move(group), std::move(fused)};
}

Status run(ir::Graph& graph, PassContext& ctx) {
  apply_fusions(graph, ctx, kName, find);
  return Status::ok();
}

}  // namespace
}  // namespace attention_fusion

const PassDef& attention_fusion_pass() {
  static const PassDef def{attention_fusion::kName,
                           "MatMul -> Softmax(last axis) -> MatMul, with a scalar scale, an "
                           "additive mask and the operands' and result's Transposes -> Attention",
                           attention_fusion::run, PassKind::kFusion};
  return def;
}

}  // namespace kiln::passes
