#include "kernels/ref/sequence.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "base/half.h"
#include "kernels/ref/math_util.h"

namespace kiln::kernels::ref {

void reverse_sequence(const ReverseSequenceParams& p, size_t elem_size, const void* x,
                      const int64_t* seq_lens, void* y) {
  const size_t rank = p.dims.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) strides[d] = strides[d + 1] * p.dims[d + 1];
  int64_t numel = 1;
  for (int64_t d : p.dims) numel *= d;
  const auto batch_axis = static_cast<size_t>(p.batch_axis);
  const auto time_axis = static_cast<size_t>(p.time_axis);
  const auto* src = static_cast<const unsigned char*>(x);
  auto* dst = static_cast<unsigned char*>(y);
  for (int64_t i = 0; i < numel; ++i) {
    const int64_t b = (i / strides[batch_axis]) % p.dims[batch_axis];
    const int64_t t = (i / strides[time_axis]) % p.dims[time_axis];
    const int64_t len = seq_lens[b];
    const int64_t from = t < len ? i + (len - 1 - 2 * t) * strides[time_axis] : i;
    std::memcpy(dst + static_cast<size_t>(i) * elem_size,
                src + static_cast<size_t>(from) * elem_size, elem_size);
  }
}

namespace {

// A strict weak order on values: numeric, NaN after everything and equivalent to NaN.
template <typename T>
bool value_less(T a, T b) {
  if constexpr (kIsFloat<T>) {
    const double da = to_double(a), db = to_double(b);
    if (std::isnan(da)) return false;
    return std::isnan(db) || da < db;
  } else {
    return a < b;
  }
}

}  // namespace

template <typename T>
UniqueResult unique(const T* x, int64_t outer, int64_t items, int64_t inner, bool sorted) {
  // -1: item i sorts before item j, 1: after, 0: equal.
  auto compare = [&](int64_t i, int64_t j) {
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < inner; ++k) {
        const T a = x[(o * items + i) * inner + k];
        const T b = x[(o * items + j) * inner + k];
        if (value_less(a, b)) return -1;
        if (value_less(b, a)) return 1;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(items));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t i, int64_t j) { return compare(i, j) < 0; });
  // Runs of equal items; the stable sort puts each run's first occurrence first.
  std::vector<int64_t> group_of(static_cast<size_t>(items));
  std::vector<int64_t> group_first, group_count;
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare(order[k - 1], order[k]) != 0) {
      group_first.push_back(order[k]);
      group_count.push_back(0);
    }
    group_of[static_cast<size_t>(order[k])] = static_cast<int64_t>(group_first.size()) - 1;
    ++group_count.back();
  }
  // Output position of each group: sorted order, or by first occurrence.
  std::vector<int64_t> groups(group_first.size());
  std::iota(groups.begin(), groups.end(), int64_t{0});
  if (!sorted) {
    std::sort(groups.begin(), groups.end(), [&](int64_t a, int64_t b) {
      return group_first[static_cast<size_t>(a)] < group_first[static_cast<size_t>(b)];
    });
  }
  std::vector<int64_t> position(groups.size());
  UniqueResult r;
  for (size_t u = 0; u < groups.size(); ++u) {
    const auto g = static_cast<size_t>(groups[u]);
    position[g] = static_cast<int64_t>(u);
    r.first.push_back(group_first[g]);
    r.counts.push_back(group_count[g]);
  }
  for (int64_t i = 0; i < items; ++i) {
    r.inverse.push_back(position[static_cast<size_t>(group_of[static_cast<size_t>(i)])]);
  }
  return r;
}

#define KILN_INSTANTIATE(T) \
  template UniqueResult unique<T>(const T*, int64_t, int64_t, int64_t, bool);
KILN_REF_FOR_NUMERIC_TYPES(KILN_INSTANTIATE)
KILN_INSTANTIATE(bool)
#undef KILN_INSTANTIATE

}  // namespace kiln::kernels::ref
