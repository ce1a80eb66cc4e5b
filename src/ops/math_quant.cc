// QuantizeLinear / DequantizeLinear (per-tensor; per-axis from opset 13; float16 scales from 19;
// block quantization at 21 is registered but unsupported) and DynamicQuantizeLinear.
#include <algorithm>

#include "kernels/ref/quantize.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// Shared checks of the scale (input 1) and zero point (input 2) against x (input 0): dtypes,
// block_size, and per-tensor vs per-axis shapes. Sets *per_axis when the scale is 1-D.
Status check_scale_and_zero(const InferContext& ctx, bool* per_axis) {
  const ir::TensorDesc& x = ctx.input(0);
  const ir::TensorDesc& scale = ctx.input(1);
  if (ctx.attrs().get_int("block_size", 0) != 0) {
    return ctx.unsupported("block quantization (block_size={}) is not implemented",
                           ctx.attrs().get_int("block_size", 0));
  }
  const bool half_scales = ctx.since_version() >= 19;
  if (!(scale.dtype == DType::kF32 || (half_scales && scale.dtype == DType::kF16))) {
    return ctx.unsupported("scale has dtype {}; supported: float32{}", dtype_name(scale.dtype),
                           half_scales ? ", float16" : "");
  }
  *per_axis = scale.has_rank() && scale.rank() == 1 &&
              !(scale.dim(0).is_known() && scale.dim(0).value == 1);
  if (scale.has_rank() && scale.rank() > 1) {
    return ctx.unsupported("scale {} has rank {}: block quantization is not implemented",
                           shape_text(scale), scale.rank());
  }
  if (*per_axis && ctx.since_version() < 13) {
    return ctx.error("scale {} must be a scalar before opset 13 (per-axis needs opset 13)",
                     shape_text(scale));
  }
  if (*per_axis && x.has_rank()) {
    KILN_ASSIGN_OR_RETURN(const int64_t axis,
                          normalize_axis(ctx, ctx.attrs().get_int("axis", 1), x.rank()));
    const ir::Dim& d = x.dim(static_cast<int>(axis));
    if (d.is_known() && scale.dim(0).is_known() && d.value != scale.dim(0).value) {
      return ctx.error("scale {} must have one entry per index of axis {} of x {} ({})",
                       shape_text(scale), axis, shape_text(x), d.value);
    }
  }
  if (ctx.has_input(2) && ctx.input(2).has_rank() && scale.has_rank()) {
    const ir::TensorDesc& zero = ctx.input(2);
    const bool zero_scalar =
        zero.rank() == 0 || (zero.rank() == 1 && zero.dim(0).is_known() && zero.dim(0).value == 1);
    const bool same = zero.rank() == scale.rank() &&
                      (zero.rank() == 0 || !(zero.dim(0).is_known() && scale.dim(0).is_known() &&
                                             zero.dim(0).value != scale.dim(0).value));
    if (!same && !(zero_scalar && !*per_axis)) {
      return ctx.error("zero point {} must have the shape of scale {}", shape_text(zero),
                       shape_text(scale));
    }
  }
  return Status::ok();
}

// QuantizeLinear's output dtype: the zero point's, else output_dtype (21), else uint8.
Result<DType> quantize_output_dtype(const InferContext& ctx) {
  const int64_t attr = ctx.attrs().get_int("output_dtype", 0);
  // ONNX TensorProto codes for the dtypes kiln can produce.
  const struct {
    int64_t code;
    DType dtype;
  } codes[] = {{2, DType::kU8}, {3, DType::kI8}, {4, DType::kU16}, {5, DType::kI16}};
  std::optional<DType> from_attr;
  for (auto [code, dtype] : codes) {
    if (code == attr) from_attr = dtype;
  }
  if (attr != 0 && !from_attr) {
    return ctx.unsupported(
        "output_dtype {} (an ONNX TensorProto type code) is not supported; "
        "supported: uint8, int8, uint16, int16",
        attr);
  }
  if (!ctx.has_input(2)) return from_attr.value_or(DType::kU8);
  const DType t = ctx.input(2).dtype;
  if (from_attr && *from_attr != t) {
    return ctx.error("output_dtype says {} but the zero point is {}", dtype_name(*from_attr),
                     dtype_name(t));
  }
  return t;
}

Status infer_quantize(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  const bool x_ok = x.dtype == DType::kF32 || x.dtype == DType::kI32 ||
                    (ctx.since_version() >= 19 && x.dtype == DType::kF16);
  if (!x_ok) return ctx.unsupported("x has dtype {}, which is not supported", dtype_name(x.dtype));
  KILN_ASSIGN_OR_RETURN(const DType out, quantize_output_dtype(ctx));
  const bool wide = ctx.since_version() >= 21 && (out == DType::kU16 || out == DType::kI16);
  if (!(out == DType::kU8 || out == DType::kI8 || wide)) {
    return ctx.unsupported("quantizing to {} is not supported at opset {}", dtype_name(out),
                           ctx.since_version());
  }
  bool per_axis = false;
  KILN_RETURN_IF_ERROR(check_scale_and_zero(ctx, &per_axis));
  ctx.set_output(
      0, x.has_rank() ? ir::TensorDesc::of(out, *x.shape) : ir::TensorDesc::unknown_shape(out));
  return Status::ok();
}

Status infer_dequantize(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  const bool wide = ctx.since_version() >= 21 && (x.dtype == DType::kU16 || x.dtype == DType::kI16);
  if (!(x.dtype == DType::kU8 || x.dtype == DType::kI8 || x.dtype == DType::kI32 || wide)) {
    return ctx.unsupported("dequantizing {} is not supported at opset {}", dtype_name(x.dtype),
                           ctx.since_version());
  }
  if (ctx.has_input(2) && ctx.input(2).dtype != x.dtype) {
    return ctx.error("zero point has dtype {} but x has {}", dtype_name(ctx.input(2).dtype),
                     dtype_name(x.dtype));
  }
  if (x.dtype == DType::kI32 && ctx.input_value(2) != nullptr) {
    const Tensor& zero = *ctx.input_value(2);
    for (int64_t i = 0; i < zero.numel(); ++i) {
      if (zero.value_as_int(i) != 0) return ctx.error("an int32 x requires a zero point of 0");
    }
  }
  bool per_axis = false;
  KILN_RETURN_IF_ERROR(check_scale_and_zero(ctx, &per_axis));
  const DType out = ctx.since_version() >= 19 ? ctx.input(1).dtype : DType::kF32;
  ctx.set_output(
      0, x.has_rank() ? ir::TensorDesc::of(out, *x.shape) : ir::TensorDesc::unknown_shape(out));
  return Status::ok();
}

// The kernel's view: per-tensor, or per-axis along `axis` (the shape function validated it).
ref::QuantParams quant_params(const RunContext& ctx, const Tensor& x, const Tensor& scale) {
  ref::QuantParams p;
  p.numel = x.numel();
  if (scale.numel() == 1) return p;
  const int64_t axis = ctx.attrs().get_int("axis", 1);
  const int a = static_cast<int>(axis < 0 ? axis + x.rank() : axis);
  p.axis_size = x.dim(a);
  for (int d = a + 1; d < x.rank(); ++d) p.inner *= x.dim(d);
  return p;
}

template <typename Fn>
bool dispatch_quant(DType t, Fn&& fn) {
  switch (t) {
    case DType::kU8:
      fn.template operator()<uint8_t>();
      return true;
    case DType::kI8:
      fn.template operator()<int8_t>();
      return true;
    case DType::kU16:
      fn.template operator()<uint16_t>();
      return true;
    case DType::kI16:
      fn.template operator()<int16_t>();
      return true;
    default:
      return false;
  }
}

Status run_quantize(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Tensor x, cast_tensor(ctx.input(0), DType::kF32));
  KILN_ASSIGN_OR_RETURN(const Tensor scale, cast_tensor(ctx.input(1), DType::kF32));
  Tensor& y = ctx.allocate_output(0);
  const ref::QuantParams p = quant_params(ctx, x, scale);
  const Tensor* zero = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  dispatch_quant(y.dtype(), [&]<typename T>() {
    ref::quantize_linear<T>(p, x.data<float>(), scale.data<float>(),
                            zero ? zero->data<T>() : nullptr, y.data<T>());
  });
  return Status::ok();
}

Status run_dequantize(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const Tensor scale, cast_tensor(ctx.input(1), DType::kF32));
  Tensor y(DType::kF32, x.dims());
  const ref::QuantParams p = quant_params(ctx, x, scale);
  const Tensor* zero = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  auto run = [&]<typename T>() {
    ref::dequantize_linear<T>(p, x.data<T>(), scale.data<float>(), zero ? zero->data<T>() : nullptr,
                              y.data<float>());
  };
  if (x.dtype() == DType::kI32) {
    run.template operator()<int32_t>();
  } else {
    dispatch_quant(x.dtype(), run);
  }
  const DType out = ctx.output_desc(0).dtype;
  if (out == DType::kF32) {
    ctx.set_output(0, std::move(y));
  } else {
    KILN_ASSIGN_OR_RETURN(Tensor converted, cast_tensor(y, out));
    ctx.set_output(0, std::move(converted));
  }
  return Status::ok();
}

// --- DynamicQuantizeLinear
// ------------------------------------------------------------------------

Status infer_dynamic_quantize(InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  if (x.dtype != DType::kF32) {
    return ctx.unsupported("x has dtype {}; DynamicQuantizeLinear takes float32",
                           dtype_name(x.dtype));
  }
  ctx.set_output(0, x.has_rank() ? ir::TensorDesc::of(DType::kU8, *x.shape)
                                 : ir::TensorDesc::unknown_shape(DType::kU8));
  ctx.set_output(1, ir::TensorDesc::of(DType::kF32, {}));
  ctx.set_output(2, ir::TensorDesc::of(DType::kU8, {}));
  return Status::ok();
}

Status run_dynamic_quantize(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.allocate_output(0);
  Tensor& scale = ctx.allocate_output(1);
  Tensor& zero = ctx.allocate_output(2);
  ref::dynamic_quantize_linear(x.numel(), x.data<float>(), y.data<uint8_t>(), scale.data<float>(),
                               zero.data<uint8_t>());
  return Status::ok();
}

}  // namespace

void register_quant_ops(OpRegistry& r) {
  r.add({.op_type = "QuantizeLinear",
         .since_versions = {10, 13, 19, 21},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = {{"axis", ir::AttrType::kInt},
                   {"saturate", ir::AttrType::kInt},
                   {"block_size", ir::AttrType::kInt},
                   {"output_dtype", ir::AttrType::kInt}},
         .infer = infer_quantize,
         .run = run_quantize});
  r.add({.op_type = "DequantizeLinear",
         .since_versions = {10, 13, 19, 21},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = {{"axis", ir::AttrType::kInt}, {"block_size", ir::AttrType::kInt}},
         .infer = infer_dequantize,
         .run = run_dequantize});
  r.add({.op_type = "DynamicQuantizeLinear",
         .since_versions = {11},
         .min_inputs = 1,
         .max_inputs = 1,
         .min_outputs = 3,
         .max_outputs = 3,
         .attrs = {},
         .infer = infer_dynamic_quantize,
         .run = run_dynamic_quantize});
}

}  // namespace kiln::ops
