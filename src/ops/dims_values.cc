#include "ops/dims_values.h"

#include <algorithm>
#include <string_view>

#include "ops/shape_common.h"

namespace kiln::ops {
namespace {

using ir::SymInt;
using ir::SymInts;
using Elems = std::optional<SymInts>;

// Normalizes an index into [0, n); nullopt when out of range.
std::optional<size_t> index_in(int64_t i, size_t n) {
  const auto sn = static_cast<int64_t>(n);
  if (i < 0) i += sn;
  if (i < 0 || i >= sn) return std::nullopt;
  return static_cast<size_t>(i);
}

// The elements of inputs a and b paired for a broadcasting elementwise op (each of one element or
// of the same count).
bool pairable(const SymInts& a, const SymInts& b) {
  return a.size() == b.size() || a.size() == 1 || b.size() == 1;
}
const SymInt& at(const SymInts& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

Elems shape_of(const InferContext& ctx) {
  const ir::TensorDesc& x = ctx.input(0);
  if (!x.has_rank()) return std::nullopt;
  const auto [start, end] = shape_detail::shape_range(ctx, x.rank());
  SymInts out;
  for (int64_t i = start; i < end; ++i) out.push_back(SymInt::of(x.dim(static_cast<int>(i))));
  return out;
}

Elems gather(const InferContext& ctx) {
  const Elems data = ctx.input_dims_value(0);
  const Tensor* indices = ctx.input_value(1);
  if (!data || indices == nullptr || ctx.input(0).rank() != 1) return std::nullopt;
  if (ctx.attrs().get_int("axis", 0) != 0 && ctx.attrs().get_int("axis", 0) != -1) {
    return std::nullopt;
  }
  if (indices->rank() > 1 || indices->dtype() == DType::kBool) return std::nullopt;
  SymInts out;
  for (int64_t i : indices->to_int64_vector()) {
    const std::optional<size_t> at = index_in(i, data->size());
    if (!at) return std::nullopt;
    out.push_back((*data)[*at]);
  }
  return out;
}

// Slice along axis 0 of a 1-D input, from inputs (opset >= 10) or attributes (opset 1).
Elems slice(const InferContext& ctx) {
  const Elems data = ctx.input_dims_value(0);
  if (!data || ctx.input(0).rank() != 1) return std::nullopt;
  std::vector<int64_t> starts, ends, axes{0}, steps{1};
  if (ctx.since_version() < 10) {
    starts = ctx.attrs().get_ints("starts", {});
    ends = ctx.attrs().get_ints("ends", {});
    axes = ctx.attrs().get_ints("axes", {0});
  } else {
    for (size_t i = 1; i < 5; ++i) {
      if (!ctx.has_input(i)) continue;
      const Tensor* t = ctx.input_value(i);
      if (t == nullptr || t->dtype() == DType::kBool) return std::nullopt;
      (i == 1 ? starts : i == 2 ? ends : i == 3 ? axes : steps) = t->to_int64_vector();
    }
  }
  if (starts.size() != 1 || ends.size() != 1 || axes.size() != 1 || steps.size() != 1 ||
      (axes[0] != 0 && axes[0] != -1) || steps[0] == 0) {
    return std::nullopt;
  }
  const auto n = static_cast<int64_t>(data->size());
  const int64_t step = steps[0];
  const auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
    return std::clamp(v < 0 ? v + n : v, lo, hi);
  };
  const int64_t begin = step > 0 ? clamp(starts[0], 0, n) : clamp(starts[0], 0, n - 1);
  const int64_t end = step > 0 ? clamp(ends[0], 0, n) : clamp(ends[0], -1, n - 1);
  SymInts out;
  for (int64_t i = begin; step > 0 ? i < end : i > end; i += step) {
    out.push_back((*data)[static_cast<size_t>(i)]);
  }
  return out;
}

Elems concat(const InferContext& ctx) {
  const int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  SymInts out;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Elems part = ctx.input_dims_value(i);
    if (!part || ctx.input(i).rank() != 1) return std::nullopt;
    out.insert(out.end(), part->begin(), part->end());
  }
  return out;
}

// Dims are never negative, so a symbol differs from every negative number (Reshape's -1).
SymInt equal(const SymInt& a, const SymInt& b) {
  if (a.number && b.number) return SymInt::of(*a.number == *b.number ? 1 : 0);
  if (!a.symbol.empty() && a.symbol == b.symbol) return SymInt::of(1);
  const SymInt& sym = a.number ? b : a;
  const SymInt& num = a.number ? a : b;
  if (!sym.symbol.empty() && num.number && *num.number < 0) return SymInt::of(0);
  return SymInt::unknown();
}

SymInt arithmetic(std::string_view op, const SymInt& a, const SymInt& b) {
  if (a.number && b.number) {
    const int64_t x = *a.number, y = *b.number;
    int64_t r = 0;
    if (op == "Add" && !__builtin_add_overflow(x, y, &r)) return SymInt::of(r);
    if (op == "Sub" && !__builtin_sub_overflow(x, y, &r)) return SymInt::of(r);
    if (op == "Mul" && !__builtin_mul_overflow(x, y, &r)) return SymInt::of(r);
    if (op == "Div" && y != 0 && x % y == 0) return SymInt::of(x / y);
    return SymInt::unknown();
  }
  const auto is = [](const SymInt& v, int64_t n) { return v.number && *v.number == n; };
  if ((op == "Add" || op == "Sub") && is(b, 0)) return a;
  if (op == "Add" && is(a, 0)) return b;
  if ((op == "Mul" || op == "Div") && is(b, 1)) return a;
  if (op == "Mul" && is(a, 1)) return b;
  return SymInt::unknown();
}

Elems binary(const InferContext& ctx, std::string_view op) {
  const Elems a = ctx.input_dims_value(0);
  const Elems b = ctx.input_dims_value(1);
  if (!a || !b || !pairable(*a, *b)) return std::nullopt;
  SymInts out;
  for (size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
    out.push_back(op == "Equal" ? equal(at(*a, i), at(*b, i))
                                : arithmetic(op, at(*a, i), at(*b, i)));
  }
  return out;
}

Elems where(const InferContext& ctx) {
  const Elems c = ctx.input_dims_value(0);
  const Elems x = ctx.input_dims_value(1);
  const Elems y = ctx.input_dims_value(2);
  if (!c || !x || !y || !pairable(*c, *x) || !pairable(*c, *y) || !pairable(*x, *y)) {
    return std::nullopt;
  }
  SymInts out;
  for (size_t i = 0; i < std::max({c->size(), x->size(), y->size()}); ++i) {
    const SymInt& cond = at(*c, i);
    if (!cond.number) {
      out.push_back(SymInt::unknown());
    } else {
      out.push_back(*cond.number != 0 ? at(*x, i) : at(*y, i));
    }
  }
  return out;
}

// Ops that keep input 0's elements in order and only change the rank (0-D <-> 1-D) or the dtype.
bool keeps_elements(std::string_view op) {
  return op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" ||
         op == "Identity" || op == "Cast";
}

Elems propagate(const InferContext& ctx) {
  const std::string_view op = ctx.node().op_type;
  if (op == "Shape") return shape_of(ctx);
  if (op == "Gather") return gather(ctx);
  if (op == "Slice") return slice(ctx);
  if (op == "Concat") return concat(ctx);
  if (op == "Where") return where(ctx);
  if (op == "Equal" || op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    return binary(ctx, op);
  }
  if (op == "Cast" && ctx.outputs()[0].dtype == DType::kBool) return std::nullopt;  // 5 -> 1
  if (keeps_elements(op)) return ctx.input_dims_value(0);
  return std::nullopt;
}

}  // namespace

std::optional<SymInts> propagate_dims_value(const InferContext& ctx) {
  if (!ctx.node().domain.empty() || ctx.num_outputs() == 0 || !ctx.has_output(0)) {
    return std::nullopt;
  }
  const ir::TensorDesc& y = ctx.outputs()[0];
  if (!is_traced_dtype(y.dtype) || !y.is_static() || y.rank() > 1) return std::nullopt;
  const int64_t n = y.rank() == 0 ? 1 : y.dim(0).value;
  if (n > kMaxTracedInts) return std::nullopt;
  Elems out = propagate(ctx);
  if (!out || static_cast<int64_t>(out->size()) != n) return std::nullopt;
  return out;
}

}  // namespace kiln::ops
