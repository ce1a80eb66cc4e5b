// kiln's blocked-layout ops (ops/kiln_layout.h): shape functions and reference kernels. The
// convolution's reference converts to NCHW, runs the NCHW reference and converts back.
#include "ops/kiln_layout.h"

#include "kernels/ref/layout.h"
#include "kernels/ref/movement.h"
#include "kernels/ref/pool.h"
#include "kernels/ref/resize.h"
#include "ops/families.h"
#include "ops/kiln_fused.h"
#include "ops/nhwc.h"
#include "ops/nn_conv.h"
#include "ops/nn_window.h"
#include "ops/resize_params.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

constexpr DType kF32Only[] = {DType::kF32};

// A rank-4 desc with channel dim c (known) or the input's (unknown).
ir::TensorDesc with_channels(const ir::TensorDesc& d, ir::Dim c) {
  ir::TensorDesc out = d;
  (*out.shape)[1] = std::move(c);
  return out;
}

Status require_rank4(const NodeContext& ctx, const ir::TensorDesc& d, std::string_view what) {
  if (d.has_rank() && d.rank() != 4) {
    return ctx.unsupported("{} {} is not 4-D: the nChw16c layout is for [N, C, H, W] tensors", what,
                           d.to_string());
  }
  return Status::ok();
}

Status check_padded(const NodeContext& ctx, const ir::TensorDesc& x, int64_t channels) {
  if (x.has_rank() && x.dim(1).is_known() && x.dim(1).value != ref::padded_channels(channels)) {
    return ctx.error("blocked input {} must have {} channels ({} rounded up to 16)", x.to_string(),
                     ref::padded_channels(channels), channels);
  }
  return Status::ok();
}

// S scales blocked X's c channels: [1 or N, Cp, 1, 1], blocked.
Status check_channel_scale(const NodeContext& ctx, const ir::TensorDesc& x, const ir::TensorDesc& s,
                           int64_t c) {
  KILN_RETURN_IF_ERROR(require_rank4(ctx, s, "scale S"));
  KILN_RETURN_IF_ERROR(check_padded(ctx, s, c));
  if (!x.has_rank() || !s.has_rank()) return ctx.unsupported("X and S need known ranks");
  const auto one = [](const ir::Dim& d) { return d.is_known() && d.value == 1; };
  const ir::Dim &sn = s.dim(0), &xn = x.dim(0);
  const bool same =
      (sn.is_known() && xn.is_known() && sn.value == xn.value) ||
      (!sn.is_known() && !xn.is_known() && !sn.symbol.empty() && sn.symbol == xn.symbol);
  const bool images = one(sn) || same;
  if (!images || !one(s.dim(2)) || !one(s.dim(3))) {
    return ctx.error("scale S {} must be [1 or N, C, 1, 1] for X {}", s.to_string(), x.to_string());
  }
  return Status::ok();
}

// X (blocked [N, Cp, H, W]) times S's value of the same image and lane, into ys (X's shape).
void scale_blocked(const Tensor& x, const Tensor& s, float* ys) {
  const Dims& d = x.dims();
  const int64_t blocks = d[1] / 16, hw = d[2] * d[3];
  const float* xs = x.data<float>();
  for (int64_t n = 0; n < d[0]; ++n) {
    const float* scale = s.data<float>() + (s.dims()[0] == 1 ? 0 : n) * d[1];
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t plane = (n * blocks + b) * hw;
      for (int64_t p = 0; p < hw; ++p) {
        for (int64_t l = 0; l < 16; ++l) {
          ys[(plane + p) * 16 + l] = xs[(plane + p) * 16 + l] * scale[b * 16 + l];
        }
      }
    }
  }
}

Tensor scaled_blocked(const Tensor& x, const Tensor& s) {
  Tensor y(DType::kF32, x.dims());
  scale_blocked(x, s, y.data<float>());
  return y;
}

// --- ToNchw16c / FromNchw16c
// ---------------------------------------------------------------------------

Status infer_to_nchw16c(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kF32Only, {}));
  const ir::TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(require_rank4(ctx, x, "input"));
  if (!x.has_rank()) return ctx.unsupported("input {} has no known rank", x.to_string());
  if (!x.dim(1).is_known()) {
    return ctx.unsupported("input {} has no known channel count to block", x.to_string());
  }
  ctx.set_output(0, with_channels(x, ir::Dim::known(ref::padded_channels(x.dim(1).value))));
  return Status::ok();
}

Status run_to_nchw16c(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Dims& d = x.dims();
  Tensor& y = ctx.allocate_output(0);
  ref::to_nchw16c(x.data<float>(), d[0], d[1], d[2] * d[3], y.data<float>());
  return Status::ok();
}

Result<int64_t> channels_attr(const NodeContext& ctx) {
  const int64_t c = ctx.attrs().get_int("channels", 0);
  if (c <= 0) return ctx.error("attribute channels must be positive, got {}", c);
  return c;
}

// The checks of a layout op whose input 0 is a blocked float32 [N, Cp, H, W] of known rank
// holding attribute `channels`' channels; returns that count.
Result<int64_t> blocked_input_channels(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kF32Only, {}));
  const ir::TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(require_rank4(ctx, x, "input"));
  KILN_ASSIGN_OR_RETURN(const int64_t c, channels_attr(ctx));
  KILN_RETURN_IF_ERROR(check_padded(ctx, x, c));
  if (!x.has_rank()) return ctx.unsupported("input {} has no known rank", x.to_string());
  return c;
}

Status infer_from_nchw16c(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const int64_t c, blocked_input_channels(ctx));
  ctx.set_output(0, with_channels(x, ir::Dim::known(c)));
  return Status::ok();
}

Status run_from_nchw16c(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Dims& d = x.dims();
  KILN_ASSIGN_OR_RETURN(const int64_t c, channels_attr(ctx));
  Tensor& y = ctx.allocate_output(0);
  ref::from_nchw16c(x.data<float>(), d[0], c, d[2] * d[3], y.data<float>());
  return Status::ok();
}

// --- ConvNchw16c
// ---------------------------------------------------------------------------------

// True when ConvNchw16c's X is NCHW (attribute x_layout "nchw": a first layer of few channels,
// whose output alone is blocked); else X is blocked ("nchw16c", the default).
Result<bool> plain_x(const NodeContext& ctx) {
  const std::string layout = ctx.attrs().get_string("x_layout", "nchw16c");
  if (layout != "nchw16c" && layout != "nchw") {
    return ctx.error("x_layout must be \"nchw16c\" or \"nchw\", got \"{}\"", layout);
  }
  return layout == "nchw";
}

// The input channel count W implies (C = W's dim 1 x group).
Result<int64_t> conv_in_channels(const NodeContext& ctx, const ir::TensorDesc& w) {
  if (!w.has_rank() || w.rank() != 4 || !w.dim(1).is_known()) {
    return ctx.unsupported("weights {} must be 4-D with a known dim 1", w.to_string());
  }
  return w.dim(1).value * ctx.attrs().get_int("group", 1);
}

// The blocked output of a convolution whose X (of c channels), weights (input w) and bias (input
// b) give Y's shape, padded to whole blocks; a residual at input z must match it.
Result<ir::TensorDesc> blocked_conv_output(InferContext& ctx, const ir::TensorDesc& x, int64_t c,
                                           size_t w, size_t b, size_t z) {
  const ir::TensorDesc* bias = ctx.has_input(b) ? &ctx.input(b) : nullptr;
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y, conv_output_desc(ctx, with_channels(x, ir::Dim::known(c)),
                                                           ctx.input(w), bias, DType::kF32));
  if (!y.has_rank() || !y.dim(1).is_known())
    return ctx.unsupported("output {} has no known channel count", y.to_string());
  y = with_channels(y, ir::Dim::known(ref::padded_channels(y.dim(1).value)));
  if (ctx.has_input(z)) KILN_RETURN_IF_ERROR(check_residual(ctx, ctx.input(z), y));
  return y;
}

Status infer_conv_nchw16c(InferContext& ctx) {
  static constexpr size_t kSame[] = {1, 2, 3, 4};
  KILN_RETURN_IF_ERROR(require_input(ctx, 1, "W"));
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kF32Only, kSame));
  KILN_RETURN_IF_ERROR(read_activation(ctx).status());
  const ir::TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(require_rank4(ctx, x, "input X"));
  if (!x.has_rank()) return ctx.unsupported("input X {} has no known rank", x.to_string());
  KILN_ASSIGN_OR_RETURN(const int64_t c, conv_in_channels(ctx, ctx.input(1)));
  KILN_ASSIGN_OR_RETURN(const bool plain, plain_x(ctx));
  if (!plain) KILN_RETURN_IF_ERROR(check_padded(ctx, x, c));
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y, blocked_conv_output(ctx, x, c, 1, 2, 3));
  if (ctx.has_input(kConvNchw16cScaleInput)) {
    if (plain) return ctx.error("a channel scale S needs a blocked X, not x_layout \"nchw\"");
    KILN_RETURN_IF_ERROR(check_channel_scale(ctx, x, ctx.input(kConvNchw16cScaleInput), c));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// A blocked tensor as the NCHW tensor of c channels it holds.
Tensor unblocked(const Tensor& x, int64_t c) {
  const Dims& d = x.dims();
  Tensor out(DType::kF32, {d[0], c, d[2], d[3]});
  ref::from_nchw16c(x.data<float>(), d[0], c, d[2] * d[3], out.data<float>());
  return out;
}

Status store_blocked_conv_output(RunContext& ctx, const Tensor& y, const Tensor* z);

Status run_conv_nchw16c(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(
      const int64_t c,
      conv_in_channels(ctx, ir::TensorDesc::of_dims(DType::kF32, ctx.input(1).dims())));
  const int64_t m = ctx.input(1).dims()[0];
  KILN_ASSIGN_OR_RETURN(const bool plain, plain_x(ctx));
  const Tensor x =
      plain ? ctx.input(0)
            : unblocked(ctx.has_input(kConvNchw16cScaleInput)
                            ? scaled_blocked(ctx.input(0), ctx.input(kConvNchw16cScaleInput))
                            : ctx.input(0),
                        c);
  Tensor z;
  if (ctx.has_input(3)) z = unblocked(ctx.input(3), m);
  KILN_ASSIGN_OR_RETURN(
      const Tensor y,
      fused_conv_reference(ctx, x, ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr,
                           z.defined() ? &z : nullptr));
  return store_blocked_conv_output(ctx, y, ctx.has_input(3) ? &ctx.input(3) : nullptr);
}

// y (NCHW) into the blocked output; its padding lanes hold act(0 + the blocked residual z's
// padding), as the optimized kernels leave them (their weights and bias are zero there).
Status store_blocked_conv_output(RunContext& ctx, const Tensor& y, const Tensor* z) {
  const Dims& d = y.dims();
  const int64_t m = d[1];
  Tensor& out = ctx.allocate_output(0);
  ref::to_nchw16c(y.data<float>(), d[0], m, d[2] * d[3], out.data<float>());
  KILN_ASSIGN_OR_RETURN(const ref::ActivationParams act, read_activation(ctx));
  const float* zp = z != nullptr ? z->data<float>() : nullptr;
  float* o = out.data<float>();
  const int64_t mp = ref::padded_channels(m), hw = d[2] * d[3];
  for (int64_t n = 0; n < d[0]; ++n) {
    for (int64_t ch = m; ch < mp; ++ch) {
      const int64_t at = (n * mp + ch - ch % 16) * hw + ch % 16;
      for (int64_t p = 0; p < hw; ++p) {
        float v = zp != nullptr ? zp[at + p * 16] : 0.0f;
        ref::apply_activation(act, &v, 1);
        o[at + p * 16] = v;
      }
    }
  }
  return Status::ok();
}

// --- ExpandDwNchw16c
// ---------------------------------------------------------------------------------

constexpr size_t kExpandW = 1, kExpandB = 2, kDwW = 3, kDwB = 4, kDwZ = 5;

// We must be [E, C, 1, 1] for X's C channels; E is returned.
Result<int64_t> expansion_channels(const NodeContext& ctx, const ir::TensorDesc& we) {
  if (!we.has_rank() || we.rank() != 4 || !we.dim(0).is_known() || !we.dim(1).is_known() ||
      we.dim(2) != ir::Dim::known(1) || we.dim(3) != ir::Dim::known(1)) {
    return ctx.unsupported("expansion weights We {} must be [E, C, 1, 1] with known E and C",
                           we.to_string());
  }
  return we.dim(0).value;
}

Status infer_expand_dw_nchw16c(InferContext& ctx) {
  static constexpr size_t kSame[] = {1, 2, 3, 4, 5};
  KILN_RETURN_IF_ERROR(require_input(ctx, kExpandW, "We"));
  KILN_RETURN_IF_ERROR(require_input(ctx, kDwW, "Wd"));
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kF32Only, kSame));
  KILN_RETURN_IF_ERROR(read_activation(ctx).status());
  KILN_RETURN_IF_ERROR(read_activation(ctx, "expand_").status());
  const ir::TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(require_rank4(ctx, x, "input X"));
  if (!x.has_rank()) return ctx.unsupported("input X {} has no known rank", x.to_string());
  const ir::TensorDesc& we = ctx.input(kExpandW);
  KILN_ASSIGN_OR_RETURN(const int64_t e, expansion_channels(ctx, we));
  KILN_RETURN_IF_ERROR(check_padded(ctx, x, we.dim(1).value));
  const ir::TensorDesc* be = ctx.has_input(kExpandB) ? &ctx.input(kExpandB) : nullptr;
  if (be != nullptr && be->is_static() && dims_numel(be->static_dims()) != e) {
    return ctx.error("expansion bias Be {} must hold {} values", ctx.input(kExpandB).to_string(),
                     e);
  }
  KILN_ASSIGN_OR_RETURN(const int64_t c, conv_in_channels(ctx, ctx.input(kDwW)));
  if (c != e || ctx.attrs().get_int("group", 1) != e) {
    return ctx.error(
        "the depthwise weights Wd {} with group {} must read the expansion's {} channels",
        ctx.input(kDwW).to_string(), ctx.attrs().get_int("group", 1), e);
  }
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y, blocked_conv_output(ctx, x, e, kDwW, kDwB, kDwZ));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// E = act_e(We x X + Be) on NCHW x [N, C, H, W].
Result<Tensor> expansion_reference(const NodeContext& ctx, const Tensor& x, const Tensor& we,
                                   const Tensor* be) {
  KILN_ASSIGN_OR_RETURN(const ref::ActivationParams act, read_activation(ctx, "expand_"));
  const Dims& d = x.dims();
  const int64_t e = we.dims()[0], c = d[1], hw = d[2] * d[3];
  Tensor out(DType::kF32, {d[0], e, d[2], d[3]});
  const float *xs = x.data<float>(), *w = we.data<float>();
  float* o = out.data<float>();
  for (int64_t n = 0; n < d[0]; ++n) {
    for (int64_t m = 0; m < e; ++m) {
      for (int64_t p = 0; p < hw; ++p) {
        double sum = be != nullptr ? be->data<float>()[m] : 0.0;
        for (int64_t k = 0; k < c; ++k) sum += double{w[m * c + k]} * xs[(n * c + k) * hw + p];
        o[(n * e + m) * hw + p] = static_cast<float>(sum);
      }
    }
  }
  ref::apply_activation(act, o, out.numel());
  return out;
}

Status run_expand_dw_nchw16c(RunContext& ctx) {
  const Tensor& we = ctx.input(kExpandW);
  const Tensor x = unblocked(ctx.input(0), we.dims()[1]);
  KILN_ASSIGN_OR_RETURN(
      const Tensor e,
      expansion_reference(ctx, x, we, ctx.has_input(kExpandB) ? &ctx.input(kExpandB) : nullptr));
  const Tensor* zb = ctx.has_input(kDwZ) ? &ctx.input(kDwZ) : nullptr;
  Tensor z;
  if (zb != nullptr) z = unblocked(*zb, we.dims()[0]);
  KILN_ASSIGN_OR_RETURN(const Tensor y,
                        fused_conv_reference(ctx, e, ctx.input(kDwW),
                                             ctx.has_input(kDwB) ? &ctx.input(kDwB) : nullptr,
                                             z.defined() ? &z : nullptr));
  return store_blocked_conv_output(ctx, y, zb);
}

// --- GlobalAveragePoolNchw16c, MulNchw16c
// ------------------------------------------------------------------------------

Status infer_pool_nchw16c(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(blocked_input_channels(ctx).status());
  ir::TensorDesc y = x;
  (*y.shape)[2] = (*y.shape)[3] = ir::Dim::known(1);
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status run_pool_nchw16c(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Dims& d = x.dims();
  const int64_t planes = d[0] * d[1] / 16, hw = d[2] * d[3];
  Tensor& y = ctx.allocate_output(0);
  const float* xs = x.data<float>();
  float* ys = y.data<float>();
  for (int64_t b = 0; b < planes; ++b) {
    for (int64_t l = 0; l < 16; ++l) {
      double sum = 0;
      for (int64_t p = 0; p < hw; ++p) sum += xs[(b * hw + p) * 16 + l];
      ys[b * 16 + l] = static_cast<float>(sum / static_cast<double>(hw));
    }
  }
  return Status::ok();
}

Status infer_mul_nchw16c(InferContext& ctx) {
  static constexpr size_t kSame[] = {1};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kF32Only, kSame));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& s = ctx.input(1);
  KILN_RETURN_IF_ERROR(require_rank4(ctx, x, "input X"));
  KILN_ASSIGN_OR_RETURN(const int64_t c, channels_attr(ctx));
  KILN_RETURN_IF_ERROR(check_padded(ctx, x, c));
  KILN_RETURN_IF_ERROR(check_channel_scale(ctx, x, s, c));
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_mul_nchw16c(RunContext& ctx) {
  Tensor& y = ctx.allocate_output(0);
  scale_blocked(ctx.input(0), ctx.input(1), y.data<float>());
  return Status::ok();
}

// --- MaxPoolNchw16c
// ----------------------------------------------------------------------------------

// MaxPool's window (opset 12: ceil_mode, dilations) over a 2-D blocked X.
Result<WindowAttrs> max_pool_window(const NodeContext& ctx) {
  WindowAttrs w;
  KILN_RETURN_IF_ERROR(read_kernel_shape(ctx, 2, /*required=*/true, w));
  KILN_RETURN_IF_ERROR(read_window_attrs(ctx, w, /*with_ceil_mode=*/true));
  return w;
}

Status infer_max_pool_nchw16c(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(blocked_input_channels(ctx).status());
  KILN_ASSIGN_OR_RETURN(const WindowAttrs w, max_pool_window(ctx));
  KILN_ASSIGN_OR_RETURN(ir::Shape shape, window_output_shape(ctx, *x.shape, x.dim(1), w));
  KILN_RETURN_IF_ERROR(check_output_shape(ctx, x.dtype, shape));
  ctx.set_output(0, ir::TensorDesc::of(x.dtype, std::move(shape)));
  return Status::ok();
}

// Unblocked to NCHW (all Cp lanes), the NCHW reference, blocked back.
Status run_max_pool_nchw16c(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Dims& d = x.dims();
  KILN_ASSIGN_OR_RETURN(const WindowAttrs w, max_pool_window(ctx));
  Tensor& y = ctx.allocate_output(0);
  const Dims& yd = y.dims();
  const ref::PoolParams p = pool_params(d, yd, w);
  Tensor xp(DType::kF32, d), yp(DType::kF32, yd);
  ref::from_nchw16c(x.data<float>(), d[0], d[1], d[2] * d[3], xp.data<float>());
  ref::max_pool<float>(p, xp.data<float>(), yp.data<float>(), nullptr, false);
  ref::to_nchw16c(yp.data<float>(), yd[0], yd[1], yd[2] * yd[3], y.data<float>());
  return Status::ok();
}

// --- MaxPoolNhwc ---------------------------------------------------------------------------------

Status infer_max_pool_nhwc(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  if (x.dtype != DType::kU8) {
    return ctx.unsupported("X {} must be uint8 (channels-last INT8 tensors)", x.to_string());
  }
  if (!x.has_rank() || x.rank() != 4) {
    return ctx.unsupported("X {} must be [N, H, W, C]", x.to_string());
  }
  KILN_ASSIGN_OR_RETURN(const WindowAttrs w, max_pool_window(ctx));
  const ir::TensorDesc nchw = permuted(x, kNhwcToNchw);
  KILN_ASSIGN_OR_RETURN(ir::Shape y, window_output_shape(ctx, *nchw.shape, nchw.dim(1), w));
  ir::TensorDesc out = permuted(ir::TensorDesc::of(x.dtype, std::move(y)), kNchwToNhwc);
  KILN_RETURN_IF_ERROR(check_output_shape(ctx, x.dtype, *out.shape));
  ctx.set_output(0, std::move(out));
  return Status::ok();
}

// Transposed to NCHW, MaxPool's reference, transposed back.
Status run_max_pool_nhwc(RunContext& ctx) {
  const Tensor x = permuted(ctx.input(0), kNhwcToNchw);
  KILN_ASSIGN_OR_RETURN(const WindowAttrs w, max_pool_window(ctx));
  Tensor& y = ctx.allocate_output(0);
  Tensor y_nchw(DType::kU8, permuted(y.dims(), kNhwcToNchw));
  ref::max_pool<uint8_t>(pool_params(x.dims(), y_nchw.dims(), w), x.data<uint8_t>(),
                         y_nchw.data<uint8_t>(), nullptr, false);
  ref::transpose(y_nchw.raw_data(), 1, y_nchw.dims(), kNchwToNhwc, y.raw_data());
  return Status::ok();
}

// --- ResizeNchw16c
// ----------------------------------------------------------------------------------

// Resize's own shape function at resize_version, on the blocked dims; N and C must stay.
Status infer_resize_nchw16c(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(blocked_input_channels(ctx).status());
  std::vector<const ir::TensorDesc*> descs;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    descs.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
    values.push_back(ctx.has_input(i) ? ctx.input_value(i) : nullptr);
  }
  const OpDef* def = op_registry().find("", "Resize");
  const int version = resize_nchw16c_version(ctx.attrs());
  if (def == nullptr || resolve_since_version(*def, version) != version) {
    return ctx.error("resize_version {} is not a version of Resize", version);
  }
  InferContext resize(ctx.node(), version, std::move(descs), std::move(values));
  KILN_RETURN_IF_ERROR(def->infer(resize));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& y = resize.outputs()[0];
  if (!y.has_rank() || y.rank() != 4 || !ir::same_dim(y.dim(0), x.dim(0)) ||
      !ir::same_dim(y.dim(1), x.dim(1))) {
    return ctx.error("resizes the blocked input {} to {}: only H and W may change", x.to_string(),
                     y.to_string());
  }
  ctx.set_output(0, y);
  return Status::ok();
}

// Unblocked to NCHW (all Cp lanes), the reference Resize, blocked back.
Status run_resize_nchw16c(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Dims& d = x.dims();
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    values.push_back(ctx.has_input(i) ? &ctx.input(i) : nullptr);
  }
  KILN_ASSIGN_OR_RETURN(
      const ref::ResizeParams p,
      resize_params(NodeContext(ctx.node(), resize_nchw16c_version(ctx.attrs())), d, values));
  KILN_ASSIGN_OR_RETURN(const Tensor xd, as_dtype(unblocked(x, d[1]), DType::kF64));
  Tensor yd(DType::kF64, p.out_dims);
  ref::resize(p, xd.data<double>(), yd.data<double>());
  KILN_ASSIGN_OR_RETURN(const Tensor yp, as_dtype(yd, DType::kF32));
  Tensor& y = ctx.allocate_output(0);
  const Dims& y_dims = y.dims();
  if (y_dims != p.out_dims) {
    return ctx.error("output is {} but the resize gives {}",
                     ir::TensorDesc::of_dims(DType::kF32, y_dims).to_string(),
                     ir::TensorDesc::of_dims(DType::kF32, p.out_dims).to_string());
  }
  ref::to_nchw16c(yp.data<float>(), y_dims[0], y_dims[1], y_dims[2] * y_dims[3], y.data<float>());
  return Status::ok();
}

}  // namespace

int resize_nchw16c_version(const ir::Attributes& attrs) {
  return static_cast<int>(attrs.get_int("resize_version", 13));
}

void register_kiln_layout_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = kToNchw16c,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .infer = infer_to_nchw16c,
         .run = run_to_nchw16c,
         .domain = kKilnDomain});
  r.add({.op_type = kFromNchw16c,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"channels", AttrType::kInt}},
         .infer = infer_from_nchw16c,
         .run = run_from_nchw16c,
         .domain = kKilnDomain});
  std::vector<AttrSpec> conv_attrs = fused_conv_attrs();
  conv_attrs.push_back({"x_layout", AttrType::kString});
  r.add({.op_type = kConvNchw16c,
         .since_versions = {1},
         .min_inputs = 2,
         .max_inputs = 5,
         .attrs = std::move(conv_attrs),
         .infer = infer_conv_nchw16c,
         .run = run_conv_nchw16c,
         .domain = kKilnDomain});
  std::vector<AttrSpec> expand_dw_attrs = fused_conv_attrs();
  expand_dw_attrs.push_back({"expand_activation", AttrType::kString});
  expand_dw_attrs.push_back({"expand_activation_params", AttrType::kFloats});
  r.add({.op_type = kExpandDwNchw16c,
         .since_versions = {1},
         .min_inputs = 4,
         .max_inputs = 6,
         .attrs = std::move(expand_dw_attrs),
         .infer = infer_expand_dw_nchw16c,
         .run = run_expand_dw_nchw16c,
         .domain = kKilnDomain});
  r.add({.op_type = kGlobalAveragePoolNchw16c,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"channels", AttrType::kInt}},
         .infer = infer_pool_nchw16c,
         .run = run_pool_nchw16c,
         .domain = kKilnDomain});
  // MaxPool's opset-12 attributes; the blocked form also carries its real channel count.
  const std::vector<AttrSpec> max_pool_attrs = {
      {"auto_pad", AttrType::kString}, {"ceil_mode", AttrType::kInt},
      {"dilations", AttrType::kInts},  {"kernel_shape", AttrType::kInts},
      {"pads", AttrType::kInts},       {"storage_order", AttrType::kInt},
      {"strides", AttrType::kInts}};
  std::vector<AttrSpec> max_pool_nchw16c_attrs = max_pool_attrs;
  max_pool_nchw16c_attrs.push_back({"channels", AttrType::kInt});
  r.add({.op_type = kMaxPoolNchw16c,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = std::move(max_pool_nchw16c_attrs),
         .infer = infer_max_pool_nchw16c,
         .run = run_max_pool_nchw16c,
         .domain = kKilnDomain});
  r.add({.op_type = kMaxPoolNhwc,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = max_pool_attrs,
         .infer = infer_max_pool_nhwc,
         .run = run_max_pool_nhwc,
         .domain = kKilnDomain});
  std::vector<AttrSpec> resize_nchw16c_attrs = resize_attrs();
  resize_nchw16c_attrs.push_back({"resize_version", AttrType::kInt});
  resize_nchw16c_attrs.push_back({"channels", AttrType::kInt});
  r.add({.op_type = kResizeNchw16c,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 4,
         .attrs = std::move(resize_nchw16c_attrs),
         .infer = infer_resize_nchw16c,
         .run = run_resize_nchw16c,
         .domain = kKilnDomain});
  r.add({.op_type = kMulNchw16c,
         .since_versions = {1},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"channels", AttrType::kInt}},
         .infer = infer_mul_nchw16c,
         .run = run_mul_nchw16c,
         .domain = kKilnDomain});
}

}  // namespace kiln::ops
