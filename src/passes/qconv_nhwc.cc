#include "passes/qconv_nhwc.h"

#include <fmt/format.h>

#include <numeric>
#include <set>

#include "ir/graph_edit.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "passes/fusion_util.h"

namespace kiln::passes {
namespace qconv_nhwc {
namespace {

constexpr std::string_view kName = "qconv_nhwc";
constexpr size_t kResidualInput = 4;
// A chain converts when it has at least this many convolutions per transpose it needs: ResNet-50's
// 51 with 3 did (0.90x the NCHW engine, 2026-12-07); MobileNetV2's, cut by depthwise layers (not
// candidates) into pairs of 1x1 layers with two or three transposes each, ran 1.28x slower.
constexpr int64_t kConvsPerTranspose = 4;

bool is_u8_rank4(const ir::TensorDesc& d) {
  return d.dtype == DType::kU8 && d.has_rank() && d.rank() == 4;
}

ir::TensorDesc to_nhwc_desc(const ir::TensorDesc& d) {
  return ir::TensorDesc::of(d.dtype, {d.dim(0), d.dim(2), d.dim(3), d.dim(1)});
}

bool is_max_pool(const ir::Node& n) { return n.domain.empty() && n.op_type == "MaxPool"; }

// The node as kiln.QConvNhwc or kiln.MaxPoolNhwc (inputs still the NCHW values: what
// runs_blocked is asked about).
ir::Node as_nhwc(const ir::Node& node) {
  ir::Node n = node;
  if (is_max_pool(node)) {
    n.op_type = std::string(ops::kMaxPoolNhwc);
    n.domain = std::string(ops::kKilnDomain);
    n.opset = ops::kKilnOpset;
  } else {
    n.op_type = "QConvNhwc";
  }
  return n;
}

// A uint8 MaxPool between chain members (a ResNet's stem and its first block) joins their chain.
bool is_max_pool_candidate(const ir::Graph& g, const ir::Node& n, const PassContext& ctx) {
  if (!is_max_pool(n) || n.inputs.size() != 1) return false;
  if (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) return false;  // Indices
  return is_u8_rank4(g.value(n.inputs[0]).desc) && is_u8_rank4(g.value(n.outputs[0]).desc) &&
         ctx.runs_blocked(g, as_nhwc(n));
}

bool is_candidate(const ir::Graph& g, const ir::Node& n, const PassContext& ctx) {
  if (is_max_pool_candidate(g, n, ctx)) return true;
  if (!is_kiln_op(n, "QConv") || n.outputs.size() != 1) return false;
  if (!is_u8_rank4(g.value(n.inputs[0]).desc) || !is_u8_rank4(g.value(n.outputs[0]).desc)) {
    return false;
  }
  if (n.inputs.size() > kResidualInput && n.inputs[kResidualInput] != ir::kNoValue &&
      !is_u8_rank4(g.value(n.inputs[kResidualInput]).desc)) {
    return false;
  }
  return ctx.runs_blocked(g, as_nhwc(n));
}

// Union-find over node indices.
struct Chains {
  std::vector<size_t> parent;
  explicit Chains(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), size_t{0}); }
  size_t root(size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  }
  void join(size_t a, size_t b) { parent[root(a)] = root(b); }
};

// The X and residual inputs of a convolution (a max pool has X only): the ones read channels-last.
std::vector<size_t> activation_inputs(const ir::Node& n) {
  std::vector<size_t> in = {0};
  if (n.inputs.size() > kResidualInput && n.inputs[kResidualInput] != ir::kNoValue) {
    in.push_back(kResidualInput);
  }
  return in;
}

// Whether anything reads y other than a chain member's X or residual (in_chain(node index)), or y
// is a graph output: y then needs a transpose back to NCHW. The chain count in run() and the
// rewrite both ask it, so they cannot disagree.
template <class InChain>
bool read_outside(const ir::Graph& g, const ir::GraphIndex& index, ir::ValueId y,
                  InChain&& in_chain) {
  if (g.value(y).is_graph_output) return true;
  for (const ir::Use& u : index.uses(y)) {
    const bool activation = u.input == 0 || u.input == static_cast<int>(kResidualInput);
    if (!activation || !in_chain(static_cast<size_t>(u.node))) return true;
  }
  return false;
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, const ir::GraphIndex& index, const std::vector<bool>& convert,
           PassLog& log)
      : g_(g),
        index_(index),
        convert_(convert),
        log_(log),
        nhwc_(g.values.size(), ir::kNoValue),
        names_(g) {}

  void convert(const ir::Node& node) {
    ir::Node n = as_nhwc(node);
    for (size_t k : activation_inputs(node)) n.inputs[k] = nhwc_of(node.inputs[k], node.name);
    const ir::ValueId y = node.outputs[0];
    const ir::ValueId y_nhwc = g_.add_value(ir::unique_value_name(g_, g_.value(y).name + ".nhwc"),
                                            to_nhwc_desc(g_.value(y).desc));
    nhwc_.push_back(ir::kNoValue);
    nhwc_[static_cast<size_t>(y)] = y_nhwc;
    n.outputs = {y_nhwc};
    out_.push_back(std::move(n));
    ++(is_max_pool(node) ? pools_ : converted_);
    if (read_in_nchw(y)) {
      out_.push_back(transpose(node.name + ".to_nchw", y_nhwc, y, {0, 3, 1, 2}));
      ++from_nhwc_;
    }
  }

  void keep(const ir::Node& n) { out_.push_back(n); }

  void finish() {
    g_.nodes = std::move(out_);
    ir::compact_values(g_);
    log_.add(kName, fmt::format("{} INT8 convolutions and {} max pools run channels-last; {} "
                                "transposes in, {} out",
                                converted_, pools_, to_nhwc_, from_nhwc_));
  }

 private:
  // The value's NHWC twin: the converted producer's output, or a Transpose made once.
  ir::ValueId nhwc_of(ir::ValueId v, const std::string& reader) {
    if (nhwc_[static_cast<size_t>(v)] != ir::kNoValue) return nhwc_[static_cast<size_t>(v)];
    const ir::ValueId t = g_.add_value(ir::unique_value_name(g_, g_.value(v).name + ".nhwc"),
                                       to_nhwc_desc(g_.value(v).desc));
    nhwc_.push_back(ir::kNoValue);
    nhwc_[static_cast<size_t>(v)] = t;
    out_.push_back(transpose(reader + ".to_nhwc", v, t, {0, 2, 3, 1}));
    ++to_nhwc_;
    return t;
  }

  bool read_in_nchw(ir::ValueId y) const {
    return read_outside(g_, index_, y, [&](size_t r) { return static_cast<bool>(convert_[r]); });
  }

  ir::Node transpose(const std::string& hint, ir::ValueId in, ir::ValueId out,
                     std::vector<int64_t> perm) {
    ir::Node t;
    t.name = names_.take(hint);
    t.op_type = "Transpose";
    t.opset = static_cast<int>(g_.opset_imports.count("") ? g_.opset_imports.at("") : 13);
    t.inputs = {in};
    t.outputs = {out};
    t.attrs.set("perm", std::move(perm));
    return t;
  }

  ir::Graph& g_;
  const ir::GraphIndex& index_;
  const std::vector<bool>& convert_;
  PassLog& log_;
  std::vector<ir::ValueId> nhwc_;  // per value: its NHWC twin, or kNoValue
  ir::NodeNames names_;
  std::vector<ir::Node> out_;
  int converted_ = 0, pools_ = 0, to_nhwc_ = 0, from_nhwc_ = 0;
};

// Says which chains stay NCHW and why, so that a build log explains an INT8 model that did not
// convert (the largest such chain names its first convolution).
void log_kept(const ir::Graph& g, Chains& chains, const std::vector<bool>& cand,
              const std::vector<bool>& convert, const std::vector<int64_t>& convs,
              const std::vector<std::set<ir::ValueId>>& moved, PassLog& log) {
  int kept = 0;
  int64_t kept_convs = 0;
  size_t largest = 0;
  std::set<size_t> seen;
  for (size_t i = 0; i < cand.size(); ++i) {
    const size_t root = chains.root(i);
    // A chain of max pools alone (no convolution) is not worth a line.
    if (!cand[i] || convert[i] || convs[root] == 0 || !seen.insert(root).second) continue;
    ++kept;
    kept_convs += convs[root];
    if (kept == 1 || convs[root] > convs[chains.root(largest)]) largest = i;
  }
  if (kept == 0) return;
  const size_t root = chains.root(largest);
  log.add(kName, fmt::format("kept {} chain(s) of {} INT8 convolution(s) NCHW: fewer than {} per "
                             "transpose they would need (largest: '{}', {} convolution(s), {} "
                             "transpose(s))",
                             kept, kept_convs, kConvsPerTranspose, g.nodes[largest].name,
                             convs[root], moved[root].size()));
}

Status run(ir::Graph& g, PassContext& ctx) {
  if (!ctx.runs_blocked) return Status::ok();
  const ir::GraphIndex index(g);
  const size_t count = g.nodes.size();
  std::vector<bool> cand(count);
  for (size_t i = 0; i < count; ++i) cand[i] = is_candidate(g, g.nodes[i], ctx);
  Chains chains(count);
  for (size_t i = 0; i < count; ++i) {
    if (!cand[i]) continue;
    for (size_t k : activation_inputs(g.nodes[i])) {
      const int p = index.producer(g.nodes[i].inputs[k]);
      if (p >= 0 && cand[static_cast<size_t>(p)]) chains.join(i, static_cast<size_t>(p));
    }
  }
  // Per chain: its convolutions, and the values a transpose would move in or out.
  std::vector<int64_t> convs(count, 0);
  std::vector<std::set<ir::ValueId>> moved(count);
  for (size_t i = 0; i < count; ++i) {
    if (!cand[i]) continue;
    const size_t root = chains.root(i);
    if (!is_max_pool(g.nodes[i])) ++convs[root];
    for (size_t k : activation_inputs(g.nodes[i])) {
      const int p = index.producer(g.nodes[i].inputs[k]);
      if (p < 0 || !cand[static_cast<size_t>(p)] || chains.root(static_cast<size_t>(p)) != root) {
        moved[root].insert(g.nodes[i].inputs[k]);
      }
    }
    const ir::ValueId y = g.nodes[i].outputs[0];
    if (read_outside(g, index, y, [&](size_t r) { return cand[r] && chains.root(r) == root; })) {
      moved[root].insert(y);
    }
  }
  std::vector<bool> convert(count, false);
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    const size_t root = chains.root(i);
    convert[i] = cand[i] && convs[root] >= 2 &&
                 convs[root] >= kConvsPerTranspose * static_cast<int64_t>(moved[root].size());
    any = any || convert[i];
  }
  log_kept(g, chains, cand, convert, convs, moved, ctx.log);
  if (!any) return Status::ok();
  Rewriter rw(g, index, convert, ctx.log);
  for (size_t i = 0; i < count; ++i) {
    if (convert[i]) {
      rw.convert(g.nodes[i]);
    } else {
      rw.keep(g.nodes[i]);
    }
  }
  rw.finish();
  return Status::ok();
}

}  // namespace
}  // namespace qconv_nhwc

const PassDef& qconv_nhwc_pass() {
  static const PassDef def{
      qconv_nhwc::kName,
      "chains of uint8 QConv a tactic runs channels-last -> QConvNhwc between Transposes",
      qconv_nhwc::run};
  return def;
}

}  // namespace kiln::passes
