#include "kernels/cpu/nchw16c.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace kiln::kernels::cpu {
namespace {
constexpr int64_t kBlockLanes = 16;
}

void to_nchw16c_block(const float* x, int64_t lanes, int64_t hw, float* y) {
  for (int64_t p0 = 0; p0 < hw; p0 += kBlockLanes) {
    const int64_t n = hw - p0 < kBlockLanes ? hw - p0 : kBlockLanes;
    float tile[kBlockLanes][kBlockLanes] = {};
    for (int64_t l = 0; l < lanes; ++l) {
      for (int64_t j = 0; j < n; ++j) tile[j][l] = x[l * hw + p0 + j];
    }
    float* dst = y + p0 * kBlockLanes;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t l = 0; l < kBlockLanes; ++l) dst[j * kBlockLanes + l] = tile[j][l];
    }
  }
}

void from_nchw16c_block(const float* x, int64_t lanes, int64_t hw, float* y) {
  for (int64_t p0 = 0; p0 < hw; p0 += kBlockLanes) {
    const int64_t n = hw - p0 < kBlockLanes ? hw - p0 : kBlockLanes;
    float tile[kBlockLanes][kBlockLanes];
    const float* src = x + p0 * kBlockLanes;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t l = 0; l < kBlockLanes; ++l) tile[l][j] = src[j * kBlockLanes + l];
    }
    for (int64_t l = 0; l < lanes; ++l) {
      for (int64_t j = 0; j < n; ++j) y[l * hw + p0 + j] = tile[l][j];
    }
  }
}

void global_avg_pool_nchw16c(const float* x, int64_t hw, float* y, int64_t begin, int64_t end) {
  const float inv = hw > 0 ? 1.0f / static_cast<float>(hw) : 0.0f;
  for (int64_t b = begin; b < end; ++b) {
    float sum[kBlockLanes] = {};
    const float* src = x + b * hw * kBlockLanes;
    for (int64_t p = 0; p < hw; ++p) {
      for (int64_t l = 0; l < kBlockLanes; ++l) sum[l] += src[p * kBlockLanes + l];
    }
    for (int64_t l = 0; l < kBlockLanes; ++l) y[b * kBlockLanes + l] = sum[l] * inv;
  }
}

void mul_nchw16c(const float* x, const float* s, bool s_per_image, int64_t blocks, int64_t hw,
                 float* y, int64_t begin, int64_t end) {
  for (int64_t b = begin; b < end; ++b) {
    const float* scale = s + ((s_per_image ? b / blocks : 0) * blocks + b % blocks) * kBlockLanes;
    const float* src = x + b * hw * kBlockLanes;
    float* dst = y + b * hw * kBlockLanes;
    for (int64_t p = 0; p < hw; ++p) {
      for (int64_t l = 0; l < kBlockLanes; ++l)
        dst[p * kBlockLanes + l] = src[p * kBlockLanes + l] * scale[l];
    }
  }
}

void max_pool_nchw16c(const Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  // A block's 16 lanes as 4 values of 4: GCC left a plain lane loop scalar (maxss), and split a
  // 16-float vector type into scalars too.
  using Quad = float __attribute__((vector_size(4 * sizeof(float))));
  constexpr int kQuads = kBlockLanes / 4;
  // Output columns [inside_lo, inside_hi) have their first and last taps, so all, in the row.
  const int64_t inside_lo = valid_outputs(-p.pad_left, p.stride_w, 0, p.in_w, p.out_w).lo;
  const int64_t last_tap = (p.k_w - 1) * p.dil_w - p.pad_left;
  const int64_t inside_hi = valid_outputs(last_tap, p.stride_w, 0, p.in_w, p.out_w).hi;
  for (int64_t r = row_begin; r < row_end; ++r) {
    // Plane fastest: a thread's rows are whole output rows of every plane, as the convolutions
    // around it split theirs, so each thread reads what it wrote.
    const int64_t plane = r % p.planes, oh = r / p.planes;
    const float* xp = x + plane * p.in_h * p.in_w * kBlockLanes;
    float* yr = y + (plane * p.out_h + oh) * p.out_w * kBlockLanes;
    const int64_t ih0 = oh * p.stride_h - p.pad_top;
    const Range rows = valid_taps(ih0, p.dil_h, p.k_h, 0, p.in_h);
    for (int64_t ow = 0; ow < p.out_w; ++ow) {
      const int64_t iw0 = ow * p.stride_w - p.pad_left;
      // Inside columns take every tap without valid_taps' divisions (ResNet-50's 3x3 stride-2
      // pool 0.126 -> 0.112 ms on two threads).
      const Range cols = ow >= inside_lo && ow < inside_hi
                             ? Range{0, p.k_w}
                             : valid_taps(iw0, p.dil_w, p.k_w, 0, p.in_w);
      Quad acc[kQuads];
      for (Quad& a : acc) a = Quad{} + std::numeric_limits<float>::lowest();
      for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
        const float* xr = xp + (ih0 + kh * p.dil_h) * p.in_w * kBlockLanes;
        for (int64_t kw = cols.lo; kw < cols.hi; ++kw) {
          const float* v = xr + (iw0 + kw * p.dil_w) * kBlockLanes;
          for (int q = 0; q < kQuads; ++q) {
            Quad vq;
            std::memcpy(&vq, v + 4 * q, sizeof vq);
            acc[q] = acc[q] < vq ? vq : acc[q];  // NaN skipped
          }
        }
      }
      std::memcpy(yr + ow * kBlockLanes, acc, sizeof acc);
    }
  }
}

}  // namespace kiln::kernels::cpu
