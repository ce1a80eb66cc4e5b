// MatMul (numpy semantics), Gemm, MatMulInteger and QLinearMatMul.
#include "kernels/ref/matmul.h"
#include "ops/math_common.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

// --- MatMul
// ---------------------------------------------------------------------------------------

// numpy matmul output shape: 1-D operands are promoted ([K] -> [1,K] / [K,1]) and the promoted dim
// removed again; batch dims broadcast.
Result<ir::Shape> matmul_output_shape(const NodeContext& ctx, const ir::TensorDesc& a,
                                      const ir::TensorDesc& b) {
  if (a.rank() == 0 || b.rank() == 0) {
    return ctx.error("inputs must have rank >= 1, got A {} and B {}", shape_text(a), shape_text(b));
  }
  const ir::Shape& sa = *a.shape;
  const ir::Shape& sb = *b.shape;
  const ir::Dim& ka = sa.back();
  const ir::Dim& kb = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
  if (dims_conflict(ka, kb)) {
    return ctx.error("inner dimensions do not match: A {} has K={} but B {} has K={}",
                     shape_text(a), ka.value, shape_text(b), kb.value);
  }
  const ir::Shape batch_a(sa.begin(), sa.end() - std::min<ptrdiff_t>(2, std::ssize(sa)));
  const ir::Shape batch_b(sb.begin(), sb.end() - std::min<ptrdiff_t>(2, std::ssize(sb)));
  const ir::Shape batches[] = {batch_a, batch_b};
  KILN_ASSIGN_OR_RETURN(ir::Shape out, broadcast_shapes(ctx, batches));
  if (sa.size() >= 2) out.push_back(sa[sa.size() - 2]);
  if (sb.size() >= 2) out.push_back(sb.back());
  return out;
}

Status infer_matmul_like(InferContext& ctx, DType out_dtype) {
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(1);
  if (!a.has_rank() || !b.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(out_dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Shape out, matmul_output_shape(ctx, a, b));
  ctx.set_output(0, ir::TensorDesc::of(out_dtype, std::move(out)));
  return Status::ok();
}

Status infer_matmul(InferContext& ctx) {
  const size_t same[] = {1};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes, same));
  return infer_matmul_like(ctx, ctx.input(0).dtype);
}

// The kernel's view of concrete operand dims (after the shape function accepted them).
ref::MatMulShape matmul_shape(const Dims& a, const Dims& b) {
  ref::MatMulShape s;
  s.m = a.size() >= 2 ? a[a.size() - 2] : 1;
  s.k = a.back();
  s.n = b.size() >= 2 ? b.back() : 1;
  s.a_batch.assign(a.begin(), a.end() - std::min<ptrdiff_t>(2, std::ssize(a)));
  s.b_batch.assign(b.begin(), b.end() - std::min<ptrdiff_t>(2, std::ssize(b)));
  s.out_batch = *broadcast_dims(s.a_batch, s.b_batch);
  return s;
}

Status run_matmul(RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.allocate_output(0);
  const ref::MatMulShape s = matmul_shape(a.dims(), b.dims());
  if (!dispatch_numeric(a.dtype(), [&]<typename T>() {
        ref::matmul<T>(s, a.data<T>(), b.data<T>(), y.data<T>());
      })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(a.dtype()));
  }
  return Status::ok();
}

// --- Gemm
// -----------------------------------------------------------------------------------------

Status infer_gemm(InferContext& ctx) {
  const size_t same[] = {1, 2};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kNumericTypes, same));
  if (ctx.since_version() < 11) KILN_RETURN_IF_ERROR(require_input(ctx, 2, "C"));
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(1);
  const DType dtype = a.dtype;
  if ((a.has_rank() && a.rank() != 2) || (b.has_rank() && b.rank() != 2)) {
    return ctx.error("A and B must be 2-D, got A {} and B {}", shape_text(a), shape_text(b));
  }
  const bool ta = ctx.attrs().get_int("transA", 0) != 0;
  const bool tb = ctx.attrs().get_int("transB", 0) != 0;
  const ir::Dim m = a.has_rank() ? a.dim(ta ? 1 : 0) : ir::Dim::unknown();
  const ir::Dim ka = a.has_rank() ? a.dim(ta ? 0 : 1) : ir::Dim::unknown();
  const ir::Dim kb = b.has_rank() ? b.dim(tb ? 1 : 0) : ir::Dim::unknown();
  const ir::Dim n = b.has_rank() ? b.dim(tb ? 0 : 1) : ir::Dim::unknown();
  if (dims_conflict(ka, kb)) {
    return ctx.error(
        "inner dimensions do not match: A {} (transA={}) has K={} but B {} (transB={}) "
        "has K={}",
        shape_text(a), ta ? 1 : 0, ka.value, shape_text(b), tb ? 1 : 0, kb.value);
  }
  if (ctx.has_input(2) && ctx.input(2).has_rank()) {
    const ir::TensorDesc& c = ctx.input(2);
    const bool exact = ctx.since_version() < 7 && ctx.attrs().get_int("broadcast", 0) == 0;
    const ir::Dim mn[] = {m, n};
    bool ok = c.rank() <= 2 && (!exact || c.rank() == 2);
    for (int i = 0; ok && i < c.rank(); ++i) {
      const ir::Dim& want = mn[2 - c.rank() + i];
      const ir::Dim& got = c.dim(i);
      ok = !(got.is_known() && want.is_known() && got.value != want.value &&
             (exact || got.value != 1));
    }
    if (!ok) {
      return ctx.error("C {} cannot be broadcast to the output [{},{}]", shape_text(c),
                       m.to_string(), n.to_string());
    }
  }
  ctx.set_output(0, ir::TensorDesc::of(dtype, {m, n}));
  return Status::ok();
}

Status run_gemm(RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  Tensor& y = ctx.allocate_output(0);
  ref::GemmParams p;
  p.trans_a = ctx.attrs().get_int("transA", 0) != 0;
  p.trans_b = ctx.attrs().get_int("transB", 0) != 0;
  p.alpha = ctx.attrs().get_float("alpha", 1.0f);
  p.beta = ctx.attrs().get_float("beta", 1.0f);
  p.m = a.dim(p.trans_a ? 1 : 0);
  p.k = a.dim(p.trans_a ? 0 : 1);
  p.n = b.dim(p.trans_b ? 0 : 1);
  if (c != nullptr) p.c_dims = c->dims();
  if (!dispatch_numeric(a.dtype(), [&]<typename T>() {
        ref::gemm<T>(p, a.data<T>(), b.data<T>(), c ? c->data<T>() : nullptr, y.data<T>());
      })) {
    return ctx.unsupported("dtype {} is not supported", dtype_name(a.dtype()));
  }
  return Status::ok();
}

// --- MatMulInteger / QLinearMatMul
// ----------------------------------------------------------------

bool is_8bit(DType t) { return t == DType::kU8 || t == DType::kI8; }

// A zero point or scale that is per-tensor (1 element) or 1-D of `count` elements along the named
// operand's rows/columns. Returns its element count (1 or count).
Status check_per_axis(const NodeContext& ctx, const ir::TensorDesc& d, std::string_view what,
                      const ir::Dim& count, std::string_view along) {
  if (!d.has_rank()) return Status::ok();
  const bool scalar =
      d.rank() == 0 || (d.rank() == 1 && d.dim(0).is_known() && d.dim(0).value == 1);
  if (scalar) return Status::ok();
  if (d.rank() == 1 && !dims_conflict(d.dim(0), count)) return Status::ok();
  if (d.rank() > 1) {
    return ctx.unsupported("{} {} is N-D; only per-tensor or 1-D per-{} values are implemented",
                           what, shape_text(d), along);
  }
  return ctx.error("{} {} must have 1 or {} elements (per-{})", what, shape_text(d),
                   count.to_string(), along);
}

ir::Dim rows_of(const ir::TensorDesc& a) {
  return a.has_rank() && a.rank() >= 2 ? a.dim(a.rank() - 2) : ir::Dim::known(1);
}
ir::Dim cols_of(const ir::TensorDesc& b) {
  return b.has_rank() && b.rank() >= 2 ? b.dim(b.rank() - 1) : ir::Dim::known(1);
}

Status infer_matmul_integer(InferContext& ctx) {
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(1);
  if (!is_8bit(a.dtype) || !is_8bit(b.dtype)) {
    return ctx.unsupported("A and B must be uint8 or int8, got {} and {}", dtype_name(a.dtype),
                           dtype_name(b.dtype));
  }
  for (size_t i : {2, 3}) {
    if (!ctx.has_input(i)) continue;
    const ir::TensorDesc& z = ctx.input(i);
    const ir::TensorDesc& op = ctx.input(i - 2);
    if (z.dtype != op.dtype) {
      return ctx.error("zero point {} has dtype {} but its operand has {}", i, dtype_name(z.dtype),
                       dtype_name(op.dtype));
    }
    KILN_RETURN_IF_ERROR(i == 2 ? check_per_axis(ctx, z, "a_zero_point", rows_of(a), "row")
                                : check_per_axis(ctx, z, "b_zero_point", cols_of(b), "column"));
  }
  return infer_matmul_like(ctx, DType::kI32);
}

template <typename Fn>
bool dispatch_8bit_pair(DType ta, DType tb, Fn&& fn) {
  auto with_b = [&]<typename A>() {
    if (tb == DType::kU8)
      fn.template operator()<A, uint8_t>();
    else
      fn.template operator()<A, int8_t>();
  };
  if (!is_8bit(ta) || !is_8bit(tb)) return false;
  if (ta == DType::kU8)
    with_b.template operator()<uint8_t>();
  else
    with_b.template operator()<int8_t>();
  return true;
}

ref::ZeroPoints zero_points(const RunContext& ctx, size_t a_index, size_t b_index) {
  ref::ZeroPoints z;
  if (ctx.has_input(a_index)) {
    z.a = ctx.input(a_index).raw_data();
    z.a_count = ctx.input(a_index).numel();
  }
  if (ctx.has_input(b_index)) {
    z.b = ctx.input(b_index).raw_data();
    z.b_count = ctx.input(b_index).numel();
  }
  return z;
}

Status run_matmul_integer(RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.allocate_output(0);
  const ref::MatMulShape s = matmul_shape(a.dims(), b.dims());
  const ref::ZeroPoints z = zero_points(ctx, 2, 3);
  dispatch_8bit_pair(a.dtype(), b.dtype(), [&]<typename A, typename B>() {
    ref::matmul_integer<A, B>(s, a.data<A>(), b.data<B>(), z, y.data<int32_t>());
  });
  return Status::ok();
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
Status infer_qlinear_matmul(InferContext& ctx) {
  const ir::TensorDesc& a = ctx.input(0);
  const ir::TensorDesc& b = ctx.input(3);
  const DType ty = ctx.input(7).dtype;
  if (!is_8bit(a.dtype) || !is_8bit(b.dtype) || !is_8bit(ty)) {
    return ctx.unsupported("a, b and y must be uint8 or int8, got {}, {} and {}",
                           dtype_name(a.dtype), dtype_name(b.dtype), dtype_name(ty));
  }
  const struct {
    size_t zp;
    size_t op;
  } pairs[] = {{2, 0}, {5, 3}};
  for (auto [zp, op] : pairs) {
    if (ctx.input(zp).dtype != ctx.input(op).dtype) {
      return ctx.error("input {} (zero point) has dtype {} but its operand has {}", zp,
                       dtype_name(ctx.input(zp).dtype), dtype_name(ctx.input(op).dtype));
    }
  }
  for (size_t s : {1, 4, 6}) {
    if (ctx.input(s).dtype != DType::kF32) {
      return ctx.unsupported("scale input {} has dtype {}; only float32 scales are implemented", s,
                             dtype_name(ctx.input(s).dtype));
    }
  }
  KILN_RETURN_IF_ERROR(check_per_axis(ctx, ctx.input(1), "a_scale", rows_of(a), "row"));
  KILN_RETURN_IF_ERROR(check_per_axis(ctx, ctx.input(2), "a_zero_point", rows_of(a), "row"));
  KILN_RETURN_IF_ERROR(check_per_axis(ctx, ctx.input(4), "b_scale", cols_of(b), "column"));
  KILN_RETURN_IF_ERROR(check_per_axis(ctx, ctx.input(5), "b_zero_point", cols_of(b), "column"));
  const ir::Dim one = ir::Dim::known(1);
  KILN_RETURN_IF_ERROR(check_per_axis(ctx, ctx.input(6), "y_scale", one, "tensor"));
  KILN_RETURN_IF_ERROR(check_per_axis(ctx, ctx.input(7), "y_zero_point", one, "tensor"));
  if (!a.has_rank() || !b.has_rank()) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(ty));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Shape out, matmul_output_shape(ctx, a, b));
  ctx.set_output(0, ir::TensorDesc::of(ty, std::move(out)));
  return Status::ok();
}

Status run_qlinear_matmul(RunContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  Tensor& y = ctx.allocate_output(0);
  const ref::MatMulShape s = matmul_shape(a.dims(), b.dims());
  const ref::ZeroPoints z = zero_points(ctx, 2, 5);
  ref::QLinearScales sc;
  sc.a = ctx.input(1).data<float>();
  sc.a_count = ctx.input(1).numel();
  sc.b = ctx.input(4).data<float>();
  sc.b_count = ctx.input(4).numel();
  sc.y = ctx.input(6).data<float>()[0];
  const Tensor& yz = ctx.input(7);
  dispatch_8bit_pair(a.dtype(), b.dtype(), [&]<typename A, typename B>() {
    if (yz.dtype() == DType::kU8) {
      ref::qlinear_matmul<A, B, uint8_t>(s, a.data<A>(), b.data<B>(), z, sc, yz.data<uint8_t>()[0],
                                         y.data<uint8_t>());
    } else {
      ref::qlinear_matmul<A, B, int8_t>(s, a.data<A>(), b.data<B>(), z, sc, yz.data<int8_t>()[0],
                                        y.data<int8_t>());
    }
  });
  return Status::ok();
}

}  // namespace

void register_matmul_ops(OpRegistry& r) {
  r.add({.op_type = "MatMul",
         .since_versions = {1, 9, 13},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {},
         .infer = infer_matmul,
         .run = run_matmul});
  r.add({.op_type = "Gemm",
         .since_versions = {1, 6, 7, 9, 11, 13},
         .min_inputs = 2,
         .max_inputs = 3,
         .attrs = {{"alpha", ir::AttrType::kFloat},
                   {"beta", ir::AttrType::kFloat},
                   {"transA", ir::AttrType::kInt},
                   {"transB", ir::AttrType::kInt},
                   {"broadcast", ir::AttrType::kInt}},
         .infer = infer_gemm,
         .run = run_gemm});
  r.add({.op_type = "MatMulInteger",
         .since_versions = {10},
         .min_inputs = 2,
         .max_inputs = 4,
         .attrs = {},
         .infer = infer_matmul_integer,
         .run = run_matmul_integer});
  r.add({.op_type = "QLinearMatMul",
         .since_versions = {10, 21},
         .min_inputs = 8,
         .max_inputs = 8,
         .attrs = {},
         .infer = infer_qlinear_matmul,
         .run = run_qlinear_matmul});
}

}  // namespace kiln::ops
