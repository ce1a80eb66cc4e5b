#include "ops/shape_util.h"

#include <algorithm>

namespace kiln::ops {

Result<ir::Shape> broadcast_shapes(const NodeContext& ctx, std::span<const ir::Shape> shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  ir::Shape out(rank, ir::Dim::known(1));
  for (size_t k = 0; k < rank; ++k) {
    // Walk from the right: position k of the output aligns with position s.size()-rank+k.
    std::optional<ir::Dim> acc;
    for (const auto& s : shapes) {
      if (s.size() + k < rank) continue;  // this input has no such axis (implicit 1)
      const ir::Dim& d = s[s.size() + k - rank];
      if (d.is_known() && d.value == 1) continue;
      if (!acc) {
        acc = d;
      } else if (acc->is_known() && d.is_known()) {
        if (acc->value != d.value) {
          std::vector<std::string> texts;
          for (const auto& sh : shapes)
            texts.push_back(ir::TensorDesc::of(DType::kF32, sh).to_string().substr(8));
          return ctx.error("shapes {} cannot be broadcast together (axis {}: {} vs {})",
                           fmt::join(texts, " and "), k, acc->value, d.value);
        }
      } else if (!acc->is_known() && d.is_known()) {
        acc = d;  // a symbolic dim that meets a known non-1 dim must equal it
      } else if (!acc->is_known() && !d.is_known() &&
                 !(acc->symbol == d.symbol && !d.symbol.empty())) {
        acc = ir::Dim::unknown();
      }
    }
    if (acc) out[k] = *acc;
  }
  return out;
}

Result<int64_t> checked_add(const NodeContext& ctx, int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return ctx.error("{} overflows int64: {} + {}", what, a, b);
  return r;
}

Result<int64_t> checked_sub(const NodeContext& ctx, int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return ctx.error("{} overflows int64: {} - {}", what, a, b);
  return r;
}

Result<int64_t> checked_mul(const NodeContext& ctx, int64_t a, int64_t b, std::string_view what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return ctx.error("{} overflows int64: {} * {}", what, a, b);
  return r;
}

Result<int64_t> checked_sum(const NodeContext& ctx, std::span<const int64_t> values,
                            std::string_view what) {
  int64_t sum = 0;
  for (int64_t v : values) {
    if (__builtin_add_overflow(sum, v, &sum)) {
      return ctx.error("{} [{}] overflows int64", what, fmt::join(values, ", "));
    }
  }
  return sum;
}

std::optional<Dims> broadcast_dims(const Dims& a, const Dims& b) {
  const size_t rank = std::max(a.size(), b.size());
  Dims out(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k + a.size() >= rank ? a[a.size() + k - rank] : 1;
    const int64_t db = k + b.size() >= rank ? b[b.size() + k - rank] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

Result<int64_t> normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank,
                               std::string_view what) {
  if (axis < -rank || axis >= rank) {
    return ctx.error("{} {} is out of range for rank {}", what, axis, rank);
  }
  return axis < 0 ? axis + rank : axis;
}

Status require_input(const NodeContext& ctx, size_t i, std::string_view what) {
  if (!ctx.has_input(i)) return ctx.error("input {} ({}) is required", i, what);
  return Status::ok();
}

Status check_dtypes(const InferContext& ctx, std::span<const DType> allowed,
                    std::span<const size_t> same_as_first) {
  if (!ctx.has_input(0)) return ctx.error("input 0 is required");
  const DType t0 = ctx.input(0).dtype;
  if (std::find(allowed.begin(), allowed.end(), t0) == allowed.end()) {
    return ctx.unsupported("input 0 has dtype {}, which this op does not support", dtype_name(t0));
  }
  for (size_t i : same_as_first) {
    if (ctx.has_input(i) && ctx.input(i).dtype != t0) {
      return ctx.error("input {} has dtype {} but input 0 has {}", i,
                       dtype_name(ctx.input(i).dtype), dtype_name(t0));
    }
  }
  return Status::ok();
}

BroadcastIndexer::BroadcastIndexer(const Dims& in, const Dims& out) {
  const size_t rank = out.size();
  out_strides_.assign(rank, 1);
  in_strides_.assign(rank, 0);
  for (size_t k = rank; k-- > 1;) out_strides_[k - 1] = out_strides_[k] * out[k];
  int64_t stride = 1;
  for (size_t j = in.size(); j-- > 0;) {
    const size_t k = rank - in.size() + j;
    in_strides_[k] = in[j] == 1 ? 0 : stride;
    stride *= in[j];
  }
  identity_ = in == out;
}

int64_t BroadcastIndexer::operator()(int64_t out_index) const {
  if (identity_) return out_index;
  int64_t in_index = 0;
  for (size_t k = 0; k < out_strides_.size(); ++k) {
    const int64_t coord = out_index / out_strides_[k];
    out_index -= coord * out_strides_[k];
    in_index += coord * in_strides_[k];
  }
  return in_index;
}

}  // namespace kiln::ops
