#include "kernels/cpu/nchw16c.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "kernels/cpu/max_pool_nchw16c_walk.h"

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

namespace {

// A block's 16 lanes as 4 values of 4: GCC left a plain lane loop scalar (maxss), and split a
// 16-float vector type into scalars too.
struct QuadBlock {
  using Quad = float __attribute__((vector_size(4 * sizeof(float))));
  Quad q[4];

  static QuadBlock lowest() {
    QuadBlock b;
    for (Quad& v : b.q) v = Quad{} + std::numeric_limits<float>::lowest();
    return b;
  }
  void take(const float* v) {
    for (int i = 0; i < 4; ++i) {
      Quad vq;
      std::memcpy(&vq, v + 4 * i, sizeof vq);
      q[i] = q[i] < vq ? vq : q[i];  // NaN skipped
    }
  }
  void store(float* y) const { std::memcpy(y, q, sizeof q); }
};

}  // namespace

void max_pool_nchw16c(const Pool2DParams& p, const float* x, float* y, int64_t row_begin,
                      int64_t row_end) {
  max_pool_nchw16c_walk<QuadBlock>(p, x, y, row_begin, row_end);
}

}  // namespace kiln::kernels::cpu
