#pragma once
// ISA-neutral pieces shared by the float and INT8 planners (kernels_dispatch.cc,
// qkernels_dispatch.cc). Each keeps its own policy for how many blocks to cut (the float GEMM
// splits greedily until the tasks spread over the threads; the INT8 one searches for the split
// whose slowest thread finishes first), but they cut the same way, and their depthwise kernels
// pad the same plane.

#include <algorithm>
#include <cstdint>

#include "base/int_math.h"
#include "kernels/cpu/conv.h"

namespace kiln::kernels::x86 {

// An [m x n] output per unit (image x group) cut into m_blocks x n_blocks tasks of mc rows and nc
// columns (the last block of each may be shorter).
struct Split {
  int64_t mc, nc, m_blocks, n_blocks;
};

// `extent` (> 0) cut into at most `blocks` blocks of equal size, a multiple of `unit`, so that no
// block is left with a sliver.
struct Blocks {
  int64_t size, count;
};
constexpr Blocks even_blocks(int64_t extent, int64_t blocks, int64_t unit) {
  const int64_t size = round_up(ceil_div(extent, blocks), unit);
  return {size, ceil_div(extent, size)};
}

// The zero-padded copy of one input plane a depthwise task reads: the input after its leading
// padding, extended to where the last output's window ends, so that no tap is bounds-checked.
struct PaddedPlane {
  int64_t h, w;
};
inline PaddedPlane padded_plane(const cpu::Conv2DParams& p) {
  return {std::max(p.in_h + p.pad_top, (p.out_h - 1) * p.stride_h + (p.k_h - 1) * p.dil_h + 1),
          std::max(p.in_w + p.pad_left, (p.out_w - 1) * p.stride_w + (p.k_w - 1) * p.dil_w + 1)};
}

}  // namespace kiln::kernels::x86
