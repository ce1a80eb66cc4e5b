#pragma once
// The window walk of MaxPool on nChw16c planes (nchw16c.h's max_pool_nchw16c), over a Block type
// that holds one pixel's 16 lanes: the portable kernel instantiates it with four 4-float vectors
// (what the base ISA gives), the x86 ones (kernels/x86/kernels_pool_impl.h) with AVX-512 or AVX2
// vectors, each in its own translation unit.
//
// Block: Block::lowest() (every lane lowest()); b.take(v), the lane-wise max with the 16 floats at
// v, keeping b's lane where v's is NaN (NaN inputs are skipped); b.store(y).
#include <cstdint>

#include "kernels/cpu/pool.h"

namespace kiln::kernels::cpu {

template <class Block>
void max_pool_nchw16c_walk(const Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                           int64_t row_end) {
  constexpr int64_t kLanes = 16;
  // Output columns [inside_lo, inside_hi) have their first and last taps, so all, in the row.
  const int64_t inside_lo = valid_outputs(-p.pad_left, p.stride_w, 0, p.in_w, p.out_w).lo;
  const int64_t last_tap = (p.k_w - 1) * p.dil_w - p.pad_left;
  const int64_t inside_hi = valid_outputs(last_tap, p.stride_w, 0, p.in_w, p.out_w).hi;
  for (int64_t r = row_begin; r < row_end; ++r) {
    // Plane fastest: a thread's rows are whole output rows of every plane, as the convolutions
    // around it split theirs, so each thread reads what it wrote.
    const int64_t plane = r % p.planes, oh = r / p.planes;
    const float* xp = x + plane * p.in_h * p.in_w * kLanes;
    float* yr = y + (plane * p.out_h + oh) * p.out_w * kLanes;
    const int64_t ih0 = oh * p.stride_h - p.pad_top;
    const Range rows = valid_taps(ih0, p.dil_h, p.k_h, 0, p.in_h);
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      const int64_t iw0 = ow * p.stride_w - p.pad_left;
      // Inside columns take every tap without valid_taps' divisions (ResNet-50's 3x3 stride-2
      // pool 0.126 -> 0.112 ms on two threads).
      const Range cols = ow >= inside_lo && ow < inside_hi
                             ? Range{0, p.k_w}
                             : valid_taps(iw0, p.dil_w, p.k_w, 0, p.in_w);
      Block acc = Block::lowest();
      for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
        const float* xr = xp + (ih0 + kh * p.dil_h) * p.in_w * kLanes;
        for (int64_t kw = cols.lo; kw < cols.hi; ++kw) acc.take(xr + (iw0 + kw * p.dil_w) * kLanes);
      }
      acc.store(yr + ow * kLanes);
    }
  }
}

}  // namespace kiln::kernels::cpu
