#pragma once
// Reference reductions (ReduceSum, ReduceMean, ... ) and ArgMax/ArgMin.

#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

enum class ReduceKind {
  kSum,
  kMean,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kLogSum,
  kLogSumExp,
  kSumSquare,
};

// The input dims and which of them are reduced. The output holds the product of the kept dims in
// order (keepdims only changes the output's dims, not its layout).
struct ReduceShape {
  std::vector<int64_t> dims;
  std::vector<uint8_t> reduced;  // 1 for a reduced dim
};

// Floating types accumulate in double; integers in 64-bit integers (L2, LogSum and LogSumExp in
// double). An empty reduction gives the kind's identity: 0 for sums and norms, 1 for Prod, -inf (or
// the lowest value) for Max, +inf (or the highest) for Min, -inf for LogSum/LogSumExp, NaN for a
// floating Mean (0 for an integer one).
template <typename T>
void reduce(ReduceKind kind, const ReduceShape& shape, const T* x, T* y);

// ArgMax / ArgMin along the middle dim of an [outer, n, inner] view; y is [outer, inner]. Ties go
// to the first index, or the last with select_last. n must be >= 1.
struct ArgReduceParams {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  bool is_max = true;
  bool select_last = false;
};

template <typename T>
void arg_reduce(const ArgReduceParams& p, const T* x, int64_t* y);

}  // namespace kiln::kernels::ref
