#include "passes/conv_tap_pruning.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <optional>

#include "ir/graph_edit.h"

namespace kiln::passes {
namespace conv_tap_pruning {
namespace {

constexpr std::string_view kName = "conv_tap_pruning";

// One spatial axis of a Conv: input size, kernel taps, dilation, stride, pads.
struct Axis {
  int64_t in = 0, taps = 0, dilation = 1, stride = 1, pad_begin = 0, pad_end = 0;
};

// The taps an axis keeps, [first, last].
struct TapRange {
  int64_t first = 0, last = 0;
};

// Whether tap `k` reads an input index inside [0, in) for some output position.
bool reads_input(const Axis& a, int64_t outputs, int64_t k) {
  for (int64_t o = 0; o < outputs; ++o) {
    const int64_t i = o * a.stride - a.pad_begin + k * a.dilation;
    if (i >= 0 && i < a.in) return true;
    if (i >= a.in) return false;  // i only grows with o
  }
  return false;
}

// The taps of `a` to keep, when the dead ones at its ends can go with pads that stay >= 0;
// nullopt when nothing changes (or every tap is dead: the output is the bias, left to the kernel).
std::optional<TapRange> live_taps(const Axis& a) {
  const int64_t span = a.in + a.pad_begin + a.pad_end - a.dilation * (a.taps - 1) - 1;
  if (span < 0 || a.stride < 1) return std::nullopt;
  const int64_t outputs = span / a.stride + 1;
  TapRange r{0, a.taps - 1};
  while (r.first < a.taps && !reads_input(a, outputs, r.first)) ++r.first;
  if (r.first == a.taps) return std::nullopt;
  while (!reads_input(a, outputs, r.last)) --r.last;
  const bool changed = r.first > 0 || r.last < a.taps - 1;
  const bool pads_ok = a.pad_begin - r.first * a.dilation >= 0 &&
                       a.pad_end - (a.taps - 1 - r.last) * a.dilation >= 0;
  if (!changed || !pads_ok) return std::nullopt;
  return r;
}

// The weights' taps [first, last] along each spatial axis (axes 2...), every other element kept.
Tensor crop_taps(const Tensor& w, const std::vector<TapRange>& keep) {
  Dims dims = w.dims();
  const size_t spatial = keep.size();
  for (size_t j = 0; j < spatial; ++j) dims[2 + j] = keep[j].last - keep[j].first + 1;
  Tensor out(w.dtype(), dims);
  const size_t elem = dtype_size(w.dtype());
  std::vector<int64_t> src_stride(w.rank(), 1);
  for (int d = w.rank() - 2; d >= 0; --d) src_stride[d] = src_stride[d + 1] * w.dim(d + 1);
  const auto* src = static_cast<const char*>(w.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t rest = i, at = 0;
    for (int d = out.rank() - 1; d >= 0; --d) {
      const int64_t c = rest % out.dim(d);
      rest /= out.dim(d);
      at += (c + (d >= 2 ? keep[static_cast<size_t>(d - 2)].first : 0)) * src_stride[d];
    }
    std::memcpy(dst + i * static_cast<int64_t>(elem), src + at * static_cast<int64_t>(elem), elem);
  }
  return out;
}

// The Conv's spatial axes, when its input dims are numbers and its attributes explicit.
std::optional<std::vector<Axis>> conv_axes(const ir::Graph& graph, const ir::Node& conv,
                                           const Tensor& w) {
  const ir::TensorDesc& x = graph.value(conv.inputs[0]).desc;
  if (!x.has_rank() || x.rank() != w.rank() || w.rank() < 3) return std::nullopt;
  for (int d = 2; d < x.rank(); ++d) {
    if (!x.dim(d).is_known()) return std::nullopt;  // the batch and channels may be symbolic
  }
  if (conv.attrs.get_string("auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
  const auto n = static_cast<size_t>(w.rank() - 2);
  const std::vector<int64_t> dil = conv.attrs.get_ints("dilations", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> str = conv.attrs.get_ints("strides", std::vector<int64_t>(n, 1));
  const std::vector<int64_t> pads = conv.attrs.get_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (dil.size() != n || str.size() != n || pads.size() != 2 * n) return std::nullopt;
  std::vector<Axis> axes(n);
  for (size_t j = 0; j < n; ++j) {
    const int d = static_cast<int>(2 + j);
    axes[j] = Axis{x.dim(d).value, w.dim(d), dil[j], str[j], pads[j], pads[n + j]};
  }
  return axes;
}

// A QDQ model's scales for the weights `name`, when it gave some.
const quant::WeightScales* given_scales(const PassContext& ctx, const std::string& name) {
  return ctx.explicit_scales ? ctx.explicit_scales->weight_scales(name) : nullptr;
}

std::string kernel_text(const Dims& w_dims) {
  return fmt::format("{}", fmt::join(w_dims.begin() + 2, w_dims.end(), "x"));
}

// Prunes conv `n` if it can; returns whether it changed.
bool prune(ir::Graph& graph, size_t n, PassContext& ctx) {
  const ir::Node& conv = graph.nodes[n];
  if (!conv.domain.empty() || conv.op_type != "Conv" || conv.inputs.size() < 2) return false;
  const Tensor* w = graph.value(conv.inputs[1]).constant();
  if (w == nullptr) return false;
  const std::optional<std::vector<Axis>> axes = conv_axes(graph, conv, *w);
  if (!axes) return false;
  std::vector<TapRange> keep;
  bool any = false;
  for (const Axis& a : *axes) {
    const std::optional<TapRange> r = live_taps(a);
    any = any || r.has_value();
    keep.push_back(r.value_or(TapRange{0, a.taps - 1}));
  }
  if (!any) return false;
  const std::string old_name = graph.value(conv.inputs[1]).name;
  const quant::WeightScales* scales = given_scales(ctx, old_name);
  // Scales along a spatial axis would be cut with the taps (a copy: the table may grow below).
  if (scales != nullptr && scales->axis >= 2 && scales->scales.numel() > 1) return false;
  const std::optional<quant::WeightScales> kept_scales =
      scales ? std::optional(*scales) : std::nullopt;
  Tensor cropped = crop_taps(*w, keep);
  const Dims old_dims = w->dims(), new_dims = cropped.dims();
  const ir::ValueId weights = ir::add_constant(graph, old_name + "_taps", std::move(cropped));
  if (kept_scales) ctx.explicit_scales->add_weight_scales(graph.value(weights).name, *kept_scales);

  ir::Node& c = graph.nodes[n];
  const size_t rank = axes->size();
  std::vector<int64_t> pads(2 * rank), dil(rank), kernel(rank), old_pads(2 * rank), old_dil(rank);
  for (size_t j = 0; j < rank; ++j) {
    const Axis& a = (*axes)[j];
    old_pads[j] = a.pad_begin;
    old_pads[rank + j] = a.pad_end;
    old_dil[j] = a.dilation;
    pads[j] = a.pad_begin - keep[j].first * a.dilation;
    pads[rank + j] = a.pad_end - (a.taps - 1 - keep[j].last) * a.dilation;
    kernel[j] = keep[j].last - keep[j].first + 1;
    dil[j] = kernel[j] == 1 ? 1 : a.dilation;
  }
  c.inputs[1] = weights;
  c.attrs.set("pads", pads);
  c.attrs.set("dilations", dil);
  if (c.attrs.has("kernel_shape")) c.attrs.set("kernel_shape", kernel);
  ctx.log.add(kName,
              fmt::format("Conv '{}': kernel {} -> {}, pads [{}] -> [{}], dilations [{}] -> [{}] "
                          "(the dropped taps read only the padding of its {} input)",
                          c.name, kernel_text(old_dims), kernel_text(new_dims),
                          fmt::join(old_pads, ","), fmt::join(pads, ","), fmt::join(old_dil, ","),
                          fmt::join(dil, ","), graph.value(c.inputs[0]).desc.to_string()));
  return true;
}

Status run(ir::Graph& graph, PassContext& ctx) {
  for (size_t n = 0; n < graph.nodes.size(); ++n) prune(graph, n, ctx);
  return Status::ok();
}

}  // namespace
}  // namespace conv_tap_pruning

const PassDef& conv_tap_pruning_pass() {
  static const PassDef def{
      conv_tap_pruning::kName,
      "drops a Conv's kernel taps that read only padding (dilations past the input)",
      conv_tap_pruning::run};
  return def;
}

}  // namespace kiln::passes
