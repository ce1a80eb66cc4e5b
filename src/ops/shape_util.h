#pragma once
// Helpers shared by the shape functions of many ops.

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/tensor_desc.h"
#include "ops/op_def.h"

namespace kiln::ops {

// numpy multidirectional broadcasting of shapes. Symbolic dims broadcast with 1 and with
// themselves; two different unknowns give an unknown. Returns an error naming the node on a
// definite mismatch.
Result<ir::Shape> broadcast_shapes(const NodeContext& ctx, std::span<const ir::Shape> shapes);
// Concrete version: output dims of broadcasting `a` and `b`; nullopt when incompatible.
std::optional<Dims> broadcast_dims(const Dims& a, const Dims& b);

// Two dims that are both known and differ: shapes that must agree there do not. Unknown or named
// dims never conflict here (they are checked when the values are known).
inline bool dims_conflict(const ir::Dim& a, const ir::Dim& b) {
  return a.is_known() && b.is_known() && a.value != b.value;
}

// Normalises a possibly negative axis into [0, rank); error naming the node when out of range.
Result<int64_t> normalize_axis(const NodeContext& ctx, int64_t axis, int64_t rank,
                               std::string_view what = "axis");

// Checked int64 arithmetic for shape computations (dims, attribute values, starts/ends/steps,
// pads) a model controls: the result, or an error naming the node, `what` and both operands when
// it does not fit in int64.
Result<int64_t> checked_add(const NodeContext& ctx, int64_t a, int64_t b, std::string_view what);
Result<int64_t> checked_sub(const NodeContext& ctx, int64_t a, int64_t b, std::string_view what);
Result<int64_t> checked_mul(const NodeContext& ctx, int64_t a, int64_t b, std::string_view what);
// Sum of `values`, or an error naming `what` and the values when it overflows.
Result<int64_t> checked_sum(const NodeContext& ctx, std::span<const int64_t> values,
                            std::string_view what);

// Checks that input i is present and returns it; error naming the node otherwise.
Status require_input(const NodeContext& ctx, size_t i, std::string_view what);

// The dtype of every listed input must be one of `allowed` and all must agree with input 0.
Status check_dtypes(const InferContext& ctx, std::span<const DType> allowed,
                    std::span<const size_t> same_as_first = {});

inline constexpr DType kFloatTypes[] = {DType::kF32, DType::kF16, DType::kF64};
inline constexpr DType kNumericTypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8,
                                          DType::kI16, DType::kI32, DType::kI64, DType::kU8,
                                          DType::kU16, DType::kU32, DType::kU64};
inline constexpr DType kAllTypes[] = {DType::kF32, DType::kF16, DType::kF64, DType::kI8,
                                      DType::kI16, DType::kI32, DType::kI64, DType::kU8,
                                      DType::kU16, DType::kU32, DType::kU64, DType::kBool};

// Broadcast index helper for reference kernels: maps a flat output index to the flat index of an
// input broadcast to `out` dims. Precompute once per (input, output) pair.
class BroadcastIndexer {
 public:
  BroadcastIndexer(const Dims& in, const Dims& out);
  int64_t operator()(int64_t out_index) const;

 private:
  std::vector<int64_t> out_strides_;
  std::vector<int64_t> in_strides_;  // 0 on broadcast dims
  bool identity_;
};

}  // namespace kiln::ops
