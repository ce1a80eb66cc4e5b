#include "passes/nchw16c_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "kernels/ref/layout.h"
#include "ops/kiln_fused.h"
#include "ops/kiln_layout.h"
#include "ops/op_def.h"
#include "passes/fusion_util.h"
#include "passes/nchw16c_rule.h"

namespace kiln::passes {
namespace nchw16c_layout {
namespace {

constexpr std::string_view kName = "nchw16c_layout";
constexpr size_t kResidualInput = 3;

// How a node runs blocked: the op it becomes, the inputs it then reads blocked (index and real
// channel count; a Mul's are put in the order X, S), and each output's channel count.
struct Blocking {
  std::string_view op;
  std::vector<std::pair<size_t, int64_t>> inputs;
  std::vector<int64_t> outs;
  bool swap_inputs = false;  // MulNchw16c(X, S) from Mul(S, X)
  // Blocked only when its first blocked input (a pooling's or scale's big tensor) comes blocked:
  // reordering a plain tensor for it costs more than the layer.
  bool follows_only = false;
  bool plain_x = false;  // a convolution reading X as NCHW (x_layout "nchw")
  // Runs unchanged on blocked tensors (blockable_neutral): keeps its op, and is blocked only when
  // all of its inputs come blocked, which then saves their reorders back to NCHW.
  bool neutral = false;
  int resize_version = 0;  // kiln.ResizeNchw16c: the Resize version it keeps

  bool reads_blocked(size_t input) const {
    return std::any_of(inputs.begin(), inputs.end(),
                       [&](const auto& i) { return i.first == input; });
  }
};

// The channels of a convolution: C (input) and M (output), from its constant weights.
struct Channels {
  int64_t in = 0, out = 0;
};

bool is_f32_rank4(const ir::TensorDesc& d) {
  return d.dtype == DType::kF32 && d.has_rank() && d.rank() == 4;
}

// The known channel count of a float32 4-D tensor, or -1.
int64_t channels_of(const ir::TensorDesc& d) {
  return is_f32_rank4(d) && d.dim(1).is_known() ? d.dim(1).value : -1;
}

bool is_one(const ir::Dim& d) { return d.is_known() && d.value == 1; }

// Fewer than 8 channels pad to at least twice their bytes: worth it only on a 1x1 plane (a
// squeeze-and-excitation's reduced channels).
bool worth_blocking(const ir::TensorDesc& d, int64_t channels) {
  return channels >= 8 || (is_one(d.dim(2)) && is_one(d.dim(3)));
}

// `n` as the kiln.ConvNchw16c this pass would make of it (inputs and outputs still plain).
ir::Node as_blocked(const ir::Node& n) {
  ir::Node b = n;
  b.op_type = ops::kConvNchw16c;
  b.domain = ops::kKilnDomain;
  b.opset = ops::kKilnOpset;
  return b;
}

// kiln's own blocked kernels' rule (passes/nchw16c_rule.h): group 1 (X blocked or NCHW) or
// depthwise (X blocked).
bool kiln_kernels_run(const ir::Node& n, const Channels& c, bool plain_x) {
  const int64_t group = n.attrs.get_int("group", 1);
  return group == 1 || (!plain_x && group == c.in && c.out == c.in);
}

// A float32 2-D Conv or kiln.FusedConv with constant weights that runs on blocked tensors (as
// ctx.runs_blocked says, or kiln's own kernels' rule).
std::optional<Blocking> blockable_conv(const ir::Graph& g, const ir::Node& n,
                                       const PassContext& ctx) {
  const bool conv = is_onnx_op(n, "Conv") || is_kiln_op(n, "FusedConv");
  if (!conv || n.inputs.size() < 2 || n.outputs.size() != 1) return {};
  const Tensor* w = g.value(n.inputs[1]).constant();
  if (w == nullptr || w->dtype() != DType::kF32 || w->rank() != 4) return {};
  if (!is_f32_rank4(g.value(n.inputs[0]).desc) || !is_f32_rank4(g.value(n.outputs[0]).desc)) {
    return {};
  }
  if (n.inputs.size() > kResidualInput && n.inputs[kResidualInput] != ir::kNoValue &&
      channels_of(g.value(n.inputs[kResidualInput]).desc) < 0) {
    return {};
  }
  const Dims& wd = w->dims();
  const Channels c{wd[1] * n.attrs.get_int("group", 1), wd[0]};
  // A reorder needs the channel count in the desc (a Concat's output may not say it).
  if (channels_of(g.value(n.inputs[0]).desc) != c.in ||
      channels_of(g.value(n.outputs[0]).desc) != c.out) {
    return {};
  }
  const bool residual =
      n.inputs.size() > kResidualInput && n.inputs[kResidualInput] != ir::kNoValue;
  // A first layer of few channels (an image's 3): only its output is blocked, if a tactic reads
  // X as it is (kiln's dense kernel and oneDNN's first-layer kernels do).
  const bool plain_x = !residual && !worth_blocking(g.value(n.inputs[0]).desc, c.in);
  ir::Node blocked = as_blocked(n);
  if (plain_x) blocked.attrs.set("x_layout", std::string("nchw"));
  const bool runs =
      ctx.runs_blocked ? ctx.runs_blocked(g, blocked) : kiln_kernels_run(n, c, plain_x);
  if (!runs) return {};
  Blocking b{ops::kConvNchw16c, {}, {c.out}};
  b.plain_x = plain_x;
  if (!plain_x) b.inputs.emplace_back(0, c.in);
  if (residual) b.inputs.emplace_back(kResidualInput, c.out);
  return b;
}

// GlobalAveragePool of a float32 4-D tensor; Mul of a float32 4-D tensor by a [1 or N, C, 1, 1]
// scale (a squeeze-and-excitation's), in either order. Both run on kiln's portable blocked loops.
std::optional<Blocking> blockable_se(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.size() != 1) return {};
  if (is_onnx_op(n, "GlobalAveragePool") && n.inputs.size() == 1) {
    const int64_t c = channels_of(g.value(n.inputs[0]).desc);
    if (c < 0) return {};
    return Blocking{ops::kGlobalAveragePoolNchw16c, {{0, c}}, {c}, false, true};
  }
  if (!is_onnx_op(n, "Mul") || n.inputs.size() != 2) return {};
  for (size_t x : {size_t{0}, size_t{1}}) {
    const ir::TensorDesc& xd = g.value(n.inputs[x]).desc;
    const ir::TensorDesc& sd = g.value(n.inputs[1 - x]).desc;
    const int64_t c = channels_of(xd);
    if (c < 0 || channels_of(sd) != c || !is_one(sd.dim(2)) || !is_one(sd.dim(3))) continue;
    if (!is_one(sd.dim(0)) && !same_dim(sd.dim(0), xd.dim(0))) continue;
    if (is_one(xd.dim(2)) && is_one(xd.dim(3))) continue;  // both scales: nothing to gain
    return Blocking{ops::kMulNchw16c, {{x, c}, {1 - x, c}}, {c}, x == 1, true};
  }
  return {};
}

// MaxPool of a float32 4-D tensor (2-D window) without its Indices output, on kiln's portable
// blocked loop: ResNet's after its stem, YOLO's chained ones (SPPF).
std::optional<Blocking> blockable_max_pool(const ir::Graph& g, const ir::Node& n) {
  if (!is_onnx_op(n, "MaxPool") || n.inputs.size() != 1 || n.outputs.size() != 1) return {};
  // kiln.MaxPoolNchw16c reads opset 12's attributes; ceil_mode did not exist before opset 10.
  if (n.opset < 10 && n.attrs.has("ceil_mode")) return {};
  const int64_t c = channels_of(g.value(n.inputs[0]).desc);
  if (c < 0 || channels_of(g.value(n.outputs[0]).desc) != c) return {};
  return Blocking{ops::kMaxPoolNchw16c, {{0, c}}, {c}, false, true};
}

// Resize of a float32 4-D tensor by constant scales or sizes that keep N and C, after a blocked
// layer (YOLO's nearest upsampling between its C2f blocks, DeepLab's pooled branch): kiln's
// separable kernel runs it on blocked tensors. Sizes give the real channel count, which the
// blocked tensor's padded one must equal.
std::optional<Blocking> blockable_resize(const ir::Graph& g, const ir::Node& n) {
  if (!is_onnx_op(n, "Resize") || n.inputs.empty() || n.outputs.size() != 1) return {};
  const ir::TensorDesc& x = g.value(n.inputs[0]).desc;
  const int64_t c = channels_of(x);
  if (c < 0 || channels_of(g.value(n.outputs[0]).desc) != c) return {};
  if (!ir::same_dim(x.dim(0), g.value(n.outputs[0]).desc.dim(0))) return {};
  if (n.attrs.has("axes") ||
      n.attrs.get_string("keep_aspect_ratio_policy", "stretch") != "stretch") {
    return {};
  }
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (n.inputs[i] != ir::kNoValue && g.value(n.inputs[i]).constant() == nullptr) return {};
  }
  const ops::OpDef* resize = ops::op_registry().find("", "Resize");
  const int version = resize ? ops::resolve_since_version(*resize, n.opset) : 0;
  if (version <= 0) return {};
  const bool sizes = version >= 11 && n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue;
  if (sizes && c % kernels::ref::kChannelBlock != 0) return {};
  Blocking b{ops::kResizeNchw16c, {{0, c}}, {c}, false, true};
  b.resize_version = version;
  return b;
}

// Dims provably equal one by one (same_dim): an element-wise op of them broadcasts nothing.
bool same_known_dims(const ir::TensorDesc& a, const ir::TensorDesc& b) {
  if (!a.has_rank() || a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    if (!ir::same_dim(a.dim(i), b.dim(i))) return false;
  }
  return true;
}

// The channel count of a float32 4-D value when it is a whole number of blocks, else -1.
int64_t whole_blocks(const ir::Graph& g, ir::ValueId v) {
  const int64_t c = channels_of(g.value(v).desc);
  return c > 0 && c % kernels::ref::kChannelBlock == 0 ? c : -1;
}

// The axis attribute of a Concat or Split is the channels' (1, or -3 of rank 4).
bool channel_axis(const ir::Node& n, int64_t fallback) {
  const int64_t axis = n.attrs.get_int("axis", fallback);
  return axis == 1 || axis == -3;
}

// Concat and Split along the channels, and Add, Sub, Mul or Div of two tensors of the same dims,
// when every channel count is a whole number of blocks: nChw16c then holds each part as whole
// blocks, contiguous per image as in NCHW, so these ops run unchanged on blocked tensors, with the
// same kernels. YOLOv8's C2f blocks (a Split, shortcut Adds, a Concat between convolutions) had
// put 45 reorders into its network.
std::optional<Blocking> blockable_neutral(const ir::Graph& g, const ir::Node& n) {
  const bool concat = is_onnx_op(n, "Concat") && channel_axis(n, 0);
  const bool split = is_onnx_op(n, "Split") && channel_axis(n, 0) && !n.inputs.empty();
  const bool arith = (is_onnx_op(n, "Add") || is_onnx_op(n, "Sub") || is_onnx_op(n, "Mul") ||
                      is_onnx_op(n, "Div")) &&
                     n.inputs.size() == 2;
  if (!concat && !split && !arith) return {};
  if (arith) {
    const ir::TensorDesc &a = g.value(n.inputs[0]).desc, &b = g.value(n.inputs[1]).desc;
    const ir::TensorDesc& y = g.value(n.outputs[0]).desc;
    if (!same_known_dims(a, b) || !same_known_dims(a, y)) return {};
  }
  Blocking b{n.op_type, {}, {}};
  b.neutral = true;
  const size_t data_inputs = split ? 1 : n.inputs.size();
  for (size_t i = 0; i < data_inputs; ++i) {
    const int64_t c = n.inputs[i] == ir::kNoValue ? -1 : whole_blocks(g, n.inputs[i]);
    if (c < 0) return {};
    b.inputs.emplace_back(i, c);
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const int64_t c = n.outputs[k] == ir::kNoValue ? -1 : whole_blocks(g, n.outputs[k]);
    if (c < 0) return {};
    b.outs.push_back(c);
  }
  return b;
}

std::optional<Blocking> blockable(const ir::Graph& g, const ir::Node& n, const PassContext& ctx) {
  std::optional<Blocking> b = blockable_conv(g, n, ctx);
  if (!b) b = blockable_se(g, n);
  if (!b) b = blockable_max_pool(g, n);
  if (!b) b = blockable_resize(g, n);
  if (!b) b = blockable_neutral(g, n);
  if (!b || !worth_blocking(g.value(n.outputs[0]).desc, b->outs[0])) return {};
  for (const auto& [input, channels] : b->inputs) {
    if (!worth_blocking(g.value(n.inputs[input]).desc, channels)) return {};
  }
  return b;
}

ir::TensorDesc blocked_desc(const ir::TensorDesc& plain, int64_t channels) {
  ir::TensorDesc d = plain;
  (*d.shape)[1] = ir::Dim::known(kernels::ref::padded_channels(channels));
  return d;
}

class Rewriter {
 public:
  Rewriter(ir::Graph& g, PassLog& log)
      : g_(g), log_(log), blocked_(g.values.size(), ir::kNoValue), names_(g) {}

  // v's blocked twin, made by a ToNchw16c (appended to out_) the first time it is asked for.
  ir::ValueId blocked_of(ir::ValueId v, int64_t channels, const std::string& reader) {
    if (blocked_[static_cast<size_t>(v)] != ir::kNoValue) return blocked_[static_cast<size_t>(v)];
    const std::string value_name = g_.value(v).name;
    const ir::ValueId b = add_blocked_value(v, channels);
    out_.push_back(reorder(value_name + ".to_nchw16c", ops::kToNchw16c, v, b));
    log_.add(kName, fmt::format("reorder '{}' to nChw16c for '{}'", value_name, reader));
    ++to_blocked_;
    return b;
  }

  ir::ValueId add_blocked_value(ir::ValueId plain, int64_t channels) {
    const ir::TensorDesc d = blocked_desc(g_.value(plain).desc, channels);
    const ir::ValueId b =
        g_.add_value(ir::unique_value_name(g_, g_.value(plain).name + ".nchw16c"), d);
    blocked_.resize(g_.values.size(), ir::kNoValue);
    blocked_[static_cast<size_t>(plain)] = b;
    return b;
  }

  // plain_readers[k]: output k is read as NCHW too (by a plain node or as a graph output).
  void convert(ir::Node node, const Blocking& b, const std::vector<bool>& plain_readers) {
    const std::vector<ir::ValueId> ys = node.outputs;
    for (const auto& [input, channels] : b.inputs) {
      node.inputs[input] = blocked_of(node.inputs[input], channels, node.name);
    }
    if (b.swap_inputs) std::swap(node.inputs[0], node.inputs[1]);
    const std::vector<int64_t>& channels = b.outs;
    for (size_t k = 0; k < ys.size(); ++k) node.outputs[k] = add_blocked_value(ys[k], channels[k]);
    const std::string name = node.name;
    if (b.neutral) {
      out_.push_back(std::move(node));
    } else {
      ir::Node blocked = as_blocked(node);
      blocked.op_type = b.op;
      if (b.op != ops::kConvNchw16c) blocked.attrs.set("channels", b.outs[0]);
      if (b.plain_x) blocked.attrs.set("x_layout", std::string("nchw"));
      if (b.resize_version > 0) blocked.attrs.set("resize_version", int64_t{b.resize_version});
      out_.push_back(std::move(blocked));
    }
    ++converted_;
    for (size_t k = 0; k < ys.size(); ++k) {
      if (!plain_readers[k]) continue;
      ir::Node r = reorder(name + ".from_nchw16c", ops::kFromNchw16c,
                           blocked_[static_cast<size_t>(ys[k])], ys[k]);
      r.attrs.set("channels", channels[k]);
      out_.push_back(std::move(r));
      log_.add(kName, k == 0 ? fmt::format("reorder the output of '{}' back to NCHW", name)
                             : fmt::format("reorder output {} of '{}' back to NCHW", k, name));
      ++from_blocked_;
    }
  }

  void keep(ir::Node node) { out_.push_back(std::move(node)); }

  void finish() {
    g_.nodes = std::move(out_);
    ir::compact_values(g_);
    log_.add(kName, fmt::format("{} layers run on nChw16c tensors; {} reorders in, {} out",
                                converted_, to_blocked_, from_blocked_));
  }

 private:
  ir::Node reorder(const std::string& name_hint, std::string_view op, ir::ValueId in,
                   ir::ValueId out) {
    ir::Node r;
    r.name = names_.take(name_hint);
    r.op_type = op;
    r.domain = ops::kKilnDomain;
    r.opset = ops::kKilnOpset;
    r.inputs = {in};
    r.outputs = {out};
    return r;
  }

  ir::Graph& g_;
  PassLog& log_;
  std::vector<ir::ValueId> blocked_;  // per plain value: its blocked twin, or kNoValue
  ir::NodeNames names_;
  std::vector<ir::Node> out_;
  int converted_ = 0, to_blocked_ = 0, from_blocked_ = 0;
};

Status run(ir::Graph& g, PassContext& ctx) {
  if (!ctx.runs_blocked && !host_runs_blocked_kernels()) return Status::ok();
  const ir::GraphIndex index(g);
  const size_t count = g.nodes.size();
  std::vector<std::optional<Blocking>> cand(count);
  for (size_t i = 0; i < count; ++i) cand[i] = blockable(g, g.nodes[i], ctx);
  const auto blocked_use = [&](const ir::Use& u) {
    const std::optional<Blocking>& b = cand[static_cast<size_t>(u.node)];
    return b && b->reads_blocked(static_cast<size_t>(u.input));
  };
  std::vector<bool> keep(count, false);
  bool any = false;
  for (size_t i = 0; i < count; ++i) {
    if (!cand[i]) continue;
    const ir::Node& n = g.nodes[i];
    // A pooling or scale joins only a blocked convolution's output; a convolution any neighbor;
    // a neutral op only when all of its inputs come blocked. A pooling, scale or neutral producer
    // counts once it is blocked itself (producers come first, so keep[p] is settled): a lone
    // convolution after an unblocked max pool stays NCHW, and max pools chain.
    const auto blocked_producer = [&](size_t k, bool conv_only) {
      const int p = index.producer(n.inputs[k]);
      if (p < 0 || !cand[static_cast<size_t>(p)]) return false;
      const Blocking& pb = *cand[static_cast<size_t>(p)];
      if (pb.follows_only || pb.neutral) return static_cast<bool>(keep[static_cast<size_t>(p)]);
      return !conv_only || pb.op == ops::kConvNchw16c;
    };
    bool joined = false;
    if (cand[i]->neutral) {
      joined = std::all_of(cand[i]->inputs.begin(), cand[i]->inputs.end(),
                           [&](const auto& input) { return blocked_producer(input.first, false); });
    } else if (cand[i]->follows_only) {
      joined = blocked_producer(cand[i]->inputs.front().first, true);
    } else {
      for (const auto& input : cand[i]->inputs) {
        joined = joined || blocked_producer(input.first, false);
      }
      for (const ir::Use& u : index.uses(n.outputs[0])) joined = joined || blocked_use(u);
    }
    keep[i] = joined;
    any = any || joined;
  }
  if (!any) return Status::ok();
  Rewriter rw(g, ctx.log);
  for (size_t i = 0; i < count; ++i) {
    if (!keep[i]) {
      rw.keep(g.nodes[i]);
      continue;
    }
    std::vector<bool> plain_readers;
    for (const ir::ValueId y : g.nodes[i].outputs) {
      bool plain = g.value(y).is_graph_output;
      for (const ir::Use& u : index.uses(y)) {
        const bool blocked_reader =
            keep[static_cast<size_t>(u.node)] &&
            cand[static_cast<size_t>(u.node)]->reads_blocked(static_cast<size_t>(u.input));
        plain = plain || !blocked_reader;
      }
      plain_readers.push_back(plain);
    }
    rw.convert(g.nodes[i], *cand[i], plain_readers);
  }
  rw.finish();
  return Status::ok();
}

}  // namespace
}  // namespace nchw16c_layout

const PassDef& nchw16c_layout_pass() {
  static const PassDef def{
      nchw16c_layout::kName,
      "float32 FusedConv chains kiln's blocked kernels run -> ConvNchw16c on blocked tensors",
      nchw16c_layout::run};
  return def;
}

}  // namespace kiln::passes
