// Ops that move data between layouts: Transpose, Concat, Split, Slice, Tile.
#include <algorithm>
#include <limits>

#include "kernels/ref/movement.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;
namespace ref = kernels::ref;

// --- Transpose
// -------------------------------------------------------------------------------------

Result<std::vector<int64_t>> transpose_perm(const NodeContext& ctx, int64_t rank) {
  std::vector<int64_t> perm;
  if (!ctx.attrs().has("perm")) {
    for (int64_t i = rank; i-- > 0;) perm.push_back(i);
    return perm;
  }
  perm = ctx.attrs().get_ints("perm");
  if (static_cast<int64_t>(perm.size()) != rank) {
    return ctx.error("perm {} has {} entries but the input has rank {}", ints_text(perm),
                     perm.size(), rank);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
      return ctx.error("perm {} is not a permutation of 0..{}", ints_text(perm), rank - 1);
    }
    seen[static_cast<size_t>(p)] = true;
  }
  return perm;
}

Status infer_transpose(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) {
    const bool has_perm = ctx.attrs().has("perm");
    const int rank = static_cast<int>(ctx.attrs().get_ints("perm").size());
    ctx.set_output(0, has_perm ? TensorDesc::of(x.dtype, unknown_dims(rank))
                               : TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_perm(ctx, x.rank()));
  ir::Shape out;
  for (int64_t p : perm) out.push_back(x.dim(static_cast<int>(p)));
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status run_transpose(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, transpose_perm(ctx, x.rank()));
  Tensor& y = ctx.allocate_output(0);
  ref::transpose(x.raw_data(), elem_size(x), x.dims(), perm, y.raw_data());
  return Status::ok();
}

// --- Concat
// ----------------------------------------------------------------------------------------

// Merges dim k of all inputs, which must agree: a known number wins over symbols.
Result<Dim> merge_equal_dims(const InferContext& ctx, int k, int64_t axis) {
  std::optional<Dim> acc;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorDesc& d = ctx.input(i);
    if (!d.has_rank()) continue;
    const Dim& dim = d.dim(k);
    if (!acc || (!acc->is_known() && dim.is_known())) {
      acc = dim;
    } else if (acc->is_known() && dim.is_known() && acc->value != dim.value) {
      return ctx.error("input {} is {} but input 0 is {}: dims other than axis {} must match", i,
                       d.to_string(), ctx.input(0).to_string(), axis);
    } else if (!acc->is_known() && !dim.is_known() && acc->symbol != dim.symbol) {
      acc = Dim::unknown();
    }
  }
  return acc.value_or(Dim::unknown());
}

Result<Dim> concat_axis_dim(const InferContext& ctx, int64_t axis) {
  int64_t known = 0;
  std::vector<Dim> rest;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorDesc& d = ctx.input(i);
    if (!d.has_rank()) return Dim::unknown();
    const Dim& dim = d.dim(static_cast<int>(axis));
    if (dim.is_known()) {
      KILN_ASSIGN_OR_RETURN(known, checked_add(ctx, known, dim.value, "the concatenated axis"));
    } else {
      rest.push_back(dim);
    }
  }
  if (rest.empty()) return Dim::known(known);
  return rest.size() == 1 && known == 0 ? rest[0] : Dim::unknown();
}

Status infer_concat(InferContext& ctx) {
  int rank = -1;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    KILN_RETURN_IF_ERROR(check_movable(ctx, i));
    const TensorDesc& d = ctx.input(i);
    if (d.dtype != ctx.input(0).dtype) {
      return ctx.error("input {} is {} but input 0 is {}", i, d.to_string(),
                       ctx.input(0).to_string());
    }
    if (!d.has_rank()) continue;
    if (rank >= 0 && d.rank() != rank) {
      return ctx.error("input {} is {} but input 0 is {}: ranks differ", i, d.to_string(),
                       ctx.input(0).to_string());
    }
    rank = d.rank();
  }
  const DType dtype = ctx.input(0).dtype;
  if (!ctx.attrs().has("axis")) return ctx.error("attribute 'axis' is required");
  if (rank < 0) {
    ctx.set_output(0, TensorDesc::unknown_shape(dtype));
    return Status::ok();
  }
  if (rank == 0) return ctx.error("cannot concatenate scalars");
  KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx, ctx.attrs().get_int("axis", 0), rank));
  ir::Shape out;
  for (int k = 0; k < rank; ++k) {
    if (k == axis) {
      KILN_ASSIGN_OR_RETURN(Dim d, concat_axis_dim(ctx, axis));
      out.push_back(d);
    } else {
      KILN_ASSIGN_OR_RETURN(Dim d, merge_equal_dims(ctx, k, axis));
      out.push_back(d);
    }
  }
  ctx.set_output(0, TensorDesc::of(dtype, std::move(out)));
  return Status::ok();
}

Status run_concat(RunContext& ctx) {
  std::vector<const void*> ptrs;
  std::vector<Dims> dims;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    ptrs.push_back(ctx.input(i).raw_data());
    dims.push_back(ctx.input(i).dims());
  }
  const int64_t rank = ctx.input(0).rank();
  const int64_t axis = ctx.attrs().get_int("axis", 0);
  Tensor& y = ctx.allocate_output(0);
  ref::concat(ptrs, dims, elem_size(y), axis < 0 ? axis + rank : axis, y.raw_data());
  return Status::ok();
}

// --- Split
// -----------------------------------------------------------------------------------------

// The sizes of the outputs along the axis of a dim of size `dim` (-1: unknown); nullopt when they
// cannot be known yet.
Result<std::optional<std::vector<int64_t>>> split_sizes(const InferContext& ctx, int64_t dim) {
  using Sizes = std::optional<std::vector<int64_t>>;
  const auto n = static_cast<int64_t>(ctx.num_outputs());
  Sizes sizes;
  if (ctx.since_version() < 13 && ctx.attrs().has("split")) {
    sizes = ctx.attrs().get_ints("split");
  } else if (ctx.since_version() >= 13 && ctx.has_input(1)) {
    KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "split"));
    KILN_ASSIGN_OR_RETURN(sizes, known_ints(ctx, 1, "split"));
    if (!sizes) return Sizes();
  }
  const bool has_num = ctx.since_version() >= 18 && ctx.attrs().has("num_outputs");
  if (sizes) {
    if (has_num) return ctx.error("'split' and 'num_outputs' cannot both be given");
    if (static_cast<int64_t>(sizes->size()) != n) {
      return ctx.error("split {} has {} entries but the node has {} outputs", ints_text(*sizes),
                       sizes->size(), n);
    }
    for (int64_t s : *sizes) {
      if (s < 0) return ctx.error("split {} has a negative size", ints_text(*sizes));
    }
    KILN_ASSIGN_OR_RETURN(const int64_t sum, checked_sum(ctx, *sizes, "the sum of split"));
    if (dim >= 0 && sum != dim) {
      return ctx.error("split {} sums to {} but the split axis has size {}", ints_text(*sizes), sum,
                       dim);
    }
    return sizes;
  }
  if (has_num && ctx.attrs().get_int("num_outputs", 0) != n) {
    return ctx.error("num_outputs is {} but the node has {} outputs",
                     ctx.attrs().get_int("num_outputs", 0), n);
  }
  if (dim < 0) return Sizes();
  if (dim % n == 0) return Sizes(std::vector<int64_t>(static_cast<size_t>(n), dim / n));
  if (!has_num) {
    return ctx.error("the split axis has size {}, which does not divide into {} equal outputs", dim,
                     n);
  }
  // Opset 18 num_outputs: chunks of ceil(dim / n), the last one smaller.
  const int64_t chunk = (dim + n - 1) / n;
  std::vector<int64_t> out(static_cast<size_t>(n), chunk);
  out.back() = dim - chunk * (n - 1);
  if (out.back() < 0) {
    return ctx.error("the split axis has size {}, too small for {} outputs of {}", dim, n, chunk);
  }
  return Sizes(std::move(out));
}

Status infer_split(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  for (size_t i = 0; i < ctx.num_outputs(); ++i)
    ctx.set_output(i, TensorDesc::unknown_shape(x.dtype));
  if (!x.has_rank()) {
    KILN_ASSIGN_OR_RETURN(auto ignored, split_sizes(ctx, -1));  // validates the attributes
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(int64_t axis,
                        normalize_axis(ctx, ctx.attrs().get_int("axis", 0), x.rank()));
  const Dim& d = x.dim(static_cast<int>(axis));
  KILN_ASSIGN_OR_RETURN(auto sizes, split_sizes(ctx, d.is_known() ? d.value : -1));
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    ir::Shape s = *x.shape;
    s[static_cast<size_t>(axis)] = sizes                    ? Dim::known((*sizes)[i])
                                   : ctx.num_outputs() == 1 ? d
                                                            : Dim::unknown();
    ctx.set_output(i, TensorDesc::of(x.dtype, std::move(s)));
  }
  return Status::ok();
}

Status run_split(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.attrs().get_int("axis", 0);
  const auto ax = static_cast<size_t>(axis < 0 ? axis + x.rank() : axis);
  std::vector<int64_t> starts(static_cast<size_t>(x.rank()), 0);
  const std::vector<int64_t> steps(static_cast<size_t>(x.rank()), 1);
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (!ctx.has_output(i)) {
      starts[ax] += ctx.output_desc(i).dim(static_cast<int>(ax)).value;
      continue;
    }
    Tensor& y = ctx.allocate_output(i);
    ref::slice(x.raw_data(), elem_size(x), x.dims(), starts, steps, y.dims(), y.raw_data());
    starts[ax] += y.dim(static_cast<int>(ax));
  }
  return Status::ok();
}

}  // namespace

void register_layout_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Transpose",
         .since_versions = {1, 13, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"perm", AttrType::kInts}},
         .infer = infer_transpose,
         .run = run_transpose});
  r.add({.op_type = "Concat",
         .since_versions = {4, 11, 13},
         .min_inputs = 1,
         .max_inputs = kVariadic,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_concat,
         .run = run_concat});
  r.add({.op_type = "Split",
         .since_versions = {2, 11, 13, 18},
         .min_inputs = 1,
         .max_inputs = 2,
         .max_outputs = kVariadic,
         .attrs = {{"axis", AttrType::kInt},
                   {"split", AttrType::kInts},
                   {"num_outputs", AttrType::kInt}},
         .infer = infer_split,
         .run = run_split});
}

}  // namespace kiln::ops::shape_detail
