#include "passes/batchnorm_folding.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <type_traits>

#include "ir/graph_edit.h"
#include "ops/infer_graph.h"

namespace kiln::passes {
namespace batchnorm_folding {
namespace {

constexpr std::string_view kName = "batchnorm_folding";

// The BatchNormalization as y = scale[c] * x + shift[c].
struct ChannelAffine {
  std::vector<double> scale;
  std::vector<double> shift;
  size_t channels() const { return scale.size(); }
};

// What replaces the producer's parameters.
struct Fold {
  Tensor weight;             // replaces input 1
  Tensor bias;               // input 2 (Conv, ConvTranspose, Gemm's C) or the Add's operand
  bool bias_as_add = false;  // MatMul: the bias is added by a new Add node
  bool reset_beta = false;   // Gemm: the new C already includes beta
};

bool is_foldable_float(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kF64; }

template <typename T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = t.value_as_double(static_cast<int64_t>(i));
  return v;
}

Tensor from_doubles(DType dtype, Dims dims, const std::vector<double>& v) {
  Tensor out(dtype, std::move(dims));
  dispatch_float(dtype, [&]<typename T>() {
    T* d = out.data<T>();
    for (size_t i = 0; i < v.size(); ++i) d[i] = from_double<T>(v[i]);
  });
  return out;
}

// w'[i] = w[i] * s[channel_of(i)].
template <typename ChannelOf>
Tensor scale_weight(const Tensor& w, const std::vector<double>& s, ChannelOf channel_of) {
  Tensor out(w.dtype(), w.dims());
  dispatch_float(w.dtype(), [&]<typename T>() {
    const T* src = w.data<T>();
    T* dst = out.data<T>();
    for (int64_t i = 0; i < w.numel(); ++i) {
      dst[i] = from_double<T>(static_cast<double>(src[i]) * s[static_cast<size_t>(channel_of(i))]);
    }
  });
  return out;
}

// The constant at input i, or nullptr when it is absent or not a constant.
const Tensor* constant_input(const ir::Graph& graph, const ir::Node& node, size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == ir::kNoValue) return nullptr;
  return graph.value(node.inputs[i]).constant();
}

bool has_input(const ir::Node& node, size_t i) {
  return i < node.inputs.size() && node.inputs[i] != ir::kNoValue;
}

// The BatchNormalization's affine form, when it is an inference BatchNormalization over axis 1
// (not the per-element spatial=0 form of opsets 6-8) with constant float parameters.
std::optional<ChannelAffine> bn_affine(const ir::Graph& graph, const ir::Node& bn) {
  if (bn.inputs.size() != 5) return std::nullopt;
  for (size_t i = 1; i < bn.outputs.size(); ++i) {
    if (bn.outputs[i] != ir::kNoValue) return std::nullopt;  // training: running statistics
  }
  const int version = ops::resolve_op(bn).since_version;
  if (version < 9 && bn.attrs.get_int("spatial", 1) == 0) return std::nullopt;
  if (version >= 14 && bn.attrs.get_int("training_mode", 0) != 0) return std::nullopt;
  const Tensor* p[4];
  for (size_t i = 0; i < 4; ++i) {
    p[i] = constant_input(graph, bn, i + 1);
    if (p[i] == nullptr || p[i]->rank() != 1 || !is_foldable_float(p[i]->dtype()) ||
        p[i]->numel() != p[0]->numel()) {
      return std::nullopt;
    }
  }
  const double eps = bn.attrs.get_float("epsilon", 1e-5f);
  const std::vector<double> scale = to_doubles(*p[0]);
  const std::vector<double> b = to_doubles(*p[1]);
  const std::vector<double> mean = to_doubles(*p[2]);
  const std::vector<double> var = to_doubles(*p[3]);
  ChannelAffine a;
  for (size_t c = 0; c < scale.size(); ++c) {
    // A negative or NaN variance gives NaN/inf outputs: leave computing them to the kernel.
    if (!(var[c] + eps > 0)) return std::nullopt;
    a.scale.push_back(scale[c] / std::sqrt(var[c] + eps));
    a.shift.push_back(b[c] - a.scale.back() * mean[c]);
  }
  return a;
}

// A Mul or Div of the Conv output x by a constant that varies at most along the channel axis 1
// ([C, 1, ...], [1, C, 1, ...] or one value): a per-channel scale with no shift. PyTorch's QAT
// export of Conv + BN divides the convolution by the BN scale before the BatchNormalization.
std::optional<ChannelAffine> scale_affine(const ir::Graph& graph, const ir::Node& node,
                                          ir::ValueId x, int64_t channels) {
  const bool div = node.op_type == "Div";
  if ((!div && node.op_type != "Mul") || node.inputs.size() != 2 || node.opset < 7) {
    return std::nullopt;
  }
  if (div && node.inputs[0] != x) return std::nullopt;  // c / x is not affine
  const size_t ci = node.inputs[0] == x ? 1 : 0;
  const Tensor* c = constant_input(graph, node, ci);
  const int rank = graph.value(x).desc.has_rank() ? graph.value(x).desc.rank() : 0;
  if (c == nullptr || !is_foldable_float(c->dtype()) || rank < 2 || c->rank() > rank) {
    return std::nullopt;
  }
  for (int d = 0; d < c->rank(); ++d) {  // right-aligned against x: only axis 1 may be > 1
    const int axis = rank - c->rank() + d;
    if (c->dim(d) != 1 && (axis != 1 || c->dim(d) != channels)) return std::nullopt;
  }
  const std::vector<double> v = to_doubles(*c);
  ChannelAffine a;
  for (int64_t k = 0; k < channels; ++k) {
    const double s = v[v.size() == 1 ? 0 : static_cast<size_t>(k)];
    if (div && !(s != 0)) return std::nullopt;
    a.scale.push_back(div ? 1.0 / s : s);
    a.shift.push_back(0.0);
  }
  return a;
}

// The producer's bias as doubles ([channels], zeros when absent); nullopt when it is present but
// not a constant of the weight's dtype and shape.
std::optional<std::vector<double>> conv_bias(const ir::Graph& graph, const ir::Node& node,
                                             const Tensor& w, size_t channels) {
  if (!has_input(node, 2)) return std::vector<double>(channels, 0.0);
  const Tensor* b = constant_input(graph, node, 2);
  if (b == nullptr || b->dtype() != w.dtype() || b->rank() != 1 ||
      b->numel() != static_cast<int64_t>(channels)) {
    return std::nullopt;
  }
  return to_doubles(*b);
}

std::vector<double> affine_bias(const ChannelAffine& a, const std::vector<double>& bias) {
  std::vector<double> out(a.channels());
  for (size_t c = 0; c < out.size(); ++c) out[c] = a.scale[c] * bias[c] + a.shift[c];
  return out;
}

std::optional<Fold> fold_conv(const ir::Graph& graph, const ir::Node& conv,
                              const ChannelAffine& a) {
  const Tensor* w = constant_input(graph, conv, 1);
  const auto channels = static_cast<int64_t>(a.channels());
  if (w == nullptr || w->rank() < 3 || w->dim(0) != channels) return std::nullopt;
  const std::optional<std::vector<double>> bias = conv_bias(graph, conv, *w, a.channels());
  if (!bias) return std::nullopt;
  const int64_t inner = w->numel() / channels;
  return Fold{scale_weight(*w, a.scale, [inner](int64_t i) { return i / inner; }),
              from_doubles(w->dtype(), {channels}, affine_bias(a, *bias))};
}

std::optional<Fold> fold_conv_transpose(const ir::Graph& graph, const ir::Node& conv,
                                        const ChannelAffine& a) {
  const Tensor* w = constant_input(graph, conv, 1);
  const int64_t group = conv.attrs.get_int("group", 1);
  const auto channels = static_cast<int64_t>(a.channels());
  if (w == nullptr || w->rank() < 3 || group < 1 || w->dim(0) % group != 0 ||
      w->dim(1) * group != channels) {
    return std::nullopt;
  }
  const std::optional<std::vector<double>> bias = conv_bias(graph, conv, *w, a.channels());
  if (!bias) return std::nullopt;
  const int64_t per_group_out = w->dim(1);
  const int64_t per_group_in = w->dim(0) / group;
  const int64_t inner = w->numel() / (w->dim(0) * per_group_out);
  // W[c, j, k...] contributes to output channel j of c's group.
  const auto channel_of = [=](int64_t i) {
    const int64_t c = i / (per_group_out * inner);
    const int64_t j = (i / inner) % per_group_out;
    return (c / per_group_in) * per_group_out + j;
  };
  return Fold{scale_weight(*w, a.scale, channel_of),
              from_doubles(w->dtype(), {channels}, affine_bias(a, *bias))};
}

// Gemm's new C = scale * beta * C + shift: [N] when C is the same for every row, else [M, N].
std::optional<Tensor> gemm_bias(const ir::Graph& graph, const ir::Node& gemm, const Tensor& b,
                                const ChannelAffine& a) {
  const auto n = static_cast<int64_t>(a.channels());
  if (!has_input(gemm, 2)) return from_doubles(b.dtype(), {n}, a.shift);
  const Tensor* c = constant_input(graph, gemm, 2);
  if (c == nullptr || c->dtype() != b.dtype() || c->rank() > 2) return std::nullopt;
  const int64_t c_rows = c->rank() == 2 ? c->dim(0) : 1;
  const int64_t c_cols = c->rank() >= 1 ? c->dim(c->rank() - 1) : 1;
  if (c_cols != 1 && c_cols != n) return std::nullopt;
  const double beta = gemm.attrs.get_float("beta", 1.0f);
  const std::vector<double> cv = to_doubles(*c);
  std::vector<double> out(static_cast<size_t>(c_rows * n));
  for (int64_t r = 0; r < c_rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const double cij = cv[static_cast<size_t>(r * c_cols + (c_cols == 1 ? 0 : j))];
      out[static_cast<size_t>(r * n + j)] =
          a.scale[static_cast<size_t>(j)] * beta * cij + a.shift[static_cast<size_t>(j)];
    }
  }
  return from_doubles(b.dtype(), c_rows == 1 ? Dims{n} : Dims{c_rows, n}, out);
}

std::optional<Fold> fold_gemm(const ir::Graph& graph, const ir::Node& gemm,
                              const ChannelAffine& a) {
  // Before opset 7, C broadcasts only with the 'broadcast' attribute.
  if (ops::resolve_op(gemm).since_version < 7) return std::nullopt;
  const Tensor* b = constant_input(graph, gemm, 1);
  if (b == nullptr || b->rank() != 2) return std::nullopt;
  const bool trans_b = gemm.attrs.get_int("transB", 0) != 0;
  const int64_t cols = b->dim(1);
  if ((trans_b ? b->dim(0) : cols) != static_cast<int64_t>(a.channels())) return std::nullopt;
  std::optional<Tensor> bias = gemm_bias(graph, gemm, *b, a);
  if (!bias) return std::nullopt;
  // Output column n is B's column n, or its row n when transB.
  Tensor w = trans_b ? scale_weight(*b, a.scale, [cols](int64_t i) { return i / cols; })
                     : scale_weight(*b, a.scale, [cols](int64_t i) { return i % cols; });
  return Fold{std::move(w), std::move(*bias), false, true};
}

std::optional<Fold> fold_matmul(const ir::Graph& graph, const ir::Node& matmul, const ir::Node& bn,
                                const ChannelAffine& a) {
  // The channel axis 1 is B's column axis only for a 2-D product; the Add needs opset 7 broadcast.
  if (graph.value(matmul.outputs[0]).desc.rank() != 2 || bn.opset < 7) return std::nullopt;
  const Tensor* b = constant_input(graph, matmul, 1);
  if (b == nullptr || b->rank() != 2 || b->dim(1) != static_cast<int64_t>(a.channels())) {
    return std::nullopt;
  }
  const int64_t cols = b->dim(1);
  return Fold{scale_weight(*b, a.scale, [cols](int64_t i) { return i % cols; }),
              from_doubles(b->dtype(), {cols}, a.shift), true, false};
}

std::optional<Fold> plan_fold(const ir::Graph& graph, const ir::Node& producer, const ir::Node& bn,
                              const ChannelAffine& a) {
  const Tensor* w = constant_input(graph, producer, 1);
  // One dtype T for X, the weights and the output: folding keeps it.
  if (w == nullptr || !is_foldable_float(w->dtype()) ||
      w->dtype() != graph.value(producer.outputs[0]).desc.dtype) {
    return std::nullopt;
  }
  if (producer.op_type == "Conv") return fold_conv(graph, producer, a);
  if (bn.op_type != "BatchNormalization") return std::nullopt;  // Mul / Div: Conv only
  if (producer.op_type == "ConvTranspose") return fold_conv_transpose(graph, producer, a);
  if (producer.op_type == "Gemm") return fold_gemm(graph, producer, a);
  if (producer.op_type == "MatMul") return fold_matmul(graph, producer, bn, a);
  return std::nullopt;
}

// Rewrites the graph for a planned fold; `bn_index` is erased unless it becomes the Add.
void apply_fold(ir::Graph& graph, size_t producer_index, size_t bn_index, Fold fold,
                PassContext& ctx) {
  const std::string weight_hint = graph.value(graph.nodes[producer_index].inputs[1]).name;
  const ir::ValueId weight = ir::add_constant(graph, weight_hint + "_bn", std::move(fold.weight));
  const ir::ValueId bias =
      ir::add_constant(graph, graph.nodes[producer_index].name + "_bn_bias", std::move(fold.bias));
  ir::Node& producer = graph.nodes[producer_index];
  ir::Node& bn = graph.nodes[bn_index];
  const std::string joined = join_origins(producer.origins()) + " + " + join_origins(bn.origins());
  producer.inputs[1] = weight;
  if (fold.bias_as_add) {
    const ir::ValueId x = bn.inputs[0];
    const ir::ValueId y = bn.outputs[0];
    bn.op_type = "Add";
    bn.inputs = {x, bias};
    bn.outputs = {y};
    bn.attrs = {};
    ctx.log.add(kName, fmt::format("{} -> MatMul '{}' with scaled weights + Add '{}' (the "
                                   "BatchNormalization's shift)",
                                   joined, producer.name, bn.name));
    return;
  }
  producer.inputs.resize(3, ir::kNoValue);
  producer.inputs[2] = bias;
  if (fold.reset_beta) producer.attrs.set("beta", 1.0f);
  producer.outputs[0] = bn.outputs[0];
  ir::add_origins(producer, bn, /*from_runs_first=*/false);
  ctx.log.add(kName, fmt::format("{} -> {} '{}' ({} folded into the weights)", joined,
                                 producer.op_type, producer.name, bn.op_type));
  graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(bn_index));
}

// Folds the BatchNormalization at `n` if it can; returns whether the graph changed.
bool try_fold(ir::Graph& graph, const ir::GraphIndex& index, size_t n, PassContext& ctx) {
  const ir::Node& bn = graph.nodes[n];
  const bool is_bn = bn.op_type == "BatchNormalization";
  const bool is_scale = bn.op_type == "Mul" || bn.op_type == "Div";
  if ((!is_bn && !is_scale) || !bn.domain.empty() || bn.inputs.empty()) return false;
  // A Mul's constant may come first; the producer's output is the other operand.
  const ir::ValueId x = is_scale && bn.inputs.size() == 2 && bn.op_type == "Mul" &&
                                graph.value(bn.inputs[0]).constant()
                            ? bn.inputs[1]
                            : bn.inputs[0];
  const int p = x == ir::kNoValue ? -1 : index.producer(x);
  if (p < 0) return false;
  const ir::Node& producer = graph.nodes[static_cast<size_t>(p)];
  if (!producer.domain.empty() || producer.outputs.empty() || producer.outputs[0] != x ||
      !index.has_single_reader(x)) {
    return false;
  }
  const Tensor* w = constant_input(graph, producer, 1);
  const std::optional<ChannelAffine> affine = is_bn ? bn_affine(graph, bn)
                                              : producer.op_type == "Conv" && w && w->rank() >= 3
                                                  ? scale_affine(graph, bn, x, w->dim(0))
                                                  : std::nullopt;
  if (!affine) return false;
  std::optional<Fold> fold = plan_fold(graph, producer, bn, *affine);
  if (!fold) return false;
  apply_fold(graph, static_cast<size_t>(p), n, std::move(*fold), ctx);
  return true;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  ir::GraphIndex index(graph);
  size_t n = 0;
  while (n < graph.nodes.size()) {
    if (!try_fold(graph, index, n, ctx)) {
      ++n;
      continue;
    }
    // A fold changes producers (a BN -> BN chain folds one after the other): re-index, and look at
    // the node now at n (the next one, or the new Add).
    index = ir::GraphIndex(graph);
  }
  return Status::ok();
}

}  // namespace
}  // namespace batchnorm_folding

const PassDef& batchnorm_folding_pass() {
  static const PassDef def{
      batchnorm_folding::kName,
      "folds inference BatchNormalization (and per-channel Mul/Div after a Conv) into a preceding "
      "Conv/ConvTranspose/Gemm/MatMul",
      batchnorm_folding::run};
  return def;
}

}  // namespace kiln::passes
