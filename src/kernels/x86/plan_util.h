#pragma once
// ISA-neutral pieces shared by the float and INT8 planners (kernels_dispatch.cc,
// qkernels_dispatch.cc). Each keeps its own policy for how many blocks to cut (the float GEMM
// splits greedily until the tasks spread over the threads; the INT8 one searches for the split
// whose slowest thread finishes first), but they cut the same way.

#include <cstdint>

#include "base/int_math.h"

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

}  // namespace kiln::kernels::x86
