#include "ops/nn_window.h"

#include <fmt/format.h>

#include "base/int_math.h"

namespace kiln::ops {
namespace {

// Window attributes (kernel, strides, dilations, pads) above 2^31 are refused: with dims bounded by
// the 64 GiB tensor limit, every product and sum in the window arithmetic then fits in int64.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;

Status check_window_value(const NodeContext& ctx, std::string_view name,
                          const std::vector<int64_t>& v, int64_t x) {
  if (x <= kMaxWindowValue) return Status::ok();
  return ctx.unsupported("attribute '{}' = [{}] has a value above the supported maximum {}", name,
                         fmt::join(v, ", "), kMaxWindowValue);
}

Result<std::vector<int64_t>> read_positive_ints(const NodeContext& ctx, std::string_view name,
                                                size_t rank) {
  std::vector<int64_t> v = ctx.attrs().get_ints(name, std::vector<int64_t>(rank, 1));
  if (v.size() != rank) {
    return ctx.error("attribute '{}' has {} values but the op has {} spatial dims", name, v.size(),
                     rank);
  }
  for (int64_t x : v) {
    if (x < 1) return ctx.error("attribute '{}' = [{}] must be >= 1", name, fmt::join(v, ", "));
    KILN_RETURN_IF_ERROR(check_window_value(ctx, name, v, x));
  }
  return v;
}

Result<AutoPad> read_auto_pad(const NodeContext& ctx) {
  const std::string s = ctx.attrs().get_string("auto_pad", "NOTSET");
  if (s == "NOTSET") return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return ctx.error("attribute 'auto_pad' has unknown value '{}'", s);
}

}  // namespace

Status read_kernel_shape(const NodeContext& ctx, size_t spatial, bool required, WindowAttrs& w) {
  if (!ctx.attrs().has("kernel_shape")) {
    if (required) return ctx.error("attribute 'kernel_shape' is required");
    w.kernel.clear();
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(w.kernel, read_positive_ints(ctx, "kernel_shape", spatial));
  return Status::ok();
}

Status read_window_attrs(const NodeContext& ctx, WindowAttrs& w, bool with_ceil_mode) {
  const size_t rank = w.rank();
  KILN_ASSIGN_OR_RETURN(w.strides, read_positive_ints(ctx, "strides", rank));
  KILN_ASSIGN_OR_RETURN(w.dilations, read_positive_ints(ctx, "dilations", rank));
  KILN_ASSIGN_OR_RETURN(w.auto_pad, read_auto_pad(ctx));
  w.pads = ctx.attrs().get_ints("pads", std::vector<int64_t>(2 * rank, 0));
  if (w.pads.size() != 2 * rank) {
    return ctx.error("attribute 'pads' has {} values but {} spatial dims need {}", w.pads.size(),
                     rank, 2 * rank);
  }
  for (int64_t p : w.pads) {
    if (p < 0) return ctx.error("attribute 'pads' = [{}] must be >= 0", fmt::join(w.pads, ", "));
    KILN_RETURN_IF_ERROR(check_window_value(ctx, "pads", w.pads, p));
  }
  // ONNX forbids explicit pads together with auto_pad; exporters write all-zero pads next to VALID
  // or SAME, which is harmless, so only non-zero pads are rejected.
  if (w.auto_pad != AutoPad::kNotSet) {
    for (int64_t p : w.pads) {
      if (p != 0) {
        return ctx.error("attributes 'pads' = [{}] and 'auto_pad' cannot be used together",
                         fmt::join(w.pads, ", "));
      }
    }
  }
  w.ceil_mode = false;
  if (with_ceil_mode) {
    const int64_t c = ctx.attrs().get_int("ceil_mode", 0);
    if (c != 0 && c != 1) return ctx.error("attribute 'ceil_mode' must be 0 or 1, got {}", c);
    w.ceil_mode = c == 1;
  }
  return Status::ok();
}

int64_t window_out_dim(const WindowAttrs& w, size_t d, int64_t in) {
  const int64_t s = w.strides[d];
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    return ceil_div(in, s);
  }
  const auto [pb, pe] = window_pads(w, d, in);
  const int64_t span = in + pb + pe - w.dilated_kernel(d);
  if (!w.ceil_mode) return floor_div(span, s) + 1;
  int64_t out = ceil_div(span, s) + 1;
  // The last window must start inside the input or the left padding (as PyTorch and ONNX's
  // reference implementation do), not entirely in the right padding.
  if (out > 1 && (out - 1) * s >= in + pb) --out;
  return out;
}

std::pair<int64_t, int64_t> window_pads(const WindowAttrs& w, size_t d, int64_t in) {
  switch (w.auto_pad) {
    case AutoPad::kNotSet:
      return {w.pads[d], w.pads[d + w.rank()]};
    case AutoPad::kValid:
      return {0, 0};
    case AutoPad::kSameUpper:
    case AutoPad::kSameLower: {
      const int64_t out = ceil_div(in, w.strides[d]);
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[d] + w.dilated_kernel(d) - in);
      const int64_t small = total / 2;
      return w.auto_pad == AutoPad::kSameUpper ? std::pair{small, total - small}
                                               : std::pair{total - small, small};
    }
  }
  return {0, 0};
}

Result<ir::Shape> window_output_shape(const NodeContext& ctx, const ir::Shape& x,
                                      const ir::Dim& channels, const WindowAttrs& w) {
  ir::Shape out{x[0], channels};
  bool bad = false;
  std::vector<std::string> texts;  // the output dims as computed, for the error message
  for (size_t d = 0; d < w.rank(); ++d) {
    const ir::Dim& in = x[d + 2];
    if (in.is_known()) {
      const int64_t o = window_out_dim(w, d, in.value);
      bad = bad || o < 1;
      out.push_back(ir::Dim::known(o));
      texts.push_back(std::to_string(o));
      continue;
    }
    const bool same = w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower;
    const bool unpadded =
        w.auto_pad == AutoPad::kValid ||
        (w.auto_pad == AutoPad::kNotSet && w.pads[d] == 0 && w.pads[d + w.rank()] == 0);
    const bool identity = w.strides[d] == 1 && (same || (unpadded && w.dilated_kernel(d) == 1));
    out.push_back(identity ? in : ir::Dim::unknown());
    texts.push_back(out.back().to_string());
  }
  if (bad) {
    std::vector<std::string> in_texts;
    for (const ir::Dim& d : x) in_texts.push_back(d.to_string());
    return ctx.error(
        "output spatial dims must be >= 1, but input [{}] with kernel [{}], strides [{}], "
        "dilations [{}], pads [{}] gives output spatial dims [{}]",
        fmt::join(in_texts, ","), fmt::join(w.kernel, ","), fmt::join(w.strides, ","),
        fmt::join(w.dilations, ","), fmt::join(w.pads, ","), fmt::join(texts, ","));
  }
  return out;
}

Status check_output_shape(const NodeContext& ctx, DType dtype, const ir::Shape& shape) {
  Dims known;
  for (const ir::Dim& d : shape) {
    if (d.is_known()) known.push_back(d.value);
  }
  if (Status s = check_dims(known, dtype, "output"); !s.is_ok()) {
    return ctx.error("{}", s.message());
  }
  return Status::ok();
}

std::vector<int64_t> spatial_dims(const Dims& dims) {
  return std::vector<int64_t>(dims.begin() + 2, dims.end());
}

kernels::ref::PoolParams pool_params(const Dims& x, const Dims& y, const WindowAttrs& w) {
  kernels::ref::PoolParams p;
  p.batch = x[0];
  p.channels = x[1];
  p.in_dims = spatial_dims(x);
  p.out_dims = spatial_dims(y);
  p.kernel = w.kernel;
  p.strides = w.strides;
  p.dilations = w.dilations;
  for (size_t d = 0; d < w.rank(); ++d) {
    const auto [begin, end] = window_pads(w, d, p.in_dims[d]);
    p.pads_begin.push_back(begin);
    p.pads_end.push_back(end);
  }
  return p;
}

DType compute_dtype_for(DType t) { return t == DType::kF64 ? DType::kF64 : DType::kF32; }

Result<Tensor> as_dtype(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  return cast_tensor(t, dtype);
}

Status set_output_as_inferred(RunContext& ctx, size_t i, const Tensor& t) {
  KILN_ASSIGN_OR_RETURN(Tensor out, as_dtype(t, ctx.output_desc(i).dtype));
  ctx.set_output(i, std::move(out));
  return Status::ok();
}

}  // namespace kiln::ops
