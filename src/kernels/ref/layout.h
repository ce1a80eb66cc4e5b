#pragma once
// The blocked activation layout nChw16c: channels in blocks of 16, the 16 values of one pixel and
// block contiguous, blocks of a whole plane after each other: element (n, c, h, w) of an NCHW
// tensor with C channels is at ((n * blocks(C) + c / 16) * H * W + h * W + w) * 16 + c % 16. The
// last block's lanes past C are padding: kiln's blocked producers write finite values there
// (zeros from a reorder, act(0) from a convolution) and no consumer reads them.
#include <cstdint>

namespace kiln::kernels::ref {

inline constexpr int64_t kChannelBlock = 16;

// Channel blocks holding c channels, and the padded channel count.
inline constexpr int64_t channel_blocks(int64_t c) {
  return (c + kChannelBlock - 1) / kChannelBlock;
}
inline constexpr int64_t padded_channels(int64_t c) { return channel_blocks(c) * kChannelBlock; }

// x: NCHW [n, c, hw] -> y: nChw16c [n, blocks(c), hw, 16], padding lanes zero.
void to_nchw16c(const float* x, int64_t n, int64_t c, int64_t hw, float* y);
// x: nChw16c [n, blocks(c), hw, 16] -> y: NCHW [n, c, hw]; the padding lanes are not read.
void from_nchw16c(const float* x, int64_t n, int64_t c, int64_t hw, float* y);

}  // namespace kiln::kernels::ref
