// Element-wise ops that are not plain math: Clip, Cast, CastLike, Where, Identity, Dropout.
#include <limits>

#include "kernels/ref/elementwise_binary.h"
#include "kernels/ref/elementwise_unary.h"
#include "kernels/ref/elementwise_util.h"
#include "ops/elementwise_common.h"
#include "ops/onnx_dtype.h"

namespace kiln::ops {
namespace {

using ir::AttrType;
using namespace elementwise;

// --- Clip
// -----------------------------------------------------------------------------------------

// Clip 11+ takes min and max as optional scalar inputs 1 and 2.
Status check_clip_bound(const InferContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return Status::ok();
  const ir::TensorDesc& d = ctx.input(i);
  if (d.dtype != ctx.input(0).dtype) {
    return ctx.error("input {} ({}) has dtype {} but input has {}; they must match", i, what,
                     dtype_name(d.dtype), dtype_name(ctx.input(0).dtype));
  }
  if (d.has_rank()) {
    for (const ir::Dim& dim : *d.shape) {
      if (dim.is_known() && dim.value != 1) {
        return ctx.error("input {} ({}) must be a scalar, got shape {}", i, what, d.to_string());
      }
    }
  }
  return Status::ok();
}

Status infer_clip(InferContext& ctx) {
  const bool ints = ctx.since_version() >= 12;
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, float_or_numeric(ints), "input"));
  if (ctx.since_version() < 11 && ctx.num_inputs() > 1) {
    return ctx.error("Clip before opset 11 takes 1 input (min and max are attributes), got {}",
                     ctx.num_inputs());
  }
  if (ctx.since_version() >= 11 && (ctx.attrs().has("min") || ctx.attrs().has("max"))) {
    return ctx.error("Clip from opset 11 takes min and max as inputs, not attributes");
  }
  KILN_RETURN_IF_ERROR(check_clip_bound(ctx, 1, "min"));
  KILN_RETURN_IF_ERROR(check_clip_bound(ctx, 2, "max"));
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

// The bound as T: the attribute (opset < 11), the scalar input, or `fallback` when absent.
template <typename T>
Result<T> clip_bound(const RunContext& ctx, size_t i, std::string_view name, T fallback) {
  if (ctx.since_version() < 11) {
    if (!ctx.attrs().has(name)) return fallback;
    return kernels::ref::from_double<T>(ctx.attrs().get_float(name, 0.0f));
  }
  if (!ctx.has_input(i)) return fallback;
  const Tensor& t = ctx.input(i);
  if (t.numel() != 1) return ctx.error("input {} ({}) must be a scalar, got {}", i, name, t.desc());
  KILN_ASSIGN_OR_RETURN(const Tensor w, widen(t));
  return w.data<T>()[0];
}

Status run_clip(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Tensor x, widen(ctx.input(0)));
  Tensor y(x.dtype(), x.dims());
  Status status;
  const bool ok = dispatch_kernel_type(x.dtype(), [&]<typename T>() {
    Result<T> lo = clip_bound<T>(ctx, 1, "min", std::numeric_limits<T>::lowest());
    Result<T> hi = clip_bound<T>(ctx, 2, "max", std::numeric_limits<T>::max());
    if (!lo.is_ok() || !hi.is_ok()) {
      status = lo.is_ok() ? hi.status() : lo.status();
      return;
    }
    kernels::ref::clip<T>(x.data<T>(), y.data<T>(), x.numel(), *lo, *hi);
  });
  if (!ok) return no_kernel(ctx, x.dtype());
  KILN_RETURN_IF_ERROR(status);
  return set_result(ctx, 0, y);
}

// --- Cast, CastLike
// -------------------------------------------------------------------------------

// Cast's `to`: a dtype kiln can compute with; errors name the type.
Result<DType> cast_target(const NodeContext& ctx, int64_t onnx_type) {
  const DType t = dtype_from_onnx(onnx_type);
  if (t != DType::kUndefined && t != DType::kString && t != DType::kBF16) return t;
  if (is_onnx_dtype(onnx_type)) {
    return ctx.unsupported("casting to {} is not supported", onnx_dtype_name(onnx_type));
  }
  return ctx.error("attribute to is {}, which is not an ONNX data type", onnx_type);
}

Status check_castable(const InferContext& ctx, size_t i, std::string_view what) {
  return check_input_dtype(ctx, i, kAllTypes, what);
}

Status infer_cast(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_castable(ctx, 0, "input"));
  if (!ctx.attrs().has("to")) return ctx.error("attribute to is required");
  KILN_ASSIGN_OR_RETURN(const DType to, cast_target(ctx, ctx.attrs().get_int("to", 0)));
  ctx.set_output(0, ir::TensorDesc{to, ctx.input(0).shape});
  return Status::ok();
}

Status infer_cast_like(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_castable(ctx, 0, "input"));
  KILN_RETURN_IF_ERROR(check_castable(ctx, 1, "target_type"));
  ctx.set_output(0, ir::TensorDesc{ctx.input(1).dtype, ctx.input(0).shape});
  return Status::ok();
}

Status run_cast(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor y, cast_tensor(ctx.input(0), ctx.output_desc(0).dtype));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

// --- Where
// ----------------------------------------------------------------------------------------

Status infer_where(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kBoolType, "condition"));
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 1, kAllTypes, "X"));
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 2, kAllTypes, "Y"));
  KILN_RETURN_IF_ERROR(check_same_dtype(ctx, 1));
  return infer_broadcast(ctx, ctx.input(1).dtype);
}

template <typename T>
void where_as(const Tensor& c, const Tensor& x, const Tensor& other, Tensor& y) {
  kernels::ref::where<T>(c.data<bool>(), c.dims(), static_cast<const T*>(x.raw_data()), x.dims(),
                         static_cast<const T*>(other.raw_data()), other.dims(),
                         static_cast<T*>(y.raw_data()), y.dims());
}

Status run_where(RunContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& other = ctx.input(2);
  Tensor& y = ctx.allocate_output(0);
  switch (dtype_size(x.dtype())) {  // elements are copied as bits
    case 1:
      where_as<uint8_t>(c, x, other, y);
      break;
    case 2:
      where_as<uint16_t>(c, x, other, y);
      break;
    case 4:
      where_as<uint32_t>(c, x, other, y);
      break;
    case 8:
      where_as<uint64_t>(c, x, other, y);
      break;
    default:
      return no_kernel(ctx, x.dtype());
  }
  return Status::ok();
}

// --- Identity, Dropout
// ----------------------------------------------------------------------------

Status infer_identity(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kAllTypes, "input"));
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

Status run_identity(RunContext& ctx) {
  ctx.set_output(0, ctx.input(0));  // inputs are immutable: sharing the storage is safe
  return Status::ok();
}

// Dropout 12+ takes ratio and training_mode as optional scalar inputs; only inference is supported.
Status check_dropout_inputs(const InferContext& ctx) {
  if (ctx.since_version() < 12 && ctx.num_inputs() > 1) {
    return ctx.error("Dropout before opset 12 takes 1 input, got {}", ctx.num_inputs());
  }
  if (ctx.has_input(1)) KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 1, kFloatTypes, "ratio"));
  if (!ctx.has_input(2)) return Status::ok();
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 2, kBoolType, "training_mode"));
  const Tensor* mode = ctx.input_value(2);
  if (mode != nullptr && mode->numel() != 1) {
    return ctx.error("input 2 (training_mode) must be a scalar, got {}", mode->desc());
  }
  if (mode != nullptr && mode->data<bool>()[0]) {
    return ctx.unsupported("training_mode=true (training-time dropout) is not supported");
  }
  return Status::ok();
}

Status infer_dropout(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype(ctx, 0, kFloatTypes, "data"));
  KILN_RETURN_IF_ERROR(check_dropout_inputs(ctx));
  ctx.set_output(0, ctx.input(0));
  if (ctx.has_output(1)) {
    // Dropout 7 returns the mask in the data's dtype; 10+ as bool.
    const DType mask = ctx.since_version() >= 10 ? DType::kBool : ctx.input(0).dtype;
    ctx.set_output(1, ir::TensorDesc{mask, ctx.input(0).shape});
  }
  return Status::ok();
}

Status run_dropout(RunContext& ctx) {
  if (ctx.has_input(2)) {
    const Tensor& mode = ctx.input(2);
    if (mode.numel() != 1 || mode.data<bool>()[0]) {
      return ctx.unsupported(
          "training_mode must be a scalar false; training-time dropout is not "
          "supported (got {})",
          mode.desc());
    }
  }
  ctx.set_output(0, ctx.input(0));
  if (ctx.has_output(1)) {
    Tensor keep(DType::kBool, ctx.input(0).dims());
    for (bool& b : keep.span<bool>()) b = true;  // inference keeps every element
    KILN_ASSIGN_OR_RETURN(Tensor mask, cast_tensor(keep, ctx.output_desc(1).dtype));
    ctx.set_output(1, std::move(mask));
  }
  return Status::ok();
}

}  // namespace

void register_elementwise_misc_ops(OpRegistry& r) {
  r.add({.op_type = "Clip",
         .since_versions = {1, 6, 11, 12, 13},
         .min_inputs = 1,
         .max_inputs = 3,
         .attrs = {{"min", AttrType::kFloat},
                   {"max", AttrType::kFloat},
                   {"consumed_inputs", AttrType::kInts}},
         .infer = infer_clip,
         .run = run_clip});
  r.add({.op_type = "Cast",
         .since_versions = {6, 9, 13, 19, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"to", AttrType::kInt}, {"saturate", AttrType::kInt}},
         .infer = infer_cast,
         .run = run_cast});
  r.add({.op_type = "CastLike",
         .since_versions = {15, 19, 21},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"saturate", AttrType::kInt}},
         .infer = infer_cast_like,
         .run = run_cast});
  r.add({.op_type = "Where",
         .since_versions = {9, 16},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {},
         .infer = infer_where,
         .run = run_where});
  r.add({.op_type = "Identity",
         .since_versions = {1, 13, 14, 16, 19, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {},
         .infer = infer_identity,
         .run = run_identity});
  r.add({.op_type = "Dropout",
         .since_versions = {7, 10, 12, 13},
         .min_inputs = 1,
         .max_inputs = 3,
         .min_outputs = 1,
         .max_outputs = 2,
         .attrs = {{"ratio", AttrType::kFloat}, {"seed", AttrType::kInt}},
         .infer = infer_dropout,
         .run = run_dropout});
}

}  // namespace kiln::ops
