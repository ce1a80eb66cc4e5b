#pragma once
// Reference TopK and CumSum along the middle dim of an [outer, n, inner] view.

#include <cstdint>

namespace kiln::kernels::ref {

// The k largest (or smallest) elements along n, in order (best first); equal values keep the lower
// index first. NaN ranks above every number for largest and below every number for smallest. values
// and indices are [outer, k, inner].
struct TopKParams {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  int64_t k = 1;
  bool largest = true;
};

template <typename T>
void topk(const TopKParams& p, const T* x, T* values, int64_t* indices);

// Running sums along n; `exclusive` leaves the current element out, `reverse` runs from the end.
struct CumSumParams {
  int64_t outer = 1;
  int64_t n = 1;
  int64_t inner = 1;
  bool exclusive = false;
  bool reverse = false;
};

template <typename T>
void cumsum(const CumSumParams& p, const T* x, T* y);

}  // namespace kiln::kernels::ref
