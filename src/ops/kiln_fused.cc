// kiln.FusedConv and kiln.FusedGemm: shape functions and reference kernels (see ops/kiln_fused.h).
#include "ops/kiln_fused.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "kernels/ref/conv.h"
#include "kernels/ref/matmul.h"
#include "ops/families.h"
#include "ops/nn_conv.h"
#include "ops/nn_window.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// The reference kernels compute in float32; float16 is widened and narrowed around them.
constexpr DType kFusedTypes[] = {DType::kF32, DType::kF16};

std::vector<std::string_view> activation_names() {
  std::vector<std::string_view> names;
  for (int k = static_cast<int>(ref::Activation::kRelu);
       k <= static_cast<int>(ref::Activation::kTanh); ++k) {
    names.push_back(ref::activation_name(static_cast<ref::Activation>(k)));
  }
  return names;
}

// --- FusedConv
// ------------------------------------------------------------------------------------

Status infer_fused_conv(InferContext& ctx) {
  static constexpr size_t kSame[] = {1, 2, 3};
  KILN_RETURN_IF_ERROR(require_input(ctx, 1, "W"));
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFusedTypes, kSame));
  KILN_RETURN_IF_ERROR(read_activation(ctx).status());
  const ir::TensorDesc* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  KILN_ASSIGN_OR_RETURN(ir::TensorDesc y,
                        conv_output_desc(ctx, ctx.input(0), ctx.input(1), b, ctx.input(0).dtype));
  if (ctx.has_input(3)) KILN_RETURN_IF_ERROR(check_residual(ctx, ctx.input(3), y));
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

}  // namespace

Result<Tensor> fused_conv_reference(const NodeContext& ctx, const Tensor& x_in, const Tensor& w_in,
                                    const Tensor* b_in, const Tensor* z_in) {
  KILN_ASSIGN_OR_RETURN(const ref::ActivationParams act, read_activation(ctx));
  KILN_ASSIGN_OR_RETURN(const Tensor x, as_dtype(x_in, DType::kF32));
  KILN_ASSIGN_OR_RETURN(const Tensor w, as_dtype(w_in, DType::kF32));
  Tensor b;
  if (b_in != nullptr) {
    KILN_ASSIGN_OR_RETURN(b, as_dtype(*b_in, DType::kF32));
  }
  KILN_ASSIGN_OR_RETURN(const ref::ConvParams p, conv_kernel_params(ctx, x, w));
  Dims dims{p.batch, p.out_channels};
  dims.insert(dims.end(), p.out_dims.begin(), p.out_dims.end());
  Tensor y(DType::kF32, dims);
  ref::conv<float>(p, x.data<float>(), w.data<float>(), b.defined() ? b.data<float>() : nullptr,
                   y.data<float>());
  float* out = y.data<float>();
  if (z_in != nullptr) {
    KILN_ASSIGN_OR_RETURN(const Tensor z, as_dtype(*z_in, DType::kF32));
    if (z.dims() != y.dims()) {
      return ctx.error("residual Z {} must have exactly the output's shape {}", z.desc(), y.desc());
    }
    const float* zd = z.data<float>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] += zd[i];
  }
  ref::apply_activation(act, out, y.numel());
  return y;
}

namespace {

Status run_fused_conv(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const Tensor y,
                        fused_conv_reference(ctx, ctx.input(0), ctx.input(1),
                                             ctx.has_input(2) ? &ctx.input(2) : nullptr,
                                             ctx.has_input(3) ? &ctx.input(3) : nullptr));
  return set_output_as_inferred(ctx, 0, y);
}

// --- FusedGemm
// ------------------------------------------------------------------------------------

// C against the shape it broadcasts to: [M, N] for a 2-D A (Gemm's rule), [1, N] otherwise.
Status check_gemm_c(const NodeContext& ctx, const ir::TensorDesc& c, const ir::Dim& m,
                    const ir::Dim& n) {
  if (!c.has_rank()) return Status::ok();
  const ir::Dim target[] = {m, n};
  bool ok = c.rank() <= 2;
  for (int i = 0; ok && i < c.rank(); ++i) {
    const ir::Dim& want = target[2 - c.rank() + i];
    const ir::Dim& got = c.dim(i);
    ok = !(got.is_known() && want.is_known() && got.value != want.value && got.value != 1);
  }
  if (!ok) {
    return ctx.error("C {} cannot be broadcast to [{},{}]", c.to_string(), m.to_string(),
                     n.to_string());
  }
  return Status::ok();
}

Status infer_fused_gemm(InferContext& ctx) {
  static constexpr size_t kSame[] = {1, 2};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kFusedTypes, kSame));
  KILN_RETURN_IF_ERROR(read_activation(ctx).status());
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(1);
  const bool ta = ctx.attrs().get_int("transA", 0) != 0;
  const bool tb = ctx.attrs().get_int("transB", 0) != 0;
  if (b.has_rank() && b.rank() != 2) return ctx.error("B {} must be 2-D", b.to_string());
  if (a.has_rank() && a.rank() < 2) {
    return ctx.error("A {} must have rank >= 2", a.to_string());
  }
  if (a.has_rank() && a.rank() > 2 && ta) {
    return ctx.error("transA = 1 needs a 2-D A, got A {}", a.to_string());
  }
  // C broadcasts to [M, N] for a 2-D A, to [1, N] for a batched one.
  const bool batched = a.has_rank() && a.rank() > 2;
  const ir::Dim m = batched        ? ir::Dim::known(1)
                    : a.has_rank() ? a.dim(ta ? 1 : 0)
                                   : ir::Dim::unknown();
  const ir::Dim ka = !a.has_rank() ? ir::Dim::unknown() : a.dim(ta ? 0 : a.rank() - 1);
  const ir::Dim kb = b.has_rank() ? b.dim(tb ? 1 : 0) : ir::Dim::unknown();
  const ir::Dim n = b.has_rank() ? b.dim(tb ? 0 : 1) : ir::Dim::unknown();
  if (ka.is_known() && kb.is_known() && ka.value != kb.value) {
    return ctx.error(
        "inner dimensions do not match: A {} (transA={}) has K={} but B {} (transB={}) has K={}",
        a.to_string(), ta ? 1 : 0, ka.value, b.to_string(), tb ? 1 : 0, kb.value);
  }
  if (ctx.has_input(2)) KILN_RETURN_IF_ERROR(check_gemm_c(ctx, ctx.input(2), m, n));
  if (!a.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(a.dtype));
    return Status::ok();
  }
  ir::Shape out = batched ? ir::Shape(a.shape->begin(), a.shape->end() - 1) : ir::Shape{m};
  out.push_back(n);
  ir::TensorDesc y = ir::TensorDesc::of(a.dtype, std::move(out));
  if (ctx.has_input(3)) {
    if (ctx.input(3).dtype != a.dtype) {
      return ctx.error("residual Z {} must have A's dtype {}", ctx.input(3).to_string(),
                       dtype_name(a.dtype));
    }
    KILN_RETURN_IF_ERROR(check_residual(ctx, ctx.input(3), y));
  }
  ctx.set_output(0, std::move(y));
  return Status::ok();
}

Status run_fused_gemm(RunContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const ref::ActivationParams act, read_activation(ctx));
  KILN_ASSIGN_OR_RETURN(const Tensor a, as_dtype(ctx.input(0), DType::kF32));
  KILN_ASSIGN_OR_RETURN(const Tensor b, as_dtype(ctx.input(1), DType::kF32));
  Tensor c;
  if (ctx.has_input(2)) {
    KILN_ASSIGN_OR_RETURN(c, as_dtype(ctx.input(2), DType::kF32));
  }
  ref::GemmParams p;
  p.trans_a = ctx.attrs().get_int("transA", 0) != 0;
  p.trans_b = ctx.attrs().get_int("transB", 0) != 0;
  p.alpha = ctx.attrs().get_float("alpha", 1.0f);
  p.beta = ctx.attrs().get_float("beta", 1.0f);
  if (a.rank() == 2) {
    p.m = a.dim(p.trans_a ? 1 : 0);
    p.k = a.dim(p.trans_a ? 0 : 1);
  } else {  // rank > 2, transA = 0: one [M, K] matrix, M the product of the leading dims
    const std::span<const int64_t> dims(a.dims());
    p.m = dims_numel(dims.first(dims.size() - 1));
    p.k = dims.back();
  }
  p.n = b.dim(p.trans_b ? 0 : 1);
  if (c.defined()) p.c_dims = c.dims();
  Tensor y(DType::kF32, ctx.output_desc(0).static_dims());
  ref::gemm<float>(p, a.data<float>(), b.data<float>(), c.defined() ? c.data<float>() : nullptr,
                   y.data<float>());
  if (ctx.has_input(3)) {
    KILN_ASSIGN_OR_RETURN(const Tensor z, as_dtype(ctx.input(3), DType::kF32));
    if (z.dims() != y.dims()) {
      return ctx.error("residual Z {} must have exactly the output's shape {}", z.desc(),
                       ctx.output_desc(0).to_string());
    }
    for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] += z.data<float>()[i];
  }
  ref::apply_activation(act, y.data<float>(), y.numel());
  return set_output_as_inferred(ctx, 0, y);
}

}  // namespace

// Z must have exactly Y's shape: the residual is added element by element, never broadcast. Y's
// unknown dims take Z's (they must be equal).
Status check_residual(const NodeContext& ctx, const ir::TensorDesc& z, ir::TensorDesc& y) {
  if (!z.has_rank()) return Status::ok();
  if (!y.has_rank()) {
    y.shape = z.shape;
    return Status::ok();
  }
  bool ok = z.rank() == y.rank();
  for (int i = 0; ok && i < y.rank(); ++i) {
    const ir::Dim& zd = z.dim(i);
    const ir::Dim& yd = y.dim(i);
    ok = !(zd.is_known() && yd.is_known() && zd.value != yd.value);
  }
  if (!ok) {
    return ctx.error("residual Z {} must have exactly the output's shape {}", z.to_string(),
                     y.to_string());
  }
  for (int i = 0; i < y.rank(); ++i) {
    ir::Dim& yd = (*y.shape)[static_cast<size_t>(i)];
    if (!yd.is_known() && yd.symbol.empty()) yd = z.dim(i);
  }
  return Status::ok();
}

Result<ref::ActivationParams> read_activation(const NodeContext& ctx, std::string_view prefix) {
  const std::string attr = fmt::format("{}activation", prefix);
  const std::string name = ctx.attrs().get_string(attr, "");
  const std::optional<ref::Activation> kind = ref::parse_activation(name);
  if (!kind) {
    return ctx.error("unknown {} '{}' (kiln knows {})", attr, name,
                     fmt::join(activation_names(), ", "));
  }
  const std::vector<float> params = ctx.attrs().get_floats(attr + "_params");
  const auto want = static_cast<size_t>(ref::activation_param_count(*kind));
  if (params.size() != want) {
    return ctx.error("{} '{}' takes {} value(s) in {}_params, got {}", attr,
                     name.empty() ? "none" : name, want, attr, params.size());
  }
  ref::ActivationParams p{*kind};
  if (want > 0) p.alpha = params[0];
  if (want > 1) p.beta = params[1];
  return p;
}

void set_activation_attrs(ir::Attributes& attrs, const ref::ActivationParams& p) {
  attrs.erase("activation");
  attrs.erase("activation_params");
  if (p.kind == ref::Activation::kNone) return;
  attrs.set("activation", std::string(ref::activation_name(p.kind)));
  const int count = ref::activation_param_count(p.kind);
  if (count == 1) attrs.set("activation_params", std::vector<float>{p.alpha});
  if (count == 2) attrs.set("activation_params", std::vector<float>{p.alpha, p.beta});
}

int residual_input(const ir::Node& node) {
  if (node.domain == kKilnDomain && node.op_type == "QConvNhwc") {
    return node.inputs.size() > 4 && node.inputs[4] != ir::kNoValue ? 4 : -1;
  }
  const bool adds =
      node.domain == kKilnDomain &&
      (node.op_type == "FusedConv" || node.op_type == "ConvNchw16c" || node.op_type == "FusedGemm");
  return adds && node.inputs.size() > 3 && node.inputs[3] != ir::kNoValue ? 3 : -1;
}

bool has_activation(const ir::Attributes& attrs) {
  return !attrs.get_string("activation", "").empty();
}

std::vector<AttrSpec> fused_conv_attrs() {
  using ir::AttrType;
  return {{"auto_pad", AttrType::kString},   {"dilations", AttrType::kInts},
          {"group", AttrType::kInt},         {"kernel_shape", AttrType::kInts},
          {"pads", AttrType::kInts},         {"strides", AttrType::kInts},
          {"activation", AttrType::kString}, {"activation_params", AttrType::kFloats}};
}

void register_kiln_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "FusedConv",
         .since_versions = {1},
         .min_inputs = 2,
         .max_inputs = 4,
         .attrs = fused_conv_attrs(),
         .infer = infer_fused_conv,
         .run = run_fused_conv,
         .domain = kKilnDomain});
  r.add({.op_type = "FusedGemm",
         .since_versions = {1},
         .min_inputs = 2,
         .max_inputs = 4,
         .attrs = {{"alpha", AttrType::kFloat},
                   {"beta", AttrType::kFloat},
                   {"transA", AttrType::kInt},
                   {"transB", AttrType::kInt},
                   {"activation", AttrType::kString},
                   {"activation_params", AttrType::kFloats}},
         .infer = infer_fused_gemm,
         .run = run_fused_gemm,
         .domain = kKilnDomain});
}

}  // namespace kiln::ops
