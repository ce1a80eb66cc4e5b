// kiln.Patches: an image cut into non-overlapping patches, one row per patch (see
// ops/kiln_fused.h). Created by passes/patch_embedding.h, which turns a vision transformer's patch
// embedding (Conv with kernel = stride -> Reshape -> Transpose) into Patches and a GEMM.
#include <utility>
#include <vector>

#include "kernels/ref/movement.h"
#include "ops/families.h"
#include "ops/kiln_fused.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops {
namespace {

namespace ref = kernels::ref;
using ir::Dim;
using ir::TensorDesc;

constexpr DType kPatchTypes[] = {DType::kF32, DType::kF16};

Result<std::pair<int64_t, int64_t>> patch_size(const NodeContext& ctx) {
  const std::vector<int64_t> k = ctx.attrs().get_ints("kernel_shape");
  if (k.size() != 2 || k[0] <= 0 || k[1] <= 0) {
    return ctx.error("kernel_shape must be two positive sizes, got {}", shape_detail::ints_text(k));
  }
  return std::pair{k[0], k[1]};
}

// dim / by when known (an error when it does not divide), unknown otherwise.
Result<Dim> divided(const NodeContext& ctx, const Dim& d, int64_t by, const TensorDesc& x) {
  if (!d.is_known()) return Dim::unknown();
  if (d.value % by != 0) {
    return ctx.error("{} does not cut into patches of {}: {} is not a multiple of it",
                     x.to_string(), by, d.value);
  }
  return Dim::known(d.value / by);
}

// a * b when both are known (an error naming `what` when it overflows), unknown otherwise.
Result<Dim> product(const NodeContext& ctx, const Dim& a, const Dim& b, std::string_view what) {
  if (!a.is_known() || !b.is_known()) return Dim::unknown();
  KILN_ASSIGN_OR_RETURN(const int64_t v, checked_mul(ctx, a.value, b.value, what));
  return Dim::known(v);
}

Status infer_patches(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_dtypes(ctx, kPatchTypes));
  const TensorDesc& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const auto k, patch_size(ctx));
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::of(x.dtype, shape_detail::unknown_dims(3)));
    return Status::ok();
  }
  if (x.rank() != 4) return ctx.error("X must be 4-D (NCHW), got {}", x.to_string());
  KILN_ASSIGN_OR_RETURN(const Dim oh, divided(ctx, x.dim(2), k.first, x));
  KILN_ASSIGN_OR_RETURN(const Dim ow, divided(ctx, x.dim(3), k.second, x));
  KILN_ASSIGN_OR_RETURN(const int64_t area, checked_mul(ctx, k.first, k.second, "kh x kw"));
  KILN_ASSIGN_OR_RETURN(const Dim depth, product(ctx, x.dim(1), Dim::known(area), "C x kh x kw"));
  KILN_ASSIGN_OR_RETURN(const Dim patches, product(ctx, oh, ow, "the patch count"));
  ctx.set_output(0, TensorDesc::of(x.dtype, {x.dim(0), patches, depth}));
  return Status::ok();
}

// Y [n, oh * OW + ow, (c * kh + i) * kw + j] = X [n, c, oh * kh + i, ow * kw + j]: a reshape of X
// to [N, C, OH, kh, OW, kw] and a transpose to [N, OH, OW, C, kh, kw].
Status run_patches(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(const auto k, patch_size(ctx));
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const Dims dims6 = {n, c, h / k.first, k.first, w / k.second, k.second};
  const int64_t perm[] = {0, 2, 4, 1, 3, 5};
  Tensor& y = ctx.allocate_output(0);
  ref::transpose(x.raw_data(), shape_detail::elem_size(x), dims6, perm, y.raw_data());
  return Status::ok();
}

}  // namespace

void register_kiln_patches_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = kPatches,
         .since_versions = {1},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"kernel_shape", AttrType::kInts}},
         .infer = infer_patches,
         .run = run_patches,
         .domain = kKilnDomain});
}

}  // namespace kiln::ops
