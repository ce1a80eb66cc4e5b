#pragma once
// FP32 max pooling on nChw16c behind kernels.h (max_pool_nchw16c) over a vector-traits type T:
// the window walk of the portable kernel (kernels/cpu/nchw16c.cc), which the base ISA compiles to
// four 4-float maxima a tap, with a block's 16 lanes in one AVX-512 vector (two AVX2 ones).
// Included after kernels_impl.h by each ISA's translation unit; anonymous namespace as there.

#include <limits>

#include "kernels/cpu/pool.h"

namespace kiln::kernels::x86 {
namespace {

template <class T>
void max_pool_nchw16c_rows(const cpu::Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                           int64_t row_end) {
  using V = typename T::V;
  constexpr int64_t kLanes16 = 16;
  constexpr int NV = static_cast<int>(kLanes16) / T::kLanes;
  // Output columns [inside_lo, inside_hi) have their first and last taps, so all, in the row.
  const int64_t inside_lo = cpu::valid_outputs(-p.pad_left, p.stride_w, 0, p.in_w, p.out_w).lo;
  const int64_t last_tap = (p.k_w - 1) * p.dil_w - p.pad_left;
  const int64_t inside_hi = cpu::valid_outputs(last_tap, p.stride_w, 0, p.in_w, p.out_w).hi;
  const V lowest = T::set1(std::numeric_limits<float>::lowest());
  for (int64_t r = row_begin; r < row_end; ++r) {
    // Plane fastest, as the portable kernel: a thread reads the band its convolution wrote.
    const int64_t plane = r % p.planes, oh = r / p.planes;
    const float* xp = x + plane * p.in_h * p.in_w * kLanes16;
    float* yr = y + (plane * p.out_h + oh) * p.out_w * kLanes16;
    const int64_t ih0 = oh * p.stride_h - p.pad_top;
    const cpu::Range rows = cpu::valid_taps(ih0, p.dil_h, p.k_h, 0, p.in_h);
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      const int64_t iw0 = ow * p.stride_w - p.pad_left;
      const cpu::Range cols = ow >= inside_lo && ow < inside_hi
                                  ? cpu::Range{0, p.k_w}
                                  : cpu::valid_taps(iw0, p.dil_w, p.k_w, 0, p.in_w);
      V acc[NV];
      for (V& a : acc) a = lowest;
      for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
        const float* xr = xp + (ih0 + kh * p.dil_h) * p.in_w * kLanes16;
        for (int64_t kw = cols.lo; kw < cols.hi; ++kw) {
          const float* v = xr + (iw0 + kw * p.dil_w) * kLanes16;
          // max(v, acc) is acc where v is NaN: NaN inputs are skipped, as everywhere.
          for (int j = 0; j < NV; ++j) acc[j] = T::max(T::loadu(v + j * T::kLanes), acc[j]);
        }
      }
      for (int j = 0; j < NV; ++j) T::storeu(yr + ow * kLanes16 + j * T::kLanes, acc[j]);
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
