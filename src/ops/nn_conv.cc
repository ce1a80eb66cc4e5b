// Conv and ConvTranspose: attribute validation, shape functions and the reference kernel binding.
#include "ops/nn_conv.h"

#include <fmt/format.h>

#include <optional>

#include "kernels/ref/conv.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

std::string shape_text(const ir::TensorDesc& d) { return d.to_string(); }

// What Conv and ConvTranspose share after validation.
struct ConvSetup {
  WindowAttrs window;  // kernel empty when unknown at import time
  int64_t group = 1;
  ir::Dim out_channels;
  std::vector<int64_t> output_padding;  // ConvTranspose only
  std::vector<int64_t> output_shape;    // ConvTranspose only, spatial, empty when absent
};

// The kernel extents: kernel_shape when given (checked against W), else W's spatial dims.
Status resolve_kernel(const NodeContext& ctx, const ir::TensorDesc& w, size_t spatial,
                      WindowAttrs& win) {
  KILN_RETURN_IF_ERROR(read_kernel_shape(ctx, spatial, /*required=*/false, win));
  if (!win.kernel.empty()) {
    for (size_t d = 0; d < spatial; ++d) {
      const ir::Dim& wd = w.dim(static_cast<int>(d + 2));
      if (wd.is_known() && wd.value != win.kernel[d]) {
        return ctx.error("attribute 'kernel_shape' = [{}] does not match weight W {}",
                         fmt::join(win.kernel, ", "), shape_text(w));
      }
    }
    return Status::ok();
  }
  for (size_t d = 0; d < spatial; ++d) {
    const ir::Dim& wd = w.dim(static_cast<int>(d + 2));
    if (!wd.is_known()) {
      win.kernel.clear();
      return Status::ok();
    }
    if (wd.value < 1) return ctx.error("weight W {} has an empty kernel", shape_text(w));
    win.kernel.push_back(wd.value);
  }
  return Status::ok();
}

// Checks channel counts. Conv: W [M, C/group, ...]; ConvTranspose: W [C, M/group, ...].
Status check_channels(const NodeContext& ctx, const ir::TensorDesc& x, const ir::TensorDesc& w,
                      bool transpose, ConvSetup& s) {
  const ir::Dim& c = x.dim(1);
  const ir::Dim& w0 = w.dim(0);
  const ir::Dim& w1 = w.dim(1);
  const int64_t g = s.group;
  if (c.is_known() && c.value % g != 0) {
    return ctx.error("input X {} has {} channels, not divisible by group {}", shape_text(x),
                     c.value, g);
  }
  // W.shape[1] x group: the input channels of Conv, the output channels of ConvTranspose.
  std::optional<int64_t> w1g;
  if (w1.is_known()) {
    KILN_ASSIGN_OR_RETURN(w1g, checked_mul(ctx, w1.value, g, "W.shape[1] x group"));
  }
  if (!transpose) {
    if (c.is_known() && w1g && c.value != *w1g) {
      return ctx.error(
          "input X {} has {} channels but weight W {} expects {} (W.shape[1] {} x group {})",
          shape_text(x), c.value, shape_text(w), *w1g, w1.value, g);
    }
    if (w0.is_known() && w0.value % g != 0) {
      return ctx.error("weight W {} has {} output channels, not divisible by group {}",
                       shape_text(w), w0.value, g);
    }
    s.out_channels = w0;
  } else {
    if (c.is_known() && w0.is_known() && c.value != w0.value) {
      return ctx.error("input X {} has {} channels but weight W {} expects {} (W.shape[0])",
                       shape_text(x), c.value, shape_text(w), w0.value);
    }
    s.out_channels = w1g ? ir::Dim::known(*w1g) : ir::Dim::unknown();
  }
  return Status::ok();
}

Status check_bias(const NodeContext& ctx, const ir::TensorDesc& b, const ir::Dim& m) {
  if (!b.has_rank()) return Status::ok();
  if (b.rank() != 1) return ctx.error("bias B {} must be 1-D", shape_text(b));
  if (b.dim(0).is_known() && m.is_known() && b.dim(0).value != m.value) {
    return ctx.error("bias B {} has {} values but there are {} output channels", shape_text(b),
                     b.dim(0).value, m.value);
  }
  return Status::ok();
}

Status read_transpose_attrs(const NodeContext& ctx, size_t spatial, ConvSetup& s) {
  s.output_padding = ctx.attrs().get_ints("output_padding", std::vector<int64_t>(spatial, 0));
  if (s.output_padding.size() != spatial) {
    return ctx.error("attribute 'output_padding' has {} values but the op has {} spatial dims",
                     s.output_padding.size(), spatial);
  }
  for (size_t d = 0; d < spatial; ++d) {
    const int64_t op = s.output_padding[d];
    if (op < 0 ||
        (!s.window.kernel.empty() && op >= std::max(s.window.strides[d], s.window.dilations[d]))) {
      return ctx.error(
          "attribute 'output_padding' = [{}] must be >= 0 and smaller than the stride "
          "or the dilation",
          fmt::join(s.output_padding, ", "));
    }
  }
  s.output_shape = ctx.attrs().get_ints("output_shape");
  if (s.output_shape.size() == spatial + 2) {  // some exporters include N and C
    s.output_shape.erase(s.output_shape.begin(), s.output_shape.begin() + 2);
  }
  if (!s.output_shape.empty() && s.output_shape.size() != spatial) {
    return ctx.error("attribute 'output_shape' has {} values but the op has {} spatial dims",
                     ctx.attrs().get_ints("output_shape").size(), spatial);
  }
  for (int64_t o : s.output_shape) {
    if (o < 1) return ctx.error("attribute 'output_shape' has a dim < 1 ({})", o);
  }
  return Status::ok();
}

// Validates X, W and B (when present; rank known for X and W) and the attributes.
Result<ConvSetup> conv_setup(const NodeContext& ctx, const ir::TensorDesc& x,
                             const ir::TensorDesc& w, const ir::TensorDesc* b, bool transpose) {
  if (x.rank() < 3) {
    return ctx.error("input X {} must have rank >= 3 (N, C, spatial dims)", shape_text(x));
  }
  if (w.rank() != x.rank()) {
    return ctx.error("weight W {} must have the same rank as input X {}", shape_text(w),
                     shape_text(x));
  }
  const size_t spatial = static_cast<size_t>(x.rank() - 2);
  ConvSetup s;
  s.group = ctx.attrs().get_int("group", 1);
  if (s.group < 1) return ctx.error("attribute 'group' must be >= 1, got {}", s.group);
  KILN_RETURN_IF_ERROR(resolve_kernel(ctx, w, spatial, s.window));
  if (!s.window.kernel.empty()) {
    KILN_RETURN_IF_ERROR(read_window_attrs(ctx, s.window, /*with_ceil_mode=*/false));
  }
  KILN_RETURN_IF_ERROR(check_channels(ctx, x, w, transpose, s));
  if (b != nullptr) KILN_RETURN_IF_ERROR(check_bias(ctx, *b, s.out_channels));
  if (transpose) KILN_RETURN_IF_ERROR(read_transpose_attrs(ctx, spatial, s));
  return s;
}

// ConvTranspose output extent and (begin, end) pads along spatial dim d for input extent `in`.
struct TransposeDim {
  int64_t out;
  int64_t pad_begin;
};
TransposeDim transpose_dim(const ConvSetup& s, size_t d, int64_t in) {
  const WindowAttrs& w = s.window;
  const int64_t full = w.strides[d] * (in - 1) + s.output_padding[d] + w.dilated_kernel(d);
  int64_t out = 0;
  if (!s.output_shape.empty()) {
    out = s.output_shape[d];
  } else if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    out = in * w.strides[d];
  } else if (w.auto_pad == AutoPad::kValid) {
    return {full, 0};
  } else {
    return {full - w.pads[d] - w.pads[d + w.rank()], w.pads[d]};
  }
  // The spec's derivation: the total padding is split evenly, the odd unit going to the end for
  // SAME_UPPER and to the beginning otherwise. The total is negative when output_shape asks for
  // more than the full result; floor division (as in ONNX's reference) then appends the extra
  // outputs at the end, where only the bias reaches.
  const int64_t total = full - out;
  const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
  const int64_t begin = w.auto_pad == AutoPad::kSameUpper ? half : total - half;
  return {out, begin};
}

Result<ir::Shape> transpose_output_shape(const NodeContext& ctx, const ir::Shape& x,
                                         const ConvSetup& s) {
  ir::Shape out{x[0], s.out_channels};
  bool bad = false;
  std::vector<std::string> texts;  // the output dims as computed, for the error message
  for (size_t d = 0; d < s.window.rank(); ++d) {
    const ir::Dim& in = x[d + 2];
    if (!s.output_shape.empty()) {
      out.push_back(ir::Dim::known(s.output_shape[d]));
      texts.push_back(std::to_string(s.output_shape[d]));
    } else if (in.is_known()) {
      const int64_t o = transpose_dim(s, d, in.value).out;
      bad = bad || o < 1;
      out.push_back(ir::Dim::known(o));
      texts.push_back(std::to_string(o));
    } else {
      out.push_back(ir::Dim::unknown());
      texts.push_back("?");
    }
  }
  if (bad) {
    return ctx.error(
        "output spatial dims must be >= 1, but the attributes give output spatial dims [{}]",
        fmt::join(texts, ","));
  }
  return out;
}

Result<ir::TensorDesc> output_desc(const NodeContext& ctx, ir::TensorDesc x,
                                   const ir::TensorDesc& w, const ir::TensorDesc* b, bool transpose,
                                   DType dtype) {
  if (!x.has_rank() && w.has_rank()) x.shape = ir::Shape(static_cast<size_t>(w.rank()), ir::Dim{});
  if (!x.has_rank() || !w.has_rank()) return ir::TensorDesc::unknown_shape(dtype);
  KILN_ASSIGN_OR_RETURN(ConvSetup s, conv_setup(ctx, x, w, b, transpose));
  ir::Shape out;
  if (s.window.kernel.empty()) {  // W's kernel dims unknown: only N and M are known
    out = ir::Shape{x.dim(0), s.out_channels};
    out.resize(static_cast<size_t>(x.rank()), ir::Dim::unknown());
  } else if (transpose) {
    KILN_ASSIGN_OR_RETURN(out, transpose_output_shape(ctx, *x.shape, s));
  } else {
    KILN_ASSIGN_OR_RETURN(out, window_output_shape(ctx, *x.shape, s.out_channels, s.window));
  }
  KILN_RETURN_IF_ERROR(check_output_shape(ctx, dtype, out));
  return ir::TensorDesc::of(dtype, std::move(out));
}

Status infer_conv_common(InferContext& ctx, bool transpose) {
  static constexpr size_t kSame[] = {1, 2};
  KILN_RETURN_IF_ERROR(require_input(ctx, 1, "W"));
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes, kSame));
  const ir::TensorDesc* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y, output_desc(ctx, ctx.input(0), ctx.input(1), b, transpose,
                                                      ctx.input(0).dtype));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status infer_conv(InferContext& ctx) { return infer_conv_common(ctx, false); }
Status infer_conv_transpose(InferContext& ctx) { return infer_conv_common(ctx, true); }

// Kernel parameters for concrete X and W (already validated by the shape function).
Result<kernels::ref::ConvParams> conv_params(const NodeContext& ctx, const Tensor& x,
                                             const Tensor& w, bool transpose) {
  const auto xd = ir::TensorDesc::of_dims(x.dtype(), x.dims());
  const auto wd = ir::TensorDesc::of_dims(w.dtype(), w.dims());
  KILN_ASSIGN_OR_RETURN(ConvSetup s, conv_setup(ctx, xd, wd, nullptr, transpose));
  kernels::ref::ConvParams p;
  p.batch = x.dim(0);
  p.in_channels = x.dim(1);
  p.out_channels = s.out_channels.value;
  p.group = s.group;
  p.in_dims = spatial_dims(x.dims());
  p.kernel = s.window.kernel;
  p.strides = s.window.strides;
  p.dilations = s.window.dilations;
  for (size_t d = 0; d < s.window.rank(); ++d) {
    const int64_t in = p.in_dims[d];
    if (transpose) {
      const TransposeDim t = transpose_dim(s, d, in);
      p.out_dims.push_back(t.out);
      p.pads_begin.push_back(t.pad_begin);
    } else {
      p.out_dims.push_back(window_out_dim(s.window, d, in));
      p.pads_begin.push_back(window_pads(s.window, d, in).first);
    }
  }
  return p;
}

Status run_conv_common(RunContext& ctx, bool transpose) {
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(Tensor x, as_dtype(ctx.input(0), compute));
  KILN_ASSIGN_OR_RETURN(Tensor w, as_dtype(ctx.input(1), compute));
  Tensor b;
  if (ctx.has_input(2)) {
    KILN_ASSIGN_OR_RETURN(b, as_dtype(ctx.input(2), compute));
  }
  KILN_ASSIGN_OR_RETURN(kernels::ref::ConvParams p, conv_params(ctx, x, w, transpose));
  Tensor y(compute, ctx.output_desc(0).static_dims());
  dispatch_dtype(compute, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      const T* bias = b.defined() ? b.data<T>() : nullptr;
      if (transpose) {
        kernels::ref::conv_transpose<T>(p, x.data<T>(), w.data<T>(), bias, y.data<T>());
      } else {
        kernels::ref::conv<T>(p, x.data<T>(), w.data<T>(), bias, y.data<T>());
      }
    }
  });
  return set_output_as_inferred(ctx, 0, y);
}

Status run_conv(RunContext& ctx) { return run_conv_common(ctx, false); }
Status run_conv_transpose(RunContext& ctx) { return run_conv_common(ctx, true); }

}  // namespace

Result<ir::TensorDesc> conv_output_desc(const NodeContext& ctx, const ir::TensorDesc& x,
                                        const ir::TensorDesc& w, const ir::TensorDesc* b,
                                        DType dtype) {
  return output_desc(ctx, x, w, b, /*transpose=*/false, dtype);
}

Result<kernels::ref::ConvParams> conv_kernel_params(const NodeContext& ctx, const Tensor& x,
                                                    const Tensor& w) {
  return conv_params(ctx, x, w, /*transpose=*/false);
}

void register_conv_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Conv",
         .since_versions = {1, 11},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = {{"auto_pad", AttrType::kString},
                   {"dilations", AttrType::kInts},
                   {"group", AttrType::kInt},
                   {"kernel_shape", AttrType::kInts},
                   {"pads", AttrType::kInts},
                   {"strides", AttrType::kInts}},
         .infer = infer_conv,
         .run = run_conv});
  r.add({.op_type = "ConvTranspose",
         .since_versions = {1, 11},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = {{"auto_pad", AttrType::kString},
                   {"dilations", AttrType::kInts},
                   {"group", AttrType::kInt},
                   {"kernel_shape", AttrType::kInts},
                   {"output_padding", AttrType::kInts},
                   {"output_shape", AttrType::kInts},
                   {"pads", AttrType::kInts},
                   {"strides", AttrType::kInts}},
         .infer = infer_conv_transpose,
         .run = run_conv_transpose});
}

}  // namespace kiln::ops
