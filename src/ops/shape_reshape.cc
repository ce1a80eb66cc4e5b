// Ops that change only the shape, never the data order: Reshape, Flatten, Squeeze, Unsqueeze (their
// outputs share the input's storage), plus Shape, Size and Expand.
#include <algorithm>

#include "kernels/ref/movement.h"
#include "ops/shape_common.h"
#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {
namespace {

using ir::Dim;
using ir::TensorDesc;

// Shared run function of the view ops: the output is the input's storage with the inferred dims.
Status run_view(RunContext& ctx) {
  ctx.set_output(0, ctx.input(0).reshaped(ctx.output_desc(0).static_dims()));
  return Status::ok();
}

// --- Reshape
// ---------------------------------------------------------------------------------------

// Element count of the dims not matched by an equal symbol on the other side.
struct Leftover {
  int64_t known = 1;
  std::vector<Dim> rest;  // symbolic or unknown dims
  bool overflow = false;
};

Leftover leftover(const ir::Shape& dims, const ir::Shape& cancel) {
  Leftover l;
  std::vector<bool> used(cancel.size(), false);
  for (const Dim& d : dims) {
    if (d.is_known()) {
      l.overflow |= __builtin_mul_overflow(l.known, d.value, &l.known);
      continue;
    }
    bool matched = false;
    for (size_t j = 0; j < cancel.size() && !matched && !d.symbol.empty(); ++j) {
      if (!used[j] && cancel[j].symbol == d.symbol) used[j] = matched = true;
    }
    if (!matched) l.rest.push_back(d);
  }
  return l;
}

// Resolves the -1 at `infer_at` (or checks the element count) of `out` given the input shape.
Status resolve_reshape(const InferContext& ctx, const ir::Shape& in, ir::Shape& out, int infer_at,
                       const std::string& requested) {
  ir::Shape out_fixed = out;
  if (infer_at >= 0) out_fixed.erase(out_fixed.begin() + infer_at);
  const Leftover a = leftover(in, out_fixed);
  const Leftover b = leftover(out_fixed, in);
  const auto mismatch = [&] {
    return ctx.error("cannot reshape {} to {}: the element counts differ", ctx.input(0).to_string(),
                     requested);
  };
  if (b.overflow) return ctx.error("shape {} overflows the element count", requested);
  if (a.overflow || !b.rest.empty()) return Status::ok();  // nothing decidable
  if (infer_at < 0) {
    if (a.rest.empty() && a.known != b.known) return mismatch();
    return Status::ok();
  }
  if (b.known == 0) {
    return ctx.error("cannot reshape {} to {}: -1 is ambiguous when another dim is 0",
                     ctx.input(0).to_string(), requested);
  }
  Dim& inferred = out[static_cast<size_t>(infer_at)];
  if (a.known == 0) {
    inferred = Dim::known(0);
  } else if (a.rest.empty()) {
    if (a.known % b.known != 0) return mismatch();
    inferred = Dim::known(a.known / b.known);
  } else if (a.rest.size() == 1 && a.known == b.known) {
    inferred = a.rest[0];  // e.g. [batch,3] -> [3,-1] gives [3,batch]
  }
  return Status::ok();
}

// The output dims of Reshape for its requested shape, whose elements are numbers, symbols (traced
// by ops/dims_values.h: [batch, 192, -1]) or unknown, with the -1 still to resolve at `infer_at`.
// A symbol is taken as the dim it names: were it 0 at run time without allowzero, the output would
// copy the input's dim instead, but then the tensor is empty anyway.
Status requested_dims(const InferContext& ctx, const ir::SymInts& shape, bool allowzero,
                      ir::Shape& out, int& infer_at) {
  const TensorDesc& x = ctx.input(0);
  const std::string text = sym_ints_text(shape);
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].number) {
      out.push_back(shape[i].as_dim());
      continue;
    }
    const int64_t v = *shape[i].number;
    if (v == -1) {
      if (infer_at >= 0) return ctx.error("shape {} has more than one -1", text);
      infer_at = static_cast<int>(i);
      out.push_back(Dim::unknown());
    } else if (v < -1) {
      return ctx.error("shape {} has a negative dim {} (only -1 is allowed)", text, v);
    } else if (v == 0 && !allowzero) {
      if (x.has_rank() && static_cast<int>(i) >= x.rank()) {
        return ctx.error("shape {} copies input dim {} (0) but the input {} has rank {}", text, i,
                         x.to_string(), x.rank());
      }
      out.push_back(x.has_rank() ? x.dim(static_cast<int>(i)) : Dim::unknown());
    } else {
      has_zero |= v == 0;
      out.push_back(Dim::known(v));
    }
  }
  if (allowzero && has_zero && infer_at >= 0) {
    return ctx.error("shape {} has both 0 (with allowzero=1) and -1", text);
  }
  return Status::ok();
}

Status infer_reshape(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "shape"));
  const TensorDesc& x = ctx.input(0);
  const bool allowzero = ctx.since_version() >= 14 && ctx.attrs().get_int("allowzero", 0) != 0;
  KILN_RETURN_IF_ERROR(known_ints(ctx, 1, "shape").status());  // a known shape must be 1-D
  const std::optional<ir::SymInts> shape = ctx.input_dims_value(1);
  if (!shape) {
    const TensorDesc& s = ctx.input(1);
    const bool len_known = s.has_rank() && s.rank() == 1 && s.dim(0).is_known();
    ctx.set_output(0, len_known ? TensorDesc::of(x.dtype, unknown_dims(int(s.dim(0).value)))
                                : TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  ir::Shape out;
  int infer_at = -1;
  KILN_RETURN_IF_ERROR(requested_dims(ctx, *shape, allowzero, out, infer_at));
  if (x.has_rank()) {
    KILN_RETURN_IF_ERROR(resolve_reshape(ctx, *x.shape, out, infer_at, sym_ints_text(*shape)));
  }
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

// --- Flatten
// ---------------------------------------------------------------------------------------

Status infer_flatten(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::of(x.dtype, unknown_dims(2)));
    return Status::ok();
  }
  const int64_t rank = x.rank();
  if (axis < -rank || axis > rank) {
    return ctx.error("axis {} is out of range [{}, {}] for input {}", axis, -rank, rank,
                     x.to_string());
  }
  if (axis < 0) axis += rank;
  const std::span<const Dim> dims(*x.shape);
  ctx.set_output(0,
                 TensorDesc::of(x.dtype, {product_dim(dims.first(static_cast<size_t>(axis))),
                                          product_dim(dims.subspan(static_cast<size_t>(axis)))}));
  return Status::ok();
}

// --- Squeeze / Unsqueeze
// ---------------------------------------------------------------------------

// The axes of (Un)Squeeze: the attribute before opset 13, the optional input 1 from 13. nullopt
// when absent; `known` false when given as an input whose value is unknown.
Result<std::optional<std::vector<int64_t>>> squeeze_axes(const InferContext& ctx, bool& known) {
  known = true;
  if (ctx.since_version() < 13) {
    if (!ctx.attrs().has("axes")) return std::optional<std::vector<int64_t>>();
    return std::optional<std::vector<int64_t>>(ctx.attrs().get_ints("axes"));
  }
  if (!ctx.has_input(1)) return std::optional<std::vector<int64_t>>();
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "axes"));
  KILN_ASSIGN_OR_RETURN(auto axes, known_ints(ctx, 1, "axes"));
  known = axes.has_value();
  return axes;
}

Status infer_squeeze(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  bool known = true;
  KILN_ASSIGN_OR_RETURN(auto axes, squeeze_axes(ctx, known));
  if (!known || !x.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  ir::Shape out;
  if (!axes) {
    for (const Dim& d : *x.shape) {
      if (!d.is_known()) {  // a symbolic dim may be 1 at run time: the rank is unknown
        ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
        return Status::ok();
      }
      if (d.value != 1) out.push_back(d);
    }
  } else {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> norm, normalize_axes(ctx, *axes, x.rank()));
    for (int i = 0; i < x.rank(); ++i) {
      const bool squeezed = std::find(norm.begin(), norm.end(), i) != norm.end();
      if (squeezed && x.dim(i).is_known() && x.dim(i).value != 1) {
        return ctx.error("cannot squeeze axis {} of {}: its size is {}, not 1", i, x.to_string(),
                         x.dim(i).value);
      }
      if (!squeezed) out.push_back(x.dim(i));
    }
  }
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

Status infer_unsqueeze(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  const TensorDesc& x = ctx.input(0);
  bool known = true;
  KILN_ASSIGN_OR_RETURN(auto axes, squeeze_axes(ctx, known));
  if (known && !axes) return ctx.error("axes are required");
  if (!known || !x.has_rank()) {
    ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    return Status::ok();
  }
  const auto out_rank = static_cast<int64_t>(x.rank() + axes->size());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> norm, normalize_axes(ctx, *axes, out_rank));
  ir::Shape out;
  int next = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    const bool inserted = std::find(norm.begin(), norm.end(), i) != norm.end();
    out.push_back(inserted ? Dim::known(1) : x.dim(next++));
  }
  ctx.set_output(0, TensorDesc::of(x.dtype, std::move(out)));
  return Status::ok();
}

// --- Shape / Size
// ----------------------------------------------------------------------------------

Status infer_shape(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) {
    ctx.set_output(0, TensorDesc::of(DType::kI64, unknown_dims(1)));
    return Status::ok();
  }
  const auto [start, end] = shape_range(ctx, x.rank());
  ctx.set_output(0, TensorDesc::of(DType::kI64, {Dim::known(end - start)}));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (!x.dim(static_cast<int>(i)).is_known()) return Status::ok();
    dims.push_back(x.dim(static_cast<int>(i)).value);
  }
  ctx.set_output_value(0, Tensor::from_vector<int64_t>({end - start}, dims));
  return Status::ok();
}

Status run_shape(RunContext& ctx) {
  const Dims& dims = ctx.input(0).dims();
  const auto [start, end] = shape_range(ctx, static_cast<int64_t>(dims.size()));
  ctx.set_output(
      0, Tensor::from_vector<int64_t>(
             {end - start}, std::vector<int64_t>(dims.begin() + start, dims.begin() + end)));
  return Status::ok();
}

Status infer_size(InferContext& ctx) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const TensorDesc& x = ctx.input(0);
  ctx.set_output(0, TensorDesc::of(DType::kI64, {}));
  if (x.is_static()) ctx.set_output_value(0, Tensor::scalar<int64_t>(dims_numel(x.static_dims())));
  return Status::ok();
}

Status run_size(RunContext& ctx) {
  ctx.set_output(0, Tensor::scalar<int64_t>(ctx.input(0).numel()));
  return Status::ok();
}

// --- Expand
// ----------------------------------------------------------------------------------------

Status infer_expand(InferContext& ctx) {
  KILN_RETURN_IF_ERROR(check_movable(ctx, 0));
  KILN_RETURN_IF_ERROR(check_index_dtype(ctx, 1, "shape"));
  const TensorDesc& x = ctx.input(0);
  KILN_RETURN_IF_ERROR(known_ints(ctx, 1, "shape").status());  // a known shape must be 1-D
  const std::optional<ir::SymInts> shape = ctx.input_dims_value(1);
  if (!shape || !x.has_rank()) {
    const TensorDesc& s = ctx.input(1);
    if (s.has_rank() && s.rank() == 1 && s.dim(0).is_known() && x.has_rank()) {
      const int rank = std::max(x.rank(), static_cast<int>(s.dim(0).value));
      ctx.set_output(0, TensorDesc::of(x.dtype, unknown_dims(rank)));
    } else {
      ctx.set_output(0, TensorDesc::unknown_shape(x.dtype));
    }
    return Status::ok();
  }
  KILN_ASSIGN_OR_RETURN(ir::Shape requested, traced_dims(ctx, *shape));
  const ir::Shape shapes[] = {*x.shape, std::move(requested)};
  KILN_ASSIGN_OR_RETURN(ir::Shape out, broadcast_shapes(ctx, shapes));
  TensorDesc desc = TensorDesc::of(x.dtype, std::move(out));
  if (desc.is_static())
    KILN_RETURN_IF_ERROR(check_out_dims(ctx, desc.static_dims(), x.dtype, "output"));
  ctx.set_output(0, std::move(desc));
  return Status::ok();
}

Status run_expand(RunContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.allocate_output(0);
  kernels::ref::broadcast_to(x.raw_data(), elem_size(x), x.dims(), y.dims(), y.raw_data());
  return Status::ok();
}

}  // namespace

void register_reshape_ops(OpRegistry& r) {
  using ir::AttrType;
  r.add({.op_type = "Reshape",
         .since_versions = {5, 13, 14, 19, 21},
         .min_inputs = 2,
         .max_inputs = 2,
         .attrs = {{"allowzero", AttrType::kInt}},
         .infer = infer_reshape,
         .run = run_view});
  r.add({.op_type = "Flatten",
         .since_versions = {1, 9, 11, 13, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"axis", AttrType::kInt}},
         .infer = infer_flatten,
         .run = run_view});
  r.add({.op_type = "Squeeze",
         .since_versions = {1, 11, 13, 21},
         .min_inputs = 1,
         .max_inputs = 2,
         .attrs = {{"axes", AttrType::kInts}},
         .infer = infer_squeeze,
         .run = run_view});
  r.add({.op_type = "Unsqueeze",
         .since_versions = {1, 11, 13, 21},
         .min_inputs = 1,
         .max_inputs = 2,
         .attrs = {{"axes", AttrType::kInts}},
         .infer = infer_unsqueeze,
         .run = run_view});
  r.add({.op_type = "Shape",
         .since_versions = {1, 13, 15, 19, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .attrs = {{"start", AttrType::kInt}, {"end", AttrType::kInt}},
         .infer = infer_shape,
         .run = run_shape});
  r.add({.op_type = "Size",
         .since_versions = {1, 13, 19, 21},
         .min_inputs = 1,
         .max_inputs = 1,
         .infer = infer_size,
         .run = run_size});
  r.add({.op_type = "Expand",
         .since_versions = {8, 13},
         .min_inputs = 2,
         .max_inputs = 2,
         .infer = infer_expand,
         .run = run_expand});
}

}  // namespace kiln::ops::shape_detail
