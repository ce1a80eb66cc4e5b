#include "kernels/ref/layout.h"

namespace kiln::kernels::ref {

void to_nchw16c(const float* x, int64_t n, int64_t c, int64_t hw, float* y) {
  const int64_t blocks = channel_blocks(c);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {
      float* dst = y + (i * blocks + b) * hw * kChannelBlock;
      for (int64_t l = 0; l < kChannelBlock; ++l) {
        const int64_t ch = b * kChannelBlock + l;
        const float* src = x + (i * c + ch) * hw;
        for (int64_t p = 0; p < hw; ++p) dst[p * kChannelBlock + l] = ch < c ? src[p] : 0.0f;
      }
    }
  }
}

void from_nchw16c(const float* x, int64_t n, int64_t c, int64_t hw, float* y) {
  const int64_t blocks = channel_blocks(c);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* src = x + ((i * blocks + ch / kChannelBlock) * hw) * kChannelBlock;
      float* dst = y + (i * c + ch) * hw;
      for (int64_t p = 0; p < hw; ++p) dst[p] = src[p * kChannelBlock + ch % kChannelBlock];
    }
  }
}

}  // namespace kiln::kernels::ref
