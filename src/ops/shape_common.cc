#include "ops/shape_common.h"

#include <algorithm>
#include <limits>

#include "ops/shape_util.h"

namespace kiln::ops::shape_detail {

Result<std::vector<int64_t>> read_ints(const NodeContext& ctx, const Tensor& t,
                                       std::string_view what) {
  if (t.dtype() != DType::kI64 && t.dtype() != DType::kI32) {
    return ctx.error("{} must be int64 or int32, got {}", what, t.desc());
  }
  return t.to_int64_vector();
}

Result<std::optional<std::vector<int64_t>>> known_ints(const InferContext& ctx, size_t i,
                                                       std::string_view what) {
  const Tensor* t = ctx.has_input(i) ? ctx.input_value(i) : nullptr;
  if (t == nullptr) return std::optional<std::vector<int64_t>>();
  if (t->rank() > 1) return ctx.error("{} must be 1-D, got {}", what, t->desc());
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_ints(ctx, *t, what));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

AxisRange clamp_range(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  AxisRange r{0, step, 0};
  if (dim == 0) return r;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const int64_t magnitude = step == std::numeric_limits<int64_t>::min() ? dim + 1 : -step;
    r.count = start > end ? (start - end - 1) / magnitude + 1 : 0;
  }
  r.start = start;
  return r;
}

Result<int64_t> read_scalar_int(const NodeContext& ctx, const Tensor& t, std::string_view what) {
  if (t.numel() != 1 || t.rank() > 1) {
    return ctx.error("{} must be a scalar or a 1-element tensor, got {}", what, t.desc());
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_ints(ctx, t, what));
  return v[0];
}

std::pair<int64_t, int64_t> shape_range(const NodeContext& ctx, int64_t rank) {
  int64_t start = ctx.since_version() >= 15 ? ctx.attrs().get_int("start", 0) : 0;
  int64_t end = ctx.since_version() >= 15 ? ctx.attrs().get_int("end", rank) : rank;
  const auto clamp = [rank](int64_t v) {
    return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank);
  };
  start = clamp(start);
  end = clamp(end);
  return {start, std::max(end, start)};
}

ir::Shape to_shape(std::span<const int64_t> dims) {
  ir::Shape s;
  for (int64_t d : dims) s.push_back(ir::Dim::known(d));
  return s;
}

ir::Shape unknown_dims(int rank) {
  return ir::Shape(static_cast<size_t>(rank), ir::Dim::unknown());
}

std::string shape_text(const ir::Shape& s) {
  std::vector<std::string> parts;
  for (const ir::Dim& d : s) parts.push_back(d.to_string());
  return fmt::format("[{}]", fmt::join(parts, ","));
}

std::string ints_text(std::span<const int64_t> v) { return fmt::format("[{}]", fmt::join(v, ",")); }

std::string sym_ints_text(const ir::SymInts& v) {
  std::vector<std::string> parts;
  for (const ir::SymInt& e : v) parts.push_back(e.to_string());
  return fmt::format("[{}]", fmt::join(parts, ","));
}

Result<ir::Shape> traced_dims(const NodeContext& ctx, const ir::SymInts& shape) {
  ir::Shape out;
  for (const ir::SymInt& d : shape) {
    if (d.number && *d.number < 0) {
      return ctx.error("shape {} has a negative dim", sym_ints_text(shape));
    }
    out.push_back(d.as_dim());
  }
  return out;
}

ir::Dim product_dim(std::span<const ir::Dim> dims) {
  int64_t known = 1;
  const ir::Dim* symbolic = nullptr;
  int n_symbolic = 0;
  for (const ir::Dim& d : dims) {
    if (d.is_known()) {
      known *= d.value;
    } else if (!d.symbol.empty()) {
      symbolic = &d;
      ++n_symbolic;
    } else {
      n_symbolic = 2;  // an unknown dim makes the product unknown (unless a known 0 appears)
    }
  }
  if (known == 0) return ir::Dim::known(0);
  if (n_symbolic == 0) return ir::Dim::known(known);
  if (n_symbolic == 1 && known == 1) return *symbolic;
  return ir::Dim::unknown();
}

Status check_out_dims(const NodeContext& ctx, std::span<const int64_t> dims, DType dtype,
                      std::string_view what) {
  Status s = check_dims(dims, dtype, what);
  if (!s.is_ok()) return ctx.error("{}", s.message());
  return Status::ok();
}

Status check_movable(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return ctx.error("input {} is required", i);
  const DType t = ctx.input(i).dtype;
  if (std::find(std::begin(kAllTypes), std::end(kAllTypes), t) == std::end(kAllTypes)) {
    return ctx.unsupported("input {} has dtype {}, which kiln does not support for this op", i,
                           dtype_name(t));
  }
  return Status::ok();
}

Status check_index_dtype(const InferContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return ctx.error("input {} ({}) is required", i, what);
  const DType t = ctx.input(i).dtype;
  if (t != DType::kI64 && t != DType::kI32) {
    return ctx.error("input {} ({}) must be int64 or int32, got {}", i, what,
                     ctx.input(i).to_string());
  }
  return Status::ok();
}

Result<std::vector<int64_t>> normalize_axes(const NodeContext& ctx, std::span<const int64_t> axes,
                                            int64_t rank, std::string_view what) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t n, normalize_axis(ctx, a, rank, what));
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      return ctx.error("{} {} repeats axis {}", what, ints_text(axes), a);
    }
    out.push_back(n);
  }
  return out;
}

std::optional<int64_t> checked_product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

}  // namespace kiln::ops::shape_detail
