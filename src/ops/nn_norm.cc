// BatchNormalization (inference), InstanceNormalization, LayerNormalization and LRN.
#include <fmt/format.h>

#include "kernels/ref/norm.h"
#include "ops/nn_ops.h"
#include "ops/nn_window.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

// The values of a float tensor as doubles.
Result<std::vector<double>> to_doubles(const Tensor& t) {
  KILN_ASSIGN_OR_RETURN(Tensor d, as_dtype(t, DType::kF64));
  return std::vector<double>(d.data<double>(), d.data<double>() + d.numel());
}

// Input `i` (named `what`) must be a float tensor whose shape, when known, is `expected`.
Status check_param(const InferContext& ctx, size_t i, std::string_view what,
                   const ir::Shape& expected) {
  KILN_RETURN_IF_ERROR(require_input(ctx, i, what));
  const ir::TensorDesc& p = ctx.input(i);
  if (!dtype_is_float(p.dtype) || p.dtype == DType::kBF16) {
    return ctx.unsupported("input {} ({}) has dtype {}, expected a float type", i, what,
                           dtype_name(p.dtype));
  }
  if (!p.has_rank()) return Status::ok();
  bool ok = p.rank() == static_cast<int>(expected.size());
  for (int d = 0; ok && d < p.rank(); ++d) {
    ok = !p.dim(d).is_known() || !expected[static_cast<size_t>(d)].is_known() ||
         p.dim(d).value == expected[static_cast<size_t>(d)].value;
  }
  if (!ok) {
    const auto want = ir::TensorDesc::of(p.dtype, expected).to_string();
    return ctx.error("input {} ({}) is {} but must have shape {}", i, what, p.to_string(),
                     want.substr(want.find('[')));
  }
  return Status::ok();
}

Status check_min_rank(const InferContext& ctx, int min_rank) {
  const ir::TensorDesc& x = ctx.input(0);
  if (x.has_rank() && x.rank() < min_rank) {
    return ctx.error("input X {} must have rank >= {}", x.to_string(), min_rank);
  }
  return Status::ok();
}

// Float-valued epsilon-like attribute that must be >= 0 (or > 0 when `positive`).
Result<double> read_nonnegative(const NodeContext& ctx, std::string_view name, float def) {
  const float v = ctx.attrs().get_float(name, def);
  if (!(v >= 0.0f)) return ctx.error("attribute '{}' must be >= 0, got {}", name, v);
  return static_cast<double>(v);
}

// --- BatchNormalization
// ---------------------------------------------------------------------------

// opsets 6 and 7 with spatial = 0 has per-element parameters of shape X.shape[1:].
bool bn_per_element(const NodeContext& ctx) {
  return ctx.since_version() < 9 && ctx.attrs().get_int("spatial", 1) == 0;
}

Status check_bn_mode(const InferContext& ctx) {
  if (ctx.since_version() >= 14) {
    const int64_t training = ctx.attrs().get_int("training_mode", 0);
    if (training != 0 && training != 1) {
      return ctx.error("attribute 'training_mode' must be 0 or 1, got {}", training);
    }
    if (training == 1)
      return ctx.unsupported("training_mode = 1 is not supported (inference only)");
  }
  for (size_t i = 1; i < ctx.num_outputs(); ++i) {
    if (ctx.has_output(i)) {
      return ctx.unsupported(
          "output {} (running/saved statistics) exists only in training mode, which is not "
          "supported (inference only)",
          i);
    }
  }
  return Status::ok();
}

Status infer_batch_norm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  KILN_RETURN_IF_ERROR(check_bn_mode(ctx));
  KILN_RETURN_IF_ERROR(check_min_rank(ctx, 2));
  const ir::TensorDesc& x = ctx.input(0);
  ir::Shape param_shape{x.has_rank() ? x.dim(1) : ir::Dim::unknown()};
  if (bn_per_element(ctx) && x.has_rank()) param_shape.assign(x.shape->begin() + 1, x.shape->end());
  static constexpr std::string_view kNames[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i) {
    if (!x.has_rank() && bn_per_element(ctx)) break;
    KILN_RETURN_IF_ERROR(check_param(ctx, i, kNames[i - 1], param_shape));
    // Before opset 14 every input shares X's dtype; 14 lets mean/var differ, 15 scale/B too.
    const bool must_match = ctx.since_version() < 14 || (ctx.since_version() < 15 && i <= 2);
    if (must_match && ctx.input(i).dtype != x.dtype) {
      return ctx.error("input {} ({}) has dtype {} but X has {}", i, kNames[i - 1],
                       dtype_name(ctx.input(i).dtype), dtype_name(x.dtype));
    }
  }
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_batch_norm(RunContext& ctx) {
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(Tensor x, as_dtype(ctx.input(0), compute));
  std::vector<double> p[4];
  for (size_t i = 0; i < 4; ++i) {
    KILN_ASSIGN_OR_RETURN(p[i], to_doubles(ctx.input(i + 1)));
  }
  KILN_ASSIGN_OR_RETURN(double eps, read_nonnegative(ctx, "epsilon", 1e-5f));
  const int64_t batch = x.dim(0);
  const auto params = static_cast<int64_t>(p[0].size());
  const int64_t inner = batch > 0 ? x.numel() / batch / std::max<int64_t>(params, 1) : 0;
  Tensor y(compute, x.dims());
  dispatch_dtype(compute, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      kernels::ref::batch_norm<T>(batch, params, inner, x.data<T>(), p[0].data(), p[1].data(),
                                  p[2].data(), p[3].data(), eps, y.data<T>());
    }
  });
  return set_output_as_inferred(ctx, 0, y);
}

// --- InstanceNormalization
// ------------------------------------------------------------------------

Status infer_instance_norm(InferContext& ctx) {
  static constexpr size_t kSame[] = {1, 2};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes, kSame));
  KILN_RETURN_IF_ERROR(check_min_rank(ctx, 3));
  const ir::TensorDesc& x = ctx.input(0);
  const ir::Shape c{x.has_rank() ? x.dim(1) : ir::Dim::unknown()};
  KILN_RETURN_IF_ERROR(check_param(ctx, 1, "scale", c));
  KILN_RETURN_IF_ERROR(check_param(ctx, 2, "B", c));
  ctx.set_output(0, x);
  return Status::ok();
}

Status run_instance_norm(RunContext& ctx) {
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(Tensor x, as_dtype(ctx.input(0), compute));
  KILN_ASSIGN_OR_RETURN(std::vector<double> scale, to_doubles(ctx.input(1)));
  KILN_ASSIGN_OR_RETURN(std::vector<double> bias, to_doubles(ctx.input(2)));
  KILN_ASSIGN_OR_RETURN(double eps, read_nonnegative(ctx, "epsilon", 1e-5f));
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t inner = batch * channels > 0 ? x.numel() / (batch * channels) : 0;
  Tensor y(compute, x.dims());
  dispatch_dtype(compute, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      kernels::ref::instance_norm<T>(batch, channels, inner, x.data<T>(), scale.data(), bias.data(),
                                     eps, y.data<T>());
    }
  });
  return set_output_as_inferred(ctx, 0, y);
}

// --- LayerNormalization
// ---------------------------------------------------------------------------

// Input i (Scale or B) must broadcast to X.shape[axis:] (unidirectionally).
Status check_ln_param(const InferContext& ctx, size_t i, std::string_view what, int64_t axis) {
  const ir::TensorDesc& p = ctx.input(i);
  const ir::TensorDesc& x = ctx.input(0);
  if (p.dtype != x.dtype) {
    return ctx.error("input {} ({}) has dtype {} but X has {}", i, what, dtype_name(p.dtype),
                     dtype_name(x.dtype));
  }
  if (!p.has_rank() || !x.has_rank()) return Status::ok();
  const int64_t norm_rank = x.rank() - axis;
  bool ok = p.rank() <= norm_rank;
  for (int k = 1; ok && k <= p.rank(); ++k) {
    const ir::Dim& pd = p.dim(p.rank() - k);
    const ir::Dim& xd = x.dim(x.rank() - k);
    ok = !pd.is_known() || !xd.is_known() || pd.value == 1 || pd.value == xd.value;
  }
  if (!ok) {
    return ctx.error("input {} ({}) {} does not broadcast to the normalized dims of X {} (axis {})",
                     i, what, p.to_string(), x.to_string(), axis);
  }
  return Status::ok();
}

Result<int64_t> ln_axis(const NodeContext& ctx, int64_t rank) {
  return normalize_axis(ctx, ctx.attrs().get_int("axis", -1), rank);
}

Status infer_layer_norm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  KILN_RETURN_IF_ERROR(require_input(ctx, 1, "Scale"));
  const int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (stash != 1) return ctx.unsupported("stash_type {} (only 1, float32, is supported)", stash);
  const ir::TensorDesc& x = ctx.input(0);
  ctx.set_output(0, x);
  ir::TensorDesc stats = ir::TensorDesc::unknown_shape(DType::kF32);
  if (x.has_rank()) {
    if (x.rank() < 1) return ctx.error("input X {} must have rank >= 1", x.to_string());
    KILN_ASSIGN_OR_RETURN(int64_t axis, ln_axis(ctx, x.rank()));
    KILN_RETURN_IF_ERROR(check_ln_param(ctx, 1, "Scale", axis));
    if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(check_ln_param(ctx, 2, "B", axis));
    ir::Shape s(x.shape->begin(), x.shape->begin() + axis);
    s.resize(static_cast<size_t>(x.rank()), ir::Dim::known(1));
    stats = ir::TensorDesc::of(DType::kF32, std::move(s));
  }
  for (size_t i = 1; i <= 2; ++i) {
    if (ctx.has_output(i)) ctx.set_output(i, stats);
  }
  return Status::ok();
}

// Scale or B broadcast to `inner_dims`, as doubles.
Result<std::vector<double>> broadcast_param(const Tensor& p, const Dims& inner_dims) {
  KILN_ASSIGN_OR_RETURN(std::vector<double> v, to_doubles(p));
  const BroadcastIndexer index(p.dims(), inner_dims);
  std::vector<double> out(static_cast<size_t>(dims_numel(inner_dims)));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = v[static_cast<size_t>(index(static_cast<int64_t>(i)))];
  }
  return out;
}

Status run_layer_norm(RunContext& ctx) {
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(Tensor x, as_dtype(ctx.input(0), compute));
  KILN_ASSIGN_OR_RETURN(int64_t axis, ln_axis(ctx, x.rank()));
  KILN_ASSIGN_OR_RETURN(double eps, read_nonnegative(ctx, "epsilon", 1e-5f));
  const Dims inner_dims(x.dims().begin() + axis, x.dims().end());
  const int64_t inner = dims_numel(inner_dims);
  const int64_t outer = dims_numel(std::span(x.dims()).first(static_cast<size_t>(axis)));
  KILN_ASSIGN_OR_RETURN(std::vector<double> scale, broadcast_param(ctx.input(1), inner_dims));
  std::vector<double> bias;
  if (ctx.has_input(2)) {
    KILN_ASSIGN_OR_RETURN(bias, broadcast_param(ctx.input(2), inner_dims));
  }
  Tensor y(compute, x.dims());
  Tensor mean(DType::kF64, {outer});
  Tensor inv_std(DType::kF64, {outer});
  dispatch_dtype(compute, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      kernels::ref::layer_norm<T>(outer, inner, x.data<T>(), scale.data(),
                                  bias.empty() ? nullptr : bias.data(), eps, y.data<T>(),
                                  mean.data<double>(), inv_std.data<double>());
    }
  });
  KILN_RETURN_IF_ERROR(set_output_as_inferred(ctx, 0, y));
  const Tensor* stats[] = {&mean, &inv_std};
  for (size_t i = 1; i <= 2; ++i) {
    if (!ctx.has_output(i)) continue;
    KILN_RETURN_IF_ERROR(
        set_output_as_inferred(ctx, i, stats[i - 1]->reshaped(ctx.output_desc(i).static_dims())));
  }
  return Status::ok();
}

// --- LRN
// ------------------------------------------------------------------------------------------

Status infer_lrn(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFloatTypes));
  KILN_RETURN_IF_ERROR(check_min_rank(ctx, 3));
  if (!ctx.attrs().has("size")) return ctx.error("attribute 'size' is required");
  const int64_t size = ctx.attrs().get_int("size", 1);
  if (size < 1) return ctx.error("attribute 'size' must be >= 1, got {}", size);
  ctx.set_output(0, ctx.input(0));
  return Status::ok();
}

Status run_lrn(RunContext& ctx) {
  const DType compute = compute_dtype_for(ctx.input(0).dtype());
  KILN_ASSIGN_OR_RETURN(Tensor x, as_dtype(ctx.input(0), compute));
  const ir::Attributes& a = ctx.attrs();
  const int64_t batch = x.dim(0);
  const int64_t channels = x.dim(1);
  const int64_t inner = batch * channels > 0 ? x.numel() / (batch * channels) : 0;
  Tensor y(compute, x.dims());
  dispatch_dtype(compute, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      kernels::ref::lrn<T>(batch, channels, inner, a.get_int("size", 1),
                           a.get_float("alpha", 1e-4f), a.get_float("beta", 0.75f),
                           a.get_float("bias", 1.0f), x.data<T>(), y.data<T>());
    }
  });
  return set_output_as_inferred(ctx, 0, y);
}

}  // namespace

void register_norm_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "BatchNormalization",
         .since_versions = {6, 7, 9, 14, 15},
         .min_inputs = 5,
         .max_inputs = 5,
         .max_outputs = 5,
         // is_test (opset 6) is accepted and ignored: kiln always runs inference.
         .attrs = {{"epsilon", AttrType::kFloat},
                   {"is_test", AttrType::kInt},
                   {"momentum", AttrType::kFloat},
                   {"spatial", AttrType::kInt},
                   {"training_mode", AttrType::kInt}},
         .infer = infer_batch_norm,
         .run = run_batch_norm});
  r.add({.op_type = "InstanceNormalization",
         .since_versions = {6},
         .min_inputs = 3,
         .max_inputs = 3,
         .attrs = {{"epsilon", AttrType::kFloat}},
         .infer = infer_instance_norm,
         .run = run_instance_norm});
  r.add({.op_type = "LayerNormalization",
         .since_versions = {17},
         .min_inputs = 2,
         .max_inputs = 3,
         .max_outputs = 3,
         .attrs = {{"axis", AttrType::kInt},
                   {"epsilon", AttrType::kFloat},
                   {"stash_type", AttrType::kInt}},
         .infer = infer_layer_norm,
         .run = run_layer_norm});
  r.add({.op_type = "LRN",
         .since_versions = {1, 13},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"alpha", AttrType::kFloat},
                   {"beta", AttrType::kFloat},
                   {"bias", AttrType::kFloat},
                   {"size", AttrType::kInt}},
         .infer = infer_lrn,
         .run = run_lrn});
}

}  // namespace kiln::ops
