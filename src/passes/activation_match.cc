#include "passes/activation_match.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string_view>
#include <utility>

#include "passes/fusion_util.h"

namespace kiln::passes {
namespace {

namespace ref = kernels::ref;
using ref::Activation;

bool near(float got, float want) {
  return std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want));
}

struct MatchState {
  const ir::Graph& graph;
  const ir::GraphIndex& index;
  ir::ValueId v;
  std::vector<int> nodes;  // matched so far
};

// A one-element constant operand that cannot broadcast v to another shape: v's dtype, rank <= v's.
std::optional<float> operand_constant(const MatchState& s, ir::ValueId value) {
  const Tensor* t = constant_tensor(s.graph, s.index, value);
  const ir::TensorDesc& vd = s.graph.value(s.v).desc;
  if (t == nullptr || t->numel() != 1 || t->dtype() != vd.dtype) return std::nullopt;
  if (t->rank() > 0 && (!vd.has_rank() || t->rank() > vd.rank())) return std::nullopt;
  return static_cast<float>(t->value_as_double(0));
}

// A Clip's bounds: attributes before opset 11, constant inputs from 11. An absent bound is the
// float range's end, as in Clip's kernel. nullopt when a bound is not a constant.
std::optional<std::pair<float, float>> clip_bounds(const MatchState& s, const ir::Node& clip) {
  constexpr float kLowest = std::numeric_limits<float>::lowest();
  constexpr float kMax = std::numeric_limits<float>::max();
  if (clip.opset < 11) {
    return std::pair{clip.attrs.get_float("min", kLowest), clip.attrs.get_float("max", kMax)};
  }
  auto bound = [&](size_t i, float absent) -> std::optional<float> {
    if (i >= clip.inputs.size() || clip.inputs[i] == ir::kNoValue) return absent;
    return operand_constant(s, clip.inputs[i]);
  };
  const std::optional<float> lo = bound(1, kLowest);
  const std::optional<float> hi = bound(2, kMax);
  if (!lo || !hi) return std::nullopt;
  return std::pair{*lo, *hi};
}

// The activation of a single ONNX node reading v as its input 0.
std::optional<ref::ActivationParams> single_op(const MatchState& s, const ir::Node& n) {
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] != s.v || n.outputs.size() != 1) {
    return std::nullopt;
  }
  const std::string& op = n.op_type;
  if (op == "Relu") return ref::ActivationParams{Activation::kRelu};
  if (op == "Sigmoid") return ref::ActivationParams{Activation::kSigmoid};
  if (op == "Tanh") return ref::ActivationParams{Activation::kTanh};
  if (op == "HardSwish") return ref::ActivationParams{Activation::kHardSwish};
  if (op == "LeakyRelu") {
    return ref::ActivationParams{Activation::kLeakyRelu, n.attrs.get_float("alpha", 0.01f)};
  }
  if (op == "HardSigmoid") {
    return ref::ActivationParams{Activation::kHardSigmoid, n.attrs.get_float("alpha", 0.2f),
                                 n.attrs.get_float("beta", 0.5f)};
  }
  if (op == "Gelu" && n.attrs.get_string("approximate", "none") == "none") {
    return ref::ActivationParams{Activation::kGelu};
  }
  if (op == "Clip") {
    if (auto b = clip_bounds(s, n)) {
      return ref::ActivationParams{Activation::kClip, b->first, b->second};
    }
  }
  return std::nullopt;
}

// --- multi-node spellings, as expression trees matched backwards from their result ------------

struct Pattern {
  enum class Kind { kV, kConstant, kOp };
  Kind kind = Kind::kV;
  std::string_view op;                                          // kOp: an ONNX op
  float value = 0.0f;                                           // kConstant
  std::vector<Pattern> args;                                    // kOp: its leading inputs
  bool (*check)(const MatchState&, const ir::Node&) = nullptr;  // kOp: attributes, other inputs
};

Pattern V() { return Pattern{}; }
Pattern K(float value) { return Pattern{.kind = Pattern::Kind::kConstant, .value = value}; }
Pattern Op(std::string_view op, std::vector<Pattern> args,
           bool (*check)(const MatchState&, const ir::Node&) = nullptr) {
  return Pattern{.kind = Pattern::Kind::kOp, .op = op, .args = std::move(args), .check = check};
}

bool is_relu6(const MatchState& s, const ir::Node& n) {
  const auto b = clip_bounds(s, n);
  return b && near(b->first, 0.0f) && near(b->second, 6.0f);
}

bool is_hardswish_gate(const MatchState&, const ir::Node& n) {
  return near(n.attrs.get_float("alpha", 0.2f), 1.0f / 6.0f) &&
         near(n.attrs.get_float("beta", 0.5f), 0.5f);
}

struct Spelling {
  Activation kind;
  Pattern pattern;
};

const std::vector<Spelling>& spellings() {
  static const std::vector<Spelling> all = [] {
    const Pattern relu6_v_plus_3 = Op("Clip", {Op("Add", {V(), K(3.0f)})}, is_relu6);
    std::vector<Spelling> s = {
        {Activation::kSilu, Op("Mul", {V(), Op("Sigmoid", {V()})})},
        {Activation::kHardSwish, Op("Mul", {V(), Op("HardSigmoid", {V()}, is_hardswish_gate)})},
        {Activation::kHardSwish, Op("Div", {Op("Mul", {V(), relu6_v_plus_3}), K(6.0f)})},
        {Activation::kHardSwish, Op("Mul", {Op("Mul", {V(), relu6_v_plus_3}), K(1.0f / 6.0f)})},
        {Activation::kHardSwish, Op("Mul", {V(), Op("Div", {relu6_v_plus_3, K(6.0f)})})},
        {Activation::kHardSwish, Op("Mul", {V(), Op("Mul", {relu6_v_plus_3, K(1.0f / 6.0f)})})},
    };
    const float sqrt2 = std::numbers::sqrt2_v<float>;
    for (const Pattern& scaled : {Op("Div", {V(), K(sqrt2)}), Op("Mul", {V(), K(1.0f / sqrt2)})}) {
      const Pattern erf_plus_1 = Op("Add", {Op("Erf", {scaled}), K(1.0f)});
      s.push_back({Activation::kGelu, Op("Mul", {Op("Mul", {V(), erf_plus_1}), K(0.5f)})});
      s.push_back({Activation::kGelu, Op("Mul", {Op("Mul", {V(), K(0.5f)}), erf_plus_1})});
      s.push_back({Activation::kGelu, Op("Mul", {V(), Op("Mul", {erf_plus_1, K(0.5f)})})});
    }
    return s;
  }();
  return all;
}

bool match(const Pattern& p, ir::ValueId value, MatchState& s);

bool match_args(const Pattern& p, const ir::Node& node, bool swapped, MatchState& s) {
  for (size_t i = 0; i < p.args.size(); ++i) {
    const size_t input = swapped ? p.args.size() - 1 - i : i;
    if (!match(p.args[i], node.inputs[input], s)) return false;
  }
  return true;
}

// Matches `p` against the expression computing `value`, appending the nodes it consumes.
bool match(const Pattern& p, ir::ValueId value, MatchState& s) {
  if (value == ir::kNoValue) return false;
  if (p.kind == Pattern::Kind::kV) return value == s.v;
  if (p.kind == Pattern::Kind::kConstant) {
    const std::optional<float> k = operand_constant(s, value);
    return k && near(*k, p.value);
  }
  const int n = s.index.producer(value);
  if (n < 0) return false;
  const ir::Node& node = s.graph.nodes[static_cast<size_t>(n)];
  if (!is_onnx_op(node, p.op) || node.outputs.size() != 1 || node.inputs.size() < p.args.size()) {
    return false;
  }
  if (p.check != nullptr && !p.check(s, node)) return false;
  const bool commutative = p.args.size() == 2 && (p.op == "Add" || p.op == "Mul");
  const size_t mark = s.nodes.size();
  for (const bool swapped : {false, true}) {
    if (swapped && !commutative) break;
    if (match_args(p, node, swapped, s)) {
      s.nodes.push_back(n);
      return true;
    }
    s.nodes.resize(mark);
  }
  return false;
}

// The nodes that may end an activation of v: v's readers and the chains of single readers after
// them, as deep as the deepest spelling (GELU: Div, Erf, Add, Mul, Mul).
std::vector<int> candidate_roots(const MatchState& s) {
  constexpr int kMaxDepth = 5;
  std::vector<int> out;
  std::vector<ir::ValueId> frontier{s.v};
  for (int depth = 0; depth < kMaxDepth && !frontier.empty(); ++depth) {
    std::vector<ir::ValueId> next;
    for (const ir::ValueId value : frontier) {
      for (const ir::Use& u : s.index.uses(value)) {
        if (std::find(out.begin(), out.end(), u.node) != out.end()) continue;
        out.push_back(u.node);
        const ir::Node& n = s.graph.nodes[static_cast<size_t>(u.node)];
        if (n.outputs.size() == 1 && n.outputs[0] != ir::kNoValue &&
            s.index.has_single_reader(n.outputs[0])) {
          next.push_back(n.outputs[0]);
        }
      }
    }
    frontier = std::move(next);
  }
  return out;
}

// Nothing outside the activation may see v or an intermediate: v is read only by `nodes`, and each
// node's output but the root's has a single reader.
bool is_self_contained(const MatchState& s, const std::vector<int>& nodes, int root) {
  for (const ir::Use& u : s.index.uses(s.v)) {
    if (!std::binary_search(nodes.begin(), nodes.end(), u.node)) return false;
  }
  for (const int n : nodes) {
    if (n == root) continue;
    if (!s.index.has_single_reader(s.graph.nodes[static_cast<size_t>(n)].outputs[0])) return false;
  }
  return true;
}

std::optional<ActivationMatch> match_spellings(MatchState& s) {
  std::optional<ActivationMatch> best;
  for (const int root : candidate_roots(s)) {
    const ir::Node& node = s.graph.nodes[static_cast<size_t>(root)];
    if (node.outputs.size() != 1) continue;
    for (const Spelling& spelling : spellings()) {
      if (spelling.pattern.op != node.op_type) continue;
      s.nodes.clear();
      if (!match(spelling.pattern, node.outputs[0], s)) continue;
      std::vector<int> nodes = s.nodes;
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      if (!is_self_contained(s, nodes, root)) continue;
      if (!best || nodes.size() > best->nodes.size()) {
        best = ActivationMatch{{spelling.kind}, std::move(nodes), node.outputs[0]};
      }
    }
  }
  return best;
}

}  // namespace

std::optional<ActivationMatch> match_activation(const ir::Graph& graph, const ir::GraphIndex& index,
                                                ir::ValueId v) {
  if (v == ir::kNoValue || graph.value(v).is_graph_output) return std::nullopt;
  MatchState s{graph, index, v, {}};
  const std::vector<ir::Use>& uses = index.uses(v);
  if (uses.size() == 1) {
    const int n = uses[0].node;
    const ir::Node& node = graph.nodes[static_cast<size_t>(n)];
    const std::optional<ref::ActivationParams> p = single_op(s, node);
    if (!p) return std::nullopt;
    return ActivationMatch{*p, {n}, node.outputs[0]};
  }
  // Every multi-node spelling reads v twice.
  if (uses.size() != 2) return std::nullopt;
  return match_spellings(s);
}

}  // namespace kiln::passes
