// kiln.Attention: shape function and reference kernel (see ops/kiln_fused.h), created by
// passes/attention_fusion.h from Transpose / scale -> MatMul -> Softmax -> MatMul -> Transpose.
#include <fmt/ranges.h>

#include <string>

#include "kernels/ref/attention.h"
#include "ops/families.h"
#include "ops/kiln_fused.h"
#include "ops/math_common.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;

constexpr DType kAttentionTypes[] = {DType::kF32};

std::string dims_text(const ir::Shape& s) { return shape_text(ir::TensorDesc::of(DType::kF32, s)); }

// `s` seen through `perm` (empty: as it is); an error naming the operand when perm does not
// permute s's axes.
Result<ir::Shape> permute(const NodeContext& ctx, const ir::Shape& s,
                          const std::vector<int64_t>& perm, std::string_view what) {
  if (!ref::valid_perm(perm, static_cast<int64_t>(s.size()))) {
    return ctx.error("perm_{} [{}] does not permute the {} axes of {}", what, fmt::join(perm, ","),
                     s.size(), dims_text(s));
  }
  if (perm.empty()) return s;
  ir::Shape out;
  for (int64_t p : perm) out.push_back(s[static_cast<size_t>(p)]);
  return out;
}

ir::Shape batch_of(const ir::Shape& s) { return ir::Shape(s.begin(), s.end() - 2); }

Status infer_attention(InferContext& ctx) {
  static constexpr size_t kSame[] = {1, 2, 3};
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kAttentionTypes, kSame));
  const ir::TensorDesc& qd = ctx.input(0);
  const ir::TensorDesc& kd = ctx.input(1);
  const ir::TensorDesc& vd = ctx.input(2);
  const bool masked = ctx.has_input(3);
  if (!qd.has_rank() || !kd.has_rank() || !vd.has_rank() || (masked && !ctx.input(3).has_rank())) {
    ctx.set_output(0, ir::TensorDesc::unknown_shape(qd.dtype));
    return Status::ok();
  }
  if (qd.rank() < 2 || kd.rank() < 2 || vd.rank() < 2) {
    return ctx.error("Q {}, K {} and V {} must each have rank >= 2", shape_text(qd), shape_text(kd),
                     shape_text(vd));
  }
  const ref::AttentionPerms perms = attention_perms(ctx.attrs());
  KILN_ASSIGN_OR_RETURN(const ir::Shape q, permute(ctx, *qd.shape, perms.q, "q"));
  KILN_ASSIGN_OR_RETURN(const ir::Shape k, permute(ctx, *kd.shape, perms.k, "k"));
  KILN_ASSIGN_OR_RETURN(const ir::Shape v, permute(ctx, *vd.shape, perms.v, "v"));
  if (dims_conflict(q.back(), k[k.size() - 2]) || dims_conflict(k.back(), v[v.size() - 2])) {
    return ctx.error("Q' {} @ K' {} @ V' {} do not chain (the operands as transposed)",
                     dims_text(q), dims_text(k), dims_text(v));
  }
  const ir::Shape batches[] = {batch_of(q), batch_of(k), batch_of(v)};
  KILN_ASSIGN_OR_RETURN(ir::Shape result, broadcast_shapes(ctx, batches));
  if (masked) {  // the mask may add batch dims of its own, but not grow the scores' rows
    ir::Shape scores = result;
    scores.insert(scores.end(), {q[q.size() - 2], k.back()});
    const ir::Shape both[] = {scores, *ctx.input(3).shape};
    KILN_ASSIGN_OR_RETURN(ir::Shape masked_scores, broadcast_shapes(ctx, both));
    const ir::Dim& ms = masked_scores[masked_scores.size() - 2];
    const ir::Dim& mt = masked_scores.back();
    if (dims_conflict(ms, q[q.size() - 2]) || dims_conflict(mt, k.back())) {
      return ctx.error("the mask {} broadcasts the scores {} beyond their own rows",
                       shape_text(ctx.input(3)), dims_text(scores));
    }
    result.assign(masked_scores.begin(), masked_scores.end() - 2);
  }
  result.push_back(q[q.size() - 2]);
  result.push_back(v.back());
  KILN_ASSIGN_OR_RETURN(ir::Shape out, permute(ctx, result, perms.y, "y"));
  ctx.set_output(0, ir::TensorDesc::of(qd.dtype, std::move(out)));
  return Status::ok();
}

Status run_attention(RunContext& ctx) {
  const Tensor& q = ctx.input(0);
  const Tensor& k = ctx.input(1);
  const Tensor& v = ctx.input(2);
  const Tensor* mask = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  std::string error;
  const std::optional<ref::AttentionShape> shape =
      ref::attention_shape(q.dims(), k.dims(), v.dims(), attention_perms(ctx.attrs()), error,
                           mask != nullptr ? &mask->dims() : nullptr);
  if (!shape) return ctx.error("{}", error);
  Tensor& y = ctx.allocate_output(0);
  ref::attention(*shape, ctx.attrs().get_float("scale", 1.0f), q.data<float>(), k.data<float>(),
                 v.data<float>(), mask != nullptr ? mask->data<float>() : nullptr, y.data<float>());
  return Status::ok();
}

}  // namespace

ref::AttentionPerms attention_perms(const ir::Attributes& a) {
  return {a.get_ints("perm_q"), a.get_ints("perm_k"), a.get_ints("perm_v"), a.get_ints("perm_y")};
}

void register_kiln_attention_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Attention",
         .since_versions = {1},
         .min_inputs = 3,
         .max_inputs = 4,
         .attrs = {{"scale", AttrType::kFloat},
                   {"perm_q", AttrType::kInts},
                   {"perm_k", AttrType::kInts},
                   {"perm_v", AttrType::kInts},
                   {"perm_y", AttrType::kInts}},
         .infer = infer_attention,
         .run = run_attention,
         .domain = kKilnDomain});
}

}  // namespace kiln::ops
