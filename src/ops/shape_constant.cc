// Ops that create tensors: Constant, ConstantOfShape, Range, EyeLike, OneHot.
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>

#include "ops/onnx_dtype.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;

// Fills every element of t with the single element of `value` (same dtype).
void fill(Tensor& t, const Tensor& value) {
  const size_t es = dtype_size(t.dtype());
  char* out = static_cast<char*>(t.raw_data());
  for (int64_t i = 0; i < t.numel(); ++i) std::memcpy(out + i * es, value.raw_data(), es);
}

bool has_cpp_type(DType t) {
  return std::find(std::begin(kAllTypes), std::end(kAllTypes), t) != std::end(kAllTypes);
}

// --- Constant
// --------------------------------------------------------------------------------------

Result<Tensor> constant_value(const NodeContext& ctx) {
  const ir::Attributes& a = ctx.attrs();
  int given = 0;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings"}) {
    given += a.has(name) ? 1 : 0;
  }
  if (given != 1) {
    return ctx.error("exactly one of the value attributes must be set, got {}", given);
  }
  if (a.has("value_string") || a.has("value_strings")) {
    return ctx.unsupported("string constants are not supported");
  }
  if (const Tensor* t = a.get_tensor("value")) {
    if (!has_cpp_type(t->dtype())) {
      return ctx.unsupported("constants of dtype {} are not supported", dtype_name(t->dtype()));
    }
    return *t;
  }
  if (ctx.since_version() < 12) return ctx.error("the value_* attributes need opset 12 or later");
  if (a.has("value_float")) return Tensor::scalar<float>(a.get_float("value_float", 0.0f));
  if (a.has("value_int")) return Tensor::scalar<int64_t>(a.get_int("value_int", 0));
  if (a.has("value_floats")) {
    const std::vector<float> v = a.get_floats("value_floats");
    return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  }
  const std::vector<int64_t> v = a.get_ints("value_ints");
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

Status infer_constant(InferContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor t, constant_value(ctx));
  ctx.set_output(0, TensorDesc::of_dims(t.dtype(), t.dims()));
  ctx.set_output_value(0, std::move(t));
  return Status::ok();
}

Status run_constant(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor t, constant_value(ctx));
  ctx.set_output(0, std::move(t));
  return Status::ok();
}

// --- ConstantOfShape
// -------------------------------------------------------------------------------

Result<Tensor> fill_value(const NodeContext& ctx) {
  const Tensor* v = ctx.attrs().get_tensor("value");
  if (v == nullptr) return Tensor::scalar<float>(0.0f);
  if (v->numel() != 1) return ctx.error("value must have exactly one element, got {}", v->desc());
  if (!has_cpp_type(v->dtype())) {
    return ctx.unsupported("value of dtype {} is not supported", dtype_name(v->dtype()));
  }
  return *v;
}

Status infer_constant_of_shape(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 0, "shape"));
  KILN_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx));
  const TensorDesc& s = ctx.input(0);
  if (s.has_rank() && s.rank() != 1) return ctx.error("shape must be 1-D, got {}", s.to_string());
  KILN_ASSIGN_OR_RETURN(auto dims, known_ints(ctx, 0, "shape"));
  if (dims) {
    KILN_RETURN_IF_ERROR(check_out_dims(ctx, *dims, value.dtype(), "output"));
    ctx.set_output(0, TensorDesc::of_dims(value.dtype(), *dims));
  } else if (const std::optional<ir::SymInts> traced = ctx.input_dims_value(0)) {
    // [batch, 1, 1] from Shape -> Gather -> Concat (ops/dims_values.h)
    KILN_ASSIGN_OR_RETURN(ir::Shape out, traced_dims(ctx, *traced));
    ctx.set_output(0, TensorDesc::of(value.dtype(), std::move(out)));
  } else if (s.has_rank() && s.dim(0).is_known()) {
    ctx.set_output(0,
                   TensorDesc::of(value.dtype(), unknown_dims(static_cast<int>(s.dim(0).value))));
  } else {
    ctx.set_output(0, TensorDesc::unknown_shape(value.dtype()));
  }
  return Status::ok();
}

Status run_constant_of_shape(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(Tensor value, fill_value(ctx));
  fill(ctx.allocate_output(0), value);
  return Status::ok();
}

// --- Range
// -----------------------------------------------------------------------------------------

constexpr DType kRangeTypes[] = {DType::kF32, DType::kF64, DType::kI16, DType::kI32, DType::kI64};

// max(ceil((limit - start) / delta), 0), exactly for integers.
Result<int64_t> range_count(const NodeContext& ctx, const Tensor& start, const Tensor& limit,
                            const Tensor& delta) {
  if (dtype_is_float(start.dtype())) {
    const double s = start.value_as_double(0), l = limit.value_as_double(0);
    const double d = delta.value_as_double(0);
    if (d == 0.0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d)) {
      return ctx.error("start {}, limit {} and delta {} must be finite with delta != 0", s, l, d);
    }
    const double n = std::ceil((l - s) / d);
    if (n > 9.0e15) return ctx.error("range from {} to {} by {} is too long", s, l, d);
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  const __int128 s = start.value_as_int(0), l = limit.value_as_int(0), d = delta.value_as_int(0);
  if (d == 0) return ctx.error("delta must not be 0");
  const __int128 diff = l - s;
  // ceil(diff / d) with C++'s truncating division.
  __int128 n = diff / d;
  if (diff % d != 0 && ((diff > 0) == (d > 0))) ++n;
  if (n > (__int128{1} << 62)) {
    return ctx.error("range from {} to {} by {} is too long", start.value_as_int(0),
                     limit.value_as_int(0), delta.value_as_int(0));
  }
  return n > 0 ? static_cast<int64_t>(n) : 0;
}

Status infer_range(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kRangeTypes, std::array<size_t, 2>{1, 2}));
  const DType t = ctx.input(0).dtype;
  for (size_t i = 0; i < 3; ++i) {
    const TensorDesc& d = ctx.input(i);
    if (d.has_rank() &&
        !(d.rank() == 0 || (d.rank() == 1 && d.dim(0).is_known() && d.dim(0).value == 1))) {
      return ctx.error("input {} must be a scalar, got {}", i, d.to_string());
    }
  }
  const Tensor *s = ctx.input_value(0), *l = ctx.input_value(1), *d = ctx.input_value(2);
  if (s == nullptr || l == nullptr || d == nullptr) {
    ctx.set_output(0, TensorDesc::of(t, {Dim::unknown()}));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t n, range_count(ctx, *s, *l, *d));
  const Dims dims = {n};
  KILN_RETURN_IF_ERROR(check_out_dims(ctx, dims, t, "output"));
  ctx.set_output(0, TensorDesc::of_dims(t, dims));
  return Status::ok();
}

Status run_range(RunContext& ctx) {
  Tensor& y = ctx.allocate_output(0);
  const Tensor &start = ctx.input(0), &delta = ctx.input(2);
  dispatch_dtype(y.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, bool>) {
      assert(false && "Range dtypes are checked in infer");
    } else {
      const T s = start.data<T>()[0], d = delta.data<T>()[0];
      T* out = y.data<T>();
      for (int64_t i = 0; i < y.numel(); ++i) out[i] = static_cast<T>(s + static_cast<T>(i) * d);
    }
  });
  return Status::ok();
}

// --- EyeLike
// ---------------------------------------------------------------------------------------

Status infer_eye_like(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  if (x.has_rank() && x.rank() != 2) return ctx.error("input must be 2-D, got {}", x.to_string());
  DType t = x.dtype;
  if (ctx.attrs().has("dtype")) {
    const int64_t onnx_type = ctx.attrs().get_int("dtype", 0);
    t = dtype_from_onnx(onnx_type);
    if (t == DType::kUndefined || t == DType::kString || t == DType::kBF16) {
      return ctx.unsupported("dtype {} is not supported", onnx_dtype_name(onnx_type));
    }
  }
  ctx.set_output(0, TensorDesc{t, x.has_rank() ? x.shape : std::optional(unknown_dims(2))});
  return Status::ok();
}

Status run_eye_like(RunContext& ctx) {
  Tensor& y = ctx.allocate_output(0);
  const int64_t k = ctx.attrs().get_int("k", 0);
  KILN_ASSIGN_OR_RETURN(Tensor one, cast_tensor(Tensor::scalar<float>(1.0f), y.dtype()));
  const size_t es = dtype_size(y.dtype());
  const int64_t rows = y.dim(0), cols = y.dim(1);
  // A diagonal entirely outside the matrix (any k, even INT64_MIN/MAX) leaves it all zero; inside,
  // -rows < k < cols so r + k cannot overflow.
  if (k <= -rows || k >= cols) return Status::ok();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = r + k;
    if (c >= 0 && c < cols) {
      std::memcpy(static_cast<char*>(y.raw_data()) + (r * cols + c) * static_cast<int64_t>(es),
                  one.raw_data(), es);
    }
  }
  return Status::ok();
}

// --- OneHot
// ----------------------------------------------------------------------------------------

Result<int64_t> onehot_depth(const NodeContext& ctx, const Tensor& depth) {
  if (depth.numel() != 1 || depth.rank() > 1) {
    return ctx.error("depth must be a scalar or a 1-element tensor, got {}", depth.desc());
  }
  const double d = depth.value_as_double(0);
  if (!(d >= 1.0) || d > 1e12) return ctx.error("depth must be positive, got {}", d);
  return static_cast<int64_t>(d);
}

Status infer_onehot(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_movable(ctx, 1));
  KILN_RETURN_IF_ERROR(check_movable(ctx, 2));
  const TensorDesc &idx = ctx.input(0), &values = ctx.input(2);
  if (values.has_rank() &&
      (values.rank() != 1 || (values.dim(0).is_known() && values.dim(0).value != 2))) {
    return ctx.error("values must be a 2-element [off, on] tensor, got {}", values.to_string());
  }
  if (!idx.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(values.dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", -1), idx.rank() + 1));
  Dim depth = Dim::unknown();
  if (const Tensor* d = ctx.input_value(1)) {
    KILN_ASSIGN_OR_RETURN(int64_t n, onehot_depth(ctx, *d));
    depth = Dim::known(n);
  }
  ir::Shape out = *idx.shape;
  out.insert(out.begin() + axis, depth);
  TensorDesc desc = TensorDesc::of(values.dtype, std::move(out));
  if (desc.is_static())
    KILN_RETURN_IF_ERROR(check_out_dims(ctx, desc.static_dims(), values.dtype, "output"));
  ctx.set_output(0, std::move(desc));
  return Status::ok();
}

Status run_onehot(RunContext& ctx) {
  const Tensor &idx = ctx.input(0), &values = ctx.input(2);
  KILN_ASSIGN_OR_RETURN(int64_t depth, onehot_depth(ctx, ctx.input(1)));
  int64_t axis = ctx.attrs().get_int("axis", -1);
  if (axis < 0) axis += idx.rank() + 1;
  Tensor& y = ctx.allocate_output(0);
  const size_t es = dtype_size(y.dtype());
  const char* off = static_cast<const char*>(values.raw_data());
  const char* on = off + es;
  char* out = static_cast<char*>(y.raw_data());
  // Output index of (outer, depth, inner): indices viewed as [outer, inner] split at `axis`.
  int64_t inner = 1;
  for (int k = static_cast<int>(axis); k < idx.rank(); ++k) inner *= idx.dim(k);
  for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(out + i * static_cast<int64_t>(es), off, es);
  for (int64_t p = 0; p < idx.numel(); ++p) {
    const double raw = idx.value_as_double(p);
    // Out of range (or NaN): the whole one-hot vector stays off.
    if (!(raw > static_cast<double>(-depth - 1) && raw < static_cast<double>(depth))) continue;
    auto v = static_cast<int64_t>(raw);
    if (v < -depth || v >= depth) continue;
    if (v < 0) v += depth;
    const int64_t o = ((p / inner) * depth + v) * inner + p % inner;
    std::memcpy(out + o * static_cast<int64_t>(es), on, es);
  }
  return Status::ok();
}

}  // namespace

void register_constant_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Constant",
         .since_versions = {1, 9, 11, 12, 13, 19, 21},
         .min_inputs = 0,
         .max_inputs = 0,
         .attrs = {{"value", AttrType::kTensor},
                   {"value_float", AttrType::kFloat},
                   {"value_floats", AttrType::kFloats},
                   {"value_int", AttrType::kInt},
                   {"value_ints", AttrType::kInts},
                   {"value_string", AttrType::kString},
                   {"value_strings", AttrType::kStrings}},
         .infer = infer_constant,
         .run = run_constant});
  r.add({.op_type = "ConstantOfShape",
         .since_versions = {9, 20, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"value", AttrType::kTensor}},
         .infer = infer_constant_of_shape,
         .run = run_constant_of_shape});
  r.add({.op_type = "Range",
         .since_versions = {11},
         .min_inputs = 3,
         .max_inputs = 3,
         .infer = infer_range,
         .run = run_range});
  r.add({.op_type = "EyeLike",
         .since_versions = {9},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"dtype", AttrType::kInt}, {"k", AttrType::kInt}},
         .infer = infer_eye_like,
         .run = run_eye_like});
  r.add({.op_type = "OneHot",
         .since_versions = {9, 11},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_onehot,
         .run = run_onehot});
}

}  // namespace kiln::ops::shape_detail
