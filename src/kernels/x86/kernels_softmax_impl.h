#pragma once
// Softmax along contiguous rows behind kernels.h, over a float traits type T: per row the max, then
// exp(x - max) stored and summed, then the row scaled by 1 / sum. Three passes over a row that
// stays in L1 (an attention row is a few hundred floats); x - max <= 0, so the exp is
// kernels_math.h's exp_upto88_v. Included by each ISA's translation unit, like kernels_impl.h.

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/x86/kernels_math.h"

namespace kiln::kernels::x86 {
namespace {

template <class T>
void softmax_row(int64_t n, const float* x, float* y) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  const int64_t full = n / kL * kL;
  const int tail = static_cast<int>(n - full);
  V vmax = T::set1(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < full; i += kL) vmax = T::max(vmax, T::loadu(x + i));
  float m = T::reduce_max(vmax);
  for (int64_t i = full; i < n; ++i) m = std::fmax(m, x[i]);
  const V vm = T::set1(m);
  V vsum = T::zero();
  for (int64_t i = 0; i < full; i += kL) {
    const V e = exp_upto88_v<T>(T::sub(T::loadu(x + i), vm));
    T::storeu(y + i, e);
    vsum = T::add(vsum, e);
  }
  float sum = T::reduce_add(vsum);
  if (tail > 0) {
    T::store_n(y + full, exp_upto88_v<T>(T::sub(T::load_n(x + full, tail), vm)), tail);
    for (int64_t i = full; i < n; ++i) sum += y[i];
  }
  const V inv = T::set1(1.0f / sum);
  for (int64_t i = 0; i < full; i += kL) T::storeu(y + i, T::mul(T::loadu(y + i), inv));
  if (tail > 0) T::store_n(y + full, T::mul(T::load_n(y + full, tail), inv), tail);
}

// Rows of n >= kLanes floats, R at a time: their passes interleave, so that one row's reduction
// latencies (the max and the sum across lanes) overlap the other's work. A row's last n % kLanes
// elements are read as the vector that ends at the row's end, overlapping the one before it: the
// max is idempotent, the sum takes only its new lanes, and both stores of the overlap hold the same
// values. The tail's input and scaled output are taken before the full vectors' stores, so x may
// be y.
template <class T, int R>
void softmax_rows_wide(int64_t n, const float* x, float* y) {
  using V = typename T::V;
  constexpr int64_t kL = T::kLanes;
  alignas(64) static constexpr float kIota[16] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                  8, 9, 10, 11, 12, 13, 14, 15};
  const int64_t full = n / kL * kL, last = n - kL;
  const bool tail = full != n;
  const auto fresh = T::lt(T::set1(static_cast<float>(full - last) - 0.5f), T::loadu(kIota));
  V xt[R], m[R], sum[R];
  for (int r = 0; r < R; ++r) m[r] = xt[r] = T::loadu(x + r * n + last);
  for (int64_t i = 0; i < full; i += kL) {
    for (int r = 0; r < R; ++r) m[r] = T::max(m[r], T::loadu(x + r * n + i));
  }
  for (int r = 0; r < R; ++r) {
    m[r] = T::set1(T::reduce_max(m[r]));
    sum[r] = T::zero();
  }
  for (int64_t i = 0; i < full; i += kL) {
    for (int r = 0; r < R; ++r) {
      const V e = exp_upto88_v<T>(T::sub(T::loadu(x + r * n + i), m[r]));
      T::storeu(y + r * n + i, e);
      sum[r] = T::add(sum[r], e);
    }
  }
  V inv[R];
  for (int r = 0; r < R; ++r) {
    if (tail) {
      const V e = exp_upto88_v<T>(T::sub(xt[r], m[r]));
      T::storeu(y + r * n + last, e);
      sum[r] = T::add(sum[r], T::select(fresh, e, T::zero()));
    }
    inv[r] = T::set1(1.0f / T::reduce_add(sum[r]));
    xt[r] = T::mul(T::loadu(y + r * n + last), inv[r]);
  }
  for (int64_t i = 0; i < full; i += kL) {
    for (int r = 0; r < R; ++r) T::storeu(y + r * n + i, T::mul(T::loadu(y + r * n + i), inv[r]));
  }
  if (tail) {
    for (int r = 0; r < R; ++r) T::storeu(y + r * n + last, xt[r]);
  }
}

template <class T>
void softmax_rows_impl(int64_t rows, int64_t n, const float* x, float* y) {
  const FlushDenormals ftz;
  int64_t r = 0;
  if (n >= T::kLanes) {
    for (; r + 2 <= rows; r += 2) softmax_rows_wide<T, 2>(n, x + r * n, y + r * n);
    if (r < rows) softmax_rows_wide<T, 1>(n, x + r * n, y + r * n);
    return;
  }
  for (; r < rows; ++r) softmax_row<T>(n, x + r * n, y + r * n);
}

// Softmax along a strided axis, x and y [outer, n, inner]: a vector takes `lanes` neighbouring
// positions of one outer slice (p, at its first row) and their n values, inner apart, a cache
// line each; the max, the exps (stored) and their sum stay in registers. YOLOv8's box head
// normalises 16 bins [1, 16, 4, 8400] along axis 1.
template <class T>
inline void softmax_column_vector(int64_t n, int64_t inner, const float* x, float* y, int lanes) {
  using V = typename T::V;
  const bool full = lanes == T::kLanes;
  const auto load = [&](const float* p) { return full ? T::loadu(p) : T::load_n(p, lanes); };
  const auto store = [&](float* p, V v) {
    if (full) {
      T::storeu(p, v);
    } else {
      T::store_n(p, v, lanes);
    }
  };
  V m = load(x);
  for (int64_t r = 1; r < n; ++r) m = T::max(m, load(x + r * inner));
  V sum = T::zero();
  for (int64_t r = 0; r < n; ++r) {
    const V e = exp_upto88_v<T>(T::sub(load(x + r * inner), m));
    store(y + r * inner, e);
    sum = T::add(sum, e);
  }
  const V inv = T::div(T::set1(1.0f), sum);
  for (int64_t r = 0; r < n; ++r) store(y + r * inner, T::mul(load(y + r * inner), inv));
}

// Positions [begin, end) of the outer * inner ones (x may be y).
template <class T>
void softmax_columns_impl(int64_t n, int64_t inner, int64_t begin, int64_t end, const float* x,
                          float* y) {
  const FlushDenormals ftz;
  if (n <= 0 || inner <= 0) return;
  for (int64_t p = begin; p < end;) {
    const int64_t o = p / inner, i = p % inner;
    const int64_t stop = std::min(end - o * inner, inner);  // this slice's last position + 1
    const int64_t at = o * n * inner + i;
    const int64_t count = stop - i;
    int64_t j = 0;
    for (; j + T::kLanes <= count; j += T::kLanes) {
      softmax_column_vector<T>(n, inner, x + at + j, y + at + j, T::kLanes);
    }
    if (j < count) {
      softmax_column_vector<T>(n, inner, x + at + j, y + at + j, static_cast<int>(count - j));
    }
    p += count;
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
