// kiln.QConv, kiln.QGemm and kiln.ScaleQuantize: validation, shape functions and the reference
// run (ops/kiln_quant.h; the math is kernels/ref/qconv.h and kernels/ref/quantize.h).
#include "ops/kiln_quant.h"

#include <fmt/format.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "kernels/ref/movement.h"
#include "kernels/ref/qconv.h"
#include "kernels/ref/quantize.h"
#include "ops/families.h"
#include "ops/kiln_fused.h"
#include "ops/nhwc.h"
#include "ops/nn_conv.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// A required input's name in messages, e.g. "W int8[4,3,3,3]".
std::string named(std::string_view name, const ir::TensorDesc& d) {
  return fmt::format("{} {}", name, d.to_string());
}

// Input i exists, has `dtype` and, when `constant`, a known value (an initializer): the kernels
// pack weights, scales and biases when the engine is built.
Status check_input(const InferContext& ctx, size_t i, std::string_view name, DType dtype,
                   bool constant) {
  KILN_RETURN_IF_ERROR(require_input(ctx, i, name));
  const ir::TensorDesc& d = ctx.input(i);
  if (d.dtype != dtype) {
    return ctx.error("{} has dtype {}, expected {}", named(name, d), dtype_name(d.dtype),
                     dtype_name(dtype));
  }
  if (constant && ctx.input_value(i) == nullptr) {
    return ctx.error(
        "{} must be a constant (an initializer): the INT8 kernels pack it when the "
        "engine is built",
        named(name, d));
  }
  return Status::ok();
}

// A per-channel vector (W_scale, B, B_scale, C): float32, constant, 1-D with `count` values
// (unknown: not checked), finite. (A zero or negative weight scale is unusual but computes.)
Status check_channel_vector(const InferContext& ctx, size_t i, std::string_view name,
                            const ir::Dim& count) {
  KILN_RETURN_IF_ERROR(check_input(ctx, i, name, DType::kF32, true));
  const ir::TensorDesc& d = ctx.input(i);
  const bool rank_ok = d.has_rank() && d.rank() == 1;
  if (!rank_ok || (count.is_known() && d.dim(0).is_known() && d.dim(0).value != count.value)) {
    return ctx.error("{} must be 1-D with one value per output {} ({})", named(name, d),
                     ctx.node().op_type.starts_with("QConv") ? "channel" : "column",
                     count.to_string());
  }
  const Tensor& v = *ctx.input_value(i);
  for (int64_t k = 0; k < v.numel(); ++k) {
    const float f = v.data<float>()[k];
    if (!std::isfinite(f)) {
      return ctx.error("{} holds {} at index {}; values must be finite", named(name, d), f, k);
    }
  }
  return Status::ok();
}

// The residual Z (input i): float32 or uint8, exactly Y's shape.
Status check_z(const InferContext& ctx, size_t i, ir::TensorDesc& y) {
  const ir::TensorDesc& z = ctx.input(i);
  if (z.dtype != DType::kF32 && z.dtype != DType::kU8) {
    return ctx.error("residual {} has dtype {}, expected float32 or uint8", named("Z", z),
                     dtype_name(z.dtype));
  }
  return check_residual(ctx, z, y);
}

// Depth = the number of products per output: bounded so that the int32 accumulator is exact.
Status check_depth(const NodeContext& ctx, int64_t depth, const ir::TensorDesc& w) {
  if (depth > kMaxQuantDepth) {
    return ctx.error("{} gives {} products per output; at most {} keep the int32 accumulator exact",
                     named(ctx.node().op_type.starts_with("QConv") ? "W" : "B", w), depth,
                     kMaxQuantDepth);
  }
  return Status::ok();
}

DType output_dtype(const QuantAttrs& q) { return q.out_u8 ? DType::kU8 : DType::kF32; }

// A float attribute that must be present (when `required`), finite and >= 0 (> 0 when
// `positive`: y_scale divides).
Result<float> scale_attr(const NodeContext& ctx, std::string_view name, bool required,
                         bool positive = false) {
  if (!ctx.attrs().has(name)) {
    if (required) return ctx.error("attribute {} is required", name);
    return 1.0f;
  }
  const float s = ctx.attrs().get_float(name, 1.0f);
  if (!std::isfinite(s) || s < 0.0f || (positive && s == 0.0f)) {
    return ctx.error("attribute {} is {}; it must be finite and {}", name, s,
                     positive ? "> 0" : ">= 0");
  }
  return s;
}

// An int attribute in 0..255 (required when `required`, else 0 by default).
Result<int32_t> zero_attr(const NodeContext& ctx, std::string_view name, bool required) {
  if (!ctx.attrs().has(name)) {
    if (required) return ctx.error("attribute {} is required", name);
    return 0;
  }
  const int64_t z = ctx.attrs().get_int(name, 0);
  if (z < 0 || z > 255) {
    return ctx.error("attribute {} is {}; a uint8 zero point is in 0..255", name, z);
  }
  return static_cast<int32_t>(z);
}

// --- QConv ---------------------------------------------------------------------------------------

// QConv's and QConvNhwc's checks after X's rank: the quantization attributes, the activation, Y
// (the convolution of x_nchw, X as NCHW; laid out as NHWC when `nhwc`), the channel vectors, the
// residual and the depth.
Status infer_qconv_output(InferContext& ctx, const ir::TensorDesc& x_nchw, bool nhwc);

Status infer_qconv(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input(ctx, 0, "X", DType::kU8, false));
  KILN_RETURN_IF_ERROR(check_input(ctx, 1, "W", DType::kI8, true));
  const ir::TensorDesc& x = ctx.input(0);
  if (x.has_rank() && (x.rank() < 3 || x.rank() > 5)) {
    return ctx.unsupported("{} must be [N, C, D1..Dk] with 1, 2 or 3 spatial dims", named("X", x));
  }
  return infer_qconv_output(ctx, x, /*nhwc=*/false);
}

// The reference kernel's epilogue for the node's attributes and inputs (scales at
// w_scale_input, bias at bias_input, the residual at input 4).
Result<ref::QuantEpilogue> epilogue_of(const RunContext& ctx, std::string_view in,
                                       size_t w_scale_input, size_t bias_input) {
  const bool z_u8 = ctx.has_input(4) && ctx.input(4).dtype() == DType::kU8;
  KILN_ASSIGN_OR_RETURN(const QuantAttrs q, read_quant_attrs(ctx, in, z_u8));
  ref::QuantEpilogue e;
  KILN_ASSIGN_OR_RETURN(e.act, read_activation(ctx));
  e.in_scale = q.in_scale;
  e.in_zero = q.in_zero;
  e.w_scale = ctx.input(w_scale_input).data<float>();
  if (ctx.has_input(bias_input)) e.bias = ctx.input(bias_input).data<float>();
  if (ctx.has_input(4)) {
    const Tensor& z = ctx.input(4);
    if (z.dims() != ctx.output_desc(0).static_dims()) {
      return ctx.error("residual Z {} must have exactly the output's shape {}", z.desc(),
                       ctx.output_desc(0).to_string());
    }
    if (z_u8) {
      e.z_u8 = z.data<uint8_t>();
    } else {
      e.z_f32 = z.data<float>();
    }
  }
  e.z_scale = q.z_scale;
  e.z_zero = q.z_zero;
  e.out_u8 = q.out_u8;
  e.y_scale = q.y_scale;
  e.y_zero = q.y_zero;
  return e;
}

Status run_qconv(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, epilogue_of(ctx, "x", 2, 3));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(const ref::ConvParams p, conv_kernel_params(ctx, x, w));
  Tensor& y = ctx.allocate_output(0);
  ref::qconv(p, e, x.data<uint8_t>(), w.data<int8_t>(), y.raw_data());
  return Status::ok();
}

// --- QConvNhwc ----------------------------------------------------------------------------------
// kiln.QConv on channels-last tensors: X [N, H, W, C], Y and Z [N, OH, OW, M]; W stays [M, C, KH,
// KW]. What passes/qconv_nhwc.cc makes of QConv chains, for the kernels that read each pixel's
// channels contiguously. The reference transposes to NCHW, runs QConv's, and transposes back.

Status infer_qconv_nhwc(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input(ctx, 0, "X", DType::kU8, false));
  KILN_RETURN_IF_ERROR(check_input(ctx, 1, "W", DType::kI8, true));
  const ir::TensorDesc& x = ctx.input(0);
  if (x.has_rank() && x.rank() != 4) {
    return ctx.unsupported("{} must be [N, H, W, C]", named("X", x));
  }
  return infer_qconv_output(ctx, permuted(x, kNhwcToNchw), /*nhwc=*/true);
}

Status infer_qconv_output(InferContext& ctx, const ir::TensorDesc& x_nchw, bool nhwc) {
  const ir::TensorDesc& w = ctx.input(1);
  const bool z_u8 = ctx.has_input(4) && ctx.input(4).dtype == DType::kU8;
  KILN_ASSIGN_OR_RETURN(const QuantAttrs q, read_quant_attrs(ctx, "x", z_u8));
  KILN_RETURN_IF_ERROR(read_activation(ctx).status());
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y,
                        conv_output_desc(ctx, x_nchw, w, nullptr, output_dtype(q)));
  if (nhwc) y = permuted(y, kNchwToNhwc);
  const ir::Dim m = w.has_rank() ? w.dim(0) : ir::Dim::unknown();
  KILN_RETURN_IF_ERROR(check_channel_vector(ctx, 2, "W_scale", m));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_channel_vector(ctx, 3, "B", m));
  if (ctx.has_input(4)) KILN_RETURN_IF_ERROR(check_z(ctx, 4, y));
  const Tensor& wv = *ctx.input_value(1);
  KILN_RETURN_IF_ERROR(check_depth(ctx, wv.dim(0) == 0 ? 0 : wv.numel() / wv.dim(0), w));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status run_qconv_nhwc(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(ref::QuantEpilogue e, epilogue_of(ctx, "x", 2, 3));
  const Tensor x = permuted(ctx.input(0), kNhwcToNchw);
  Tensor z;
  if (ctx.has_input(4)) {
    z = permuted(ctx.input(4), kNhwcToNchw);
    if (e.z_u8 != nullptr) e.z_u8 = z.data<uint8_t>();
    if (e.z_f32 != nullptr) e.z_f32 = z.data<float>();
  }
  const Tensor& w = ctx.input(1);
  KILN_ASSIGN_OR_RETURN(const ref::ConvParams p, conv_kernel_params(ctx, x, w));
  Tensor& y = ctx.allocate_output(0);
  Tensor y_nchw(y.dtype(), permuted(y.dims(), kNhwcToNchw));
  ref::qconv(p, e, x.data<uint8_t>(), w.data<int8_t>(), y_nchw.raw_data());
  kernels::ref::transpose(y_nchw.raw_data(), dtype_size(y.dtype()), y_nchw.dims(), kNchwToNhwc,
                          y.raw_data());
  return Status::ok();
}

// --- QGemm ---------------------------------------------------------------------------------------

Status infer_qgemm(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input(ctx, 0, "A", DType::kU8, false));
  KILN_RETURN_IF_ERROR(check_input(ctx, 1, "B", DType::kI8, true));
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(1);
  if (a.has_rank() && a.rank() < 2) return ctx.error("{} must have rank >= 2", named("A", a));
  if (!b.has_rank() || b.rank() != 2) return ctx.error("{} must be 2-D [K, N]", named("B", b));
  const ir::Dim ka = a.has_rank() ? a.dim(a.rank() - 1) : ir::Dim::unknown();
  const ir::Dim& k = b.dim(0);
  const ir::Dim& n = b.dim(1);
  if (ka.is_known() && k.is_known() && ka.value != k.value) {
    return ctx.error("inner dimensions do not match: {} has K={} but {} has K={}", named("A", a),
                     ka.value, named("B", b), k.value);
  }
  const bool z_u8 = ctx.has_input(4) && ctx.input(4).dtype == DType::kU8;
  KILN_ASSIGN_OR_RETURN(const QuantAttrs q, read_quant_attrs(ctx, "a", z_u8));
  KILN_RETURN_IF_ERROR(read_activation(ctx).status());
  KILN_RETURN_IF_ERROR(check_channel_vector(ctx, 2, "B_scale", n));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_channel_vector(ctx, 3, "C", n));
  KILN_RETURN_IF_ERROR(check_depth(ctx, ctx.input_value(1)->dim(0), b));
  ir::TensorDesc y = ir::TensorDesc::unknown_shape(output_dtype(q));
  if (a.has_rank()) {
    ir::Shape out(a.shape->begin(), a.shape->end() - 1);
    out.push_back(n);
    y = ir::TensorDesc::of(output_dtype(q), std::move(out));
  }
  if (ctx.has_input(4)) KILN_RETURN_IF_ERROR(check_z(ctx, 4, y));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status run_qgemm(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ref::QuantEpilogue e, epilogue_of(ctx, "a", 2, 3));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const int64_t k = b.dim(0);
  const int64_t n = b.dim(1);
  const int64_t m = dims_numel(std::span<const int64_t>(a.dims()).first(a.dims().size() - 1));
  Tensor& y = ctx.allocate_output(0);
  ref::qgemm(m, k, n, e, a.data<uint8_t>(), b.data<int8_t>(), y.raw_data());
  return Status::ok();
}

// --- ScaleQuantize ---------------------------------------------------------------------------

// S's dims against X's: the same rank, S[0] 1 or N, S[1] = C, the rest 1 (unknown dims pass).
Status check_channel_scale(const InferContext& ctx, const ir::TensorDesc& x,
                           const ir::TensorDesc& s) {
  if (!x.has_rank() || !s.has_rank()) return Status::ok();
  auto fits = [&](int d) {
    const ir::Dim& sd = s.dim(d);
    if (!sd.is_known()) return true;
    if (d == 1) return !x.dim(1).is_known() || sd.value == x.dim(1).value;
    return sd.value == 1 || (d == 0 && sd == x.dim(0));
  };
  bool ok = x.rank() >= 2 && s.rank() == x.rank();
  for (int d = 0; ok && d < s.rank(); ++d) ok = fits(d);
  if (!ok) {
    return ctx.error("{} must scale {} per (image, channel): [1 or N, C, 1, ...]", named("S", s),
                     named("X", x));
  }
  return Status::ok();
}

Status infer_scale_quantize(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input(ctx, 0, "X", DType::kF32, false));
  KILN_RETURN_IF_ERROR(check_input(ctx, 1, "S", DType::kF32, false));
  KILN_RETURN_IF_ERROR(check_channel_scale(ctx, ctx.input(0), ctx.input(1)));
  KILN_RETURN_IF_ERROR(scale_attr(ctx, "y_scale", true, true).status());
  KILN_RETURN_IF_ERROR(zero_attr(ctx, "y_zero_point", true).status());
  ir::TensorDesc y = ctx.input(0);
  y.dtype = DType::kU8;
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status run_scale_quantize(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const float y_scale, scale_attr(ctx, "y_scale", true, true));
  KILN_ASSIGN_OR_RETURN(const int32_t zero, zero_attr(ctx, "y_zero_point", true));
  const Tensor& x = ctx.input(0);
  const Tensor& s = ctx.input(1);
  Tensor& y = ctx.allocate_output(0);
  const int64_t n = x.dim(0), c = x.dim(1), plane = n * c == 0 ? 0 : x.numel() / (n * c);
  // The product rounded to float32, then QuantizeLinear's own arithmetic: Mul then QuantizeLinear.
  std::vector<float> v(static_cast<size_t>(plane));
  const auto y_zero = static_cast<uint8_t>(zero);
  const ref::QuantParams p{.numel = plane};
  for (int64_t i = 0; i < n * c; ++i) {
    const float k = s.data<float>()[s.dim(0) == 1 ? i % c : i];
    const float* xi = x.data<float>() + i * plane;
    for (int64_t j = 0; j < plane; ++j) v[static_cast<size_t>(j)] = xi[j] * k;
    ref::quantize_linear<uint8_t>(p, v.data(), &y_scale, &y_zero, y.data<uint8_t>() + i * plane);
  }
  return Status::ok();
}

std::vector<AttrSpec> quant_attrs(std::string_view in) {
  using ir::AttrType;
  const bool x = in == "x";
  return {{"activation", AttrType::kString},
          {"activation_params", AttrType::kFloats},
          {x ? "x_scale" : "a_scale", AttrType::kFloat},
          {x ? "x_zero_point" : "a_zero_point", AttrType::kInt},
          {"output_type", AttrType::kInt},
          {"y_scale", AttrType::kFloat},
          {"y_zero_point", AttrType::kInt},
          {"z_scale", AttrType::kFloat},
          {"z_zero_point", AttrType::kInt}};
}

}  // namespace

Result<QuantAttrs> read_quant_attrs(const NodeContext& ctx, std::string_view in, bool z_uint8) {
  QuantAttrs q;
  const std::string scale = fmt::format("{}_scale", in);
  const std::string zero = fmt::format("{}_zero_point", in);
  KILN_ASSIGN_OR_RETURN(q.in_scale, scale_attr(ctx, scale, true));
  KILN_ASSIGN_OR_RETURN(q.in_zero, zero_attr(ctx, zero, false));
  const int64_t out = ctx.attrs().get_int("output_type", kQuantOutputFloat);
  if (out != kQuantOutputFloat && out != kQuantOutputUint8) {
    return ctx.unsupported(
        "output_type {} is not supported: {} (float32) or {} (uint8), ONNX TensorProto codes", out,
        kQuantOutputFloat, kQuantOutputUint8);
  }
  q.out_u8 = out == kQuantOutputUint8;
  if (q.out_u8) {
    KILN_ASSIGN_OR_RETURN(q.y_scale, scale_attr(ctx, "y_scale", true, true));
    KILN_ASSIGN_OR_RETURN(q.y_zero, zero_attr(ctx, "y_zero_point", true));
  }
  if (z_uint8) {
    KILN_ASSIGN_OR_RETURN(q.z_scale, scale_attr(ctx, "z_scale", true));
    KILN_ASSIGN_OR_RETURN(q.z_zero, zero_attr(ctx, "z_zero_point", true));
  }
  return q;
}

void register_kiln_quant_ops(OpRegistry& r) {
  using ir::AttrType;
  std::vector<AttrSpec> conv = {{"auto_pad", AttrType::kString}, {"dilations", AttrType::kInts},
                                {"group", AttrType::kInt},       {"kernel_shape", AttrType::kInts},
                                {"pads", AttrType::kInts},       {"strides", AttrType::kInts}};
  for (const AttrSpec& a : quant_attrs("x")) conv.push_back(a);
  const std::vector<AttrSpec> conv_attrs_q = conv;
  r.add({.op_type = "QConv",
         .since_versions = {1},
         .min_inputs = 3,
         .max_inputs = 5,
         .attrs = std::move(conv),
         .infer = infer_qconv,
         .run = run_qconv,
         .domain = kKilnDomain});
  r.add({.op_type = "QConvNhwc",
         .since_versions = {1},
         .min_inputs = 3,
         .max_inputs = 5,
         .attrs = conv_attrs_q,
         .infer = infer_qconv_nhwc,
         .run = run_qconv_nhwc,
         .domain = kKilnDomain});
  r.add({.op_type = "ScaleQuantize",
         .since_versions = {1},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"y_scale", AttrType::kFloat}, {"y_zero_point", AttrType::kInt}},
         .infer = infer_scale_quantize,
         .run = run_scale_quantize,
         .domain = kKilnDomain});
  r.add({.op_type = "QGemm",
         .since_versions = {1},
         .min_inputs = 3,
         .max_inputs = 5,
         .attrs = quant_attrs("a"),
         .infer = infer_qgemm,
         .run = run_qgemm,
         .domain = kKilnDomain});
}

}  // namespace kiln::ops
