// ConvInteger and QLinearConv: Conv over 8-bit quantized tensors. The window attributes and shape
// arithmetic are Conv's (ops/nn_conv.h); the math is the exact integer kernel in
// kernels/ref/conv.h.
#include <fmt/format.h>

#include "kernels/ref/conv.h"
#include "ops/nn_conv.h"
#include "ops/nn_ops.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

bool is_8bit(DType t) { return t == DType::kU8 || t == DType::kI8; }

// Quantization parameter input `i` (a scale or zero point) named `what`: of dtype `dtype`, with one
// element (per-tensor: a scalar or a 1-element 1-D tensor) or, when `per_channel`, a 1-D tensor of
// one element per output channel `m`.
Status check_quant_param(const InferContext& ctx, size_t i, std::string_view what, DType dtype,
                         bool per_channel, const ir::Dim& m) {
  const ir::TensorDesc& d = ctx.input(i);
  if (d.dtype != dtype) {
    return ctx.error("{} has dtype {}, expected {}", what, dtype_name(d.dtype), dtype_name(dtype));
  }
  if (!d.has_rank()) return Status::ok();
  if (d.rank() == 0) return Status::ok();
  const ir::Dim& n = d.dim(0);
  const bool one = n.is_known() && n.value == 1;
  const bool channels = per_channel && (!n.is_known() || !m.is_known() || n.value == m.value);
  if (d.rank() == 1 && (one || channels)) return Status::ok();
  if (per_channel) {
    return ctx.error("{} {} must be a scalar or 1-D with one value per output channel ({})", what,
                     d.to_string(), m.to_string());
  }
  return ctx.error("{} {} must be a scalar (per-tensor quantization)", what, d.to_string());
}

// x (input 0) and w (input w_index) must be uint8 or int8.
Status check_operands(const InferContext& ctx, size_t w_index) {
  const DType tx = ctx.input(0).dtype;
  const DType tw = ctx.input(w_index).dtype;
  if (!is_8bit(tx) || !is_8bit(tw)) {
    return ctx.unsupported("x and w must be uint8 or int8, got {} and {}", dtype_name(tx),
                           dtype_name(tw));
  }
  return Status::ok();
}

ir::Dim out_channels(const ir::TensorDesc& w) {
  return w.has_rank() && w.rank() >= 1 ? w.dim(0) : ir::Dim::unknown();
}

// Inputs: x, w, x_zero_point (optional), w_zero_point (optional).
Status infer_conv_integer(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_operands(ctx, 1));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& w = ctx.input(1);
  if (ctx.has_input(2)) {
    KILN_RETURN_IF_ERROR(check_quant_param(ctx, 2, "x_zero_point", x.dtype, false, {}));
  }
  if (ctx.has_input(3)) {
    KILN_RETURN_IF_ERROR(check_quant_param(ctx, 3, "w_zero_point", w.dtype, true, out_channels(w)));
  }
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y, conv_output_desc(ctx, x, w, nullptr, DType::kI32));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (optional).
Status infer_qlinear_conv(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_operands(ctx, 3));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& w = ctx.input(3);
  const DType ty = ctx.input(7).dtype;
  if (!is_8bit(ty)) {
    return ctx.unsupported("y_zero_point has dtype {}; y must be uint8 or int8", dtype_name(ty));
  }
  const ir::Dim m = out_channels(w);
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 1, "x_scale", DType::kF32, false, m));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 2, "x_zero_point", x.dtype, false, m));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 4, "w_scale", DType::kF32, true, m));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 5, "w_zero_point", w.dtype, true, m));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 6, "y_scale", DType::kF32, false, m));
  KILN_RETURN_IF_ERROR(check_quant_param(ctx, 7, "y_zero_point", ty, false, m));
  const ir::TensorDesc* b = nullptr;
  if (ctx.has_input(8)) {
    b = &ctx.input(8);
    if (b->dtype != DType::kI32) {
      return ctx.error("bias B has dtype {}, expected int32", dtype_name(b->dtype));
    }
  }
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y, conv_output_desc(ctx, x, w, b, ty));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// The zero points as int32: x's (input xi, per-tensor) and w's (input wi, 1 or M values).
ref::ConvZeroPoints zero_points(const RunContext& ctx, size_t xi, size_t wi) {
  ref::ConvZeroPoints z;
  if (ctx.has_input(xi)) z.x = static_cast<int32_t>(ctx.input(xi).value_as_int(0));
  if (ctx.has_input(wi)) {
    const Tensor& t = ctx.input(wi);
    for (int64_t i = 0; i < t.numel(); ++i) z.w.push_back(static_cast<int32_t>(t.value_as_int(i)));
  }
  return z;
}

template <typename Fn>
void dispatch_8bit(DType t, Fn&& fn) {
  if (t == DType::kU8) {
    fn.template operator()<uint8_t>();
  } else {
    fn.template operator()<int8_t>();
  }
}

Status run_conv_integer(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(const ref::ConvParams p, conv_kernel_params(ctx, x, w));
  const ref::ConvZeroPoints z = zero_points(ctx, 2, 3);
  Tensor& y = ctx.allocate_output(0);
  dispatch_8bit(x.dtype(), [&]<typename TX>() {
    dispatch_8bit(w.dtype(), [&]<typename TW>() {
      ref::conv_integer<TX, TW>(p, z, x.data<TX>(), w.data<TW>(), y.data<int32_t>());
    });
  });
  return Status::ok();
}

Status run_qlinear_conv(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(3);
  KILN_ASSIGN_OR_RETURN(const ref::ConvParams p, conv_kernel_params(ctx, x, w));
  const ref::ConvZeroPoints z = zero_points(ctx, 2, 5);
  ref::ConvQuantScales s;
  s.x = ctx.input(1).data<float>()[0];
  const Tensor& w_scale = ctx.input(4);
  s.w.assign(w_scale.data<float>(), w_scale.data<float>() + w_scale.numel());
  s.y = ctx.input(6).data<float>()[0];
  const int32_t* bias = ctx.has_input(8) ? ctx.input(8).data<int32_t>() : nullptr;
  const Tensor& y_zero = ctx.input(7);
  Tensor& y = ctx.allocate_output(0);
  dispatch_8bit(x.dtype(), [&]<typename TX>() {
    dispatch_8bit(w.dtype(), [&]<typename TW>() {
      dispatch_8bit(y.dtype(), [&]<typename TY>() {
        ref::qlinear_conv<TX, TW, TY>(p, z, s, x.data<TX>(), w.data<TW>(), bias,
                                      y_zero.data<TY>()[0], y.data<TY>());
      });
    });
  });
  return Status::ok();
}

std::vector<AttrSpec> conv_attrs() {
  using ir::AttrType;
  return {{"auto_pad", AttrType::kString}, {"dilations", AttrType::kInts},
          {"group", AttrType::kInt},       {"kernel_shape", AttrType::kInts},
          {"pads", AttrType::kInts},       {"strides", AttrType::kInts}};
}

}  // namespace

void register_qconv_ops(OpRegistry& r) {
  r.add({.op_type = "ConvInteger",
         .since_versions = {10},
         .min_inputs = 2,
         .max_inputs = 4,
         .attrs = conv_attrs(),
         .infer = infer_conv_integer,
         .run = run_conv_integer});
  r.add({.op_type = "QLinearConv",
         .since_versions = {10},
         .min_inputs = 8,
         .max_inputs = 9,
         .attrs = conv_attrs(),
         .infer = infer_qlinear_conv,
         .run = run_qlinear_conv});
}

}  // namespace kiln::ops
