#include "kernels/ref/topk.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {
namespace {

// Values compare in the accumulator type, exact for 64-bit integers too.
template <typename A>
struct Candidate {
  A value;
  int64_t index;
};

template <typename A>
bool is_nan(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// A strict weak order: "a comes before b" in the output.
template <typename A>
bool ranks_before(const Candidate<A>& a, const Candidate<A>& b, bool largest) {
  const bool a_nan = is_nan(a.value);
  const bool b_nan = is_nan(b.value);
  if (a_nan != b_nan) return largest ? a_nan : b_nan;
  if (!a_nan && a.value != b.value) return largest ? a.value > b.value : a.value < b.value;
  return a.index < b.index;
}

}  // namespace

template <typename T>
void topk(const TopKParams& p, const T* x, T* values, int64_t* indices) {
  using C = Candidate<Acc<T>>;
  std::vector<C> row(static_cast<size_t>(p.n));
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) {
      const T* in = x + o * p.n * p.inner + i;
      for (int64_t j = 0; j < p.n; ++j) row[static_cast<size_t>(j)] = {to_acc(in[j * p.inner]), j};
      std::partial_sort(row.begin(), row.begin() + p.k, row.end(),
                        [&](const C& a, const C& b) { return ranks_before(a, b, p.largest); });
      const int64_t out_base = o * p.k * p.inner + i;
      for (int64_t j = 0; j < p.k; ++j) {
        const int64_t src = row[static_cast<size_t>(j)].index;
        values[out_base + j * p.inner] = in[src * p.inner];
        indices[out_base + j * p.inner] = src;
      }
    }
  }
}

template <typename T>
void cumsum(const CumSumParams& p, const T* x, T* y) {
  for (int64_t o = 0; o < p.outer; ++o) {
    for (int64_t i = 0; i < p.inner; ++i) {
      const int64_t base = o * p.n * p.inner + i;
      Acc<T> acc{0};
      for (int64_t step = 0; step < p.n; ++step) {
        const int64_t j = p.reverse ? p.n - 1 - step : step;
        const Acc<T> v = to_acc(x[base + j * p.inner]);
        if (!p.exclusive) acc += v;
        y[base + j * p.inner] = from_acc<T>(acc);
        if (p.exclusive) acc += v;
      }
    }
  }
}

#define KILN_INSTANTIATE(T)                                         \
  template void topk<T>(const TopKParams&, const T*, T*, int64_t*); \
  template void cumsum<T>(const CumSumParams&, const T*, T*);
KILN_REF_FOR_NUMERIC_TYPES(KILN_INSTANTIATE)
#undef KILN_INSTANTIATE

}  // namespace kiln::kernels::ref
