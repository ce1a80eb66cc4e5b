#include "kernels/ref/pool.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "base/int_math.h"
#include "kernels/ref/index_util.h"

namespace kiln::kernels::ref {
namespace {

// The kernel taps k in [lo, hi) of one axis whose input coordinate start + k * dilation lies in
// [begin, end). Computed, not searched, so a huge window over a small input costs nothing.
std::pair<int64_t, int64_t> tap_range(int64_t start, int64_t dilation, int64_t kernel,
                                      int64_t begin, int64_t end) {
  const int64_t lo = std::max<int64_t>(0, ceil_div(begin - start, dilation));
  const int64_t hi = std::min<int64_t>(kernel, ceil_div(end - start, dilation));
  return {lo, std::max(lo, hi)};
}

// Calls visit(offset, coord) for every input position of output `o`'s window that lies inside the
// input (offset row-major within one plane, coord its spatial coordinates), and returns how many
// window positions lie inside [-pad_begin, D + pad_end) (the count_include_pad divisor). The window
// is a box, so both are products over axes of per-axis tap ranges.
template <typename Visit>
int64_t visit_window(const PoolParams& p, int64_t o, Visit&& visit) {
  const size_t rank = p.in_dims.size();
  std::vector<int64_t> ocoord(rank), start(rank), lo(rank), hi(rank), icoord(rank);
  unflatten(o, p.out_dims, ocoord);
  int64_t padded_count = 1;
  int64_t taps = 1;
  for (size_t d = 0; d < rank; ++d) {
    start[d] = ocoord[d] * p.strides[d] - p.pads_begin[d];
    std::tie(lo[d], hi[d]) = tap_range(start[d], p.dilations[d], p.kernel[d], 0, p.in_dims[d]);
    const auto [plo, phi] = tap_range(start[d], p.dilations[d], p.kernel[d], -p.pads_begin[d],
                                      p.in_dims[d] + p.pads_end[d]);
    padded_count *= phi - plo;
    taps *= hi[d] - lo[d];
  }
  std::vector<int64_t> extent(rank), k(rank);
  for (size_t d = 0; d < rank; ++d) extent[d] = hi[d] - lo[d];
  for (int64_t t = 0; t < taps; ++t) {
    unflatten(t, extent, k);
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) {
      icoord[d] = start[d] + (lo[d] + k[d]) * p.dilations[d];
      offset = offset * p.in_dims[d] + icoord[d];
    }
    visit(offset, icoord);
  }
  return padded_count;
}

int64_t column_major_offset(const std::vector<int64_t>& coord, const std::vector<int64_t>& dims) {
  int64_t offset = 0;
  for (size_t d = dims.size(); d-- > 0;) offset = offset * dims[d] + coord[d];
  return offset;
}

}  // namespace

template <typename T>
void max_pool(const PoolParams& p, const T* x, T* y, int64_t* indices, bool column_major_indices) {
  const int64_t in_size = product(p.in_dims);
  const int64_t out_size = product(p.out_dims);
  for (int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    const T* xp = x + plane * in_size;
    for (int64_t o = 0; o < out_size; ++o) {
      T best = std::numeric_limits<T>::lowest();
      int64_t best_index = -1;
      // A NaN never wins, wherever it lies in the window (as ONNX Runtime's MaxPool, and every kiln
      // kernel: their taps' order differs from this walk's); a window of NaNs gives lowest().
      visit_window(p, o, [&](int64_t offset, const std::vector<int64_t>& coord) {
        const T v = xp[offset];
        if (best_index < 0 || v > best) {
          if (!std::isnan(v)) best = v;
          best_index = column_major_indices ? column_major_offset(coord, p.in_dims) : offset;
        }
      });
      y[plane * out_size + o] = best;
      if (indices != nullptr) {
        indices[plane * out_size + o] = best_index < 0 ? -1 : plane * in_size + best_index;
      }
    }
  }
}

template <typename T>
void average_pool(const PoolParams& p, bool count_include_pad, const T* x, T* y) {
  const int64_t in_size = product(p.in_dims);
  const int64_t out_size = product(p.out_dims);
  for (int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    const T* xp = x + plane * in_size;
    for (int64_t o = 0; o < out_size; ++o) {
      double sum = 0;
      int64_t count = 0;
      const int64_t padded_count = visit_window(p, o, [&](int64_t offset, const auto&) {
        sum += static_cast<double>(xp[offset]);
        ++count;
      });
      const int64_t divisor = count_include_pad ? padded_count : count;
      y[plane * out_size + o] =
          static_cast<T>(divisor > 0 ? sum / static_cast<double>(divisor) : 0.0);
    }
  }
}

template <typename T>
void lp_pool(const PoolParams& p, double norm_p, const T* x, T* y) {
  const int64_t in_size = product(p.in_dims);
  const int64_t out_size = product(p.out_dims);
  for (int64_t plane = 0; plane < p.batch * p.channels; ++plane) {
    const T* xp = x + plane * in_size;
    for (int64_t o = 0; o < out_size; ++o) {
      double sum = 0;
      visit_window(p, o, [&](int64_t offset, const auto&) {
        sum += std::pow(std::abs(static_cast<double>(xp[offset])), norm_p);
      });
      y[plane * out_size + o] = static_cast<T>(std::pow(sum, 1.0 / norm_p));
    }
  }
}

template void max_pool<float>(const PoolParams&, const float*, float*, int64_t*, bool);
template void max_pool<double>(const PoolParams&, const double*, double*, int64_t*, bool);
template void max_pool<int8_t>(const PoolParams&, const int8_t*, int8_t*, int64_t*, bool);
template void max_pool<uint8_t>(const PoolParams&, const uint8_t*, uint8_t*, int64_t*, bool);
template void average_pool<float>(const PoolParams&, bool, const float*, float*);
template void average_pool<double>(const PoolParams&, bool, const double*, double*);
template void lp_pool<float>(const PoolParams&, double, const float*, float*);
template void lp_pool<double>(const PoolParams&, double, const double*, double*);

}  // namespace kiln::kernels::ref
