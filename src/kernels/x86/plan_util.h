#pragma once
// ISA-neutral pieces shared by the planners: the float and INT8 ones (kernels_dispatch.cc,
// qkernels_dispatch.cc) cut rows and columns into tasks the same way, search for the split whose
// slowest thread finishes first, and their depthwise kernels pad the same plane; the nChw16c and
// Winograd ones (nchw16c_plan.cc, winograd_plan.cc) deal their pixels, tiles and rows out evenly.

#include <algorithm>
#include <cstdint>
#include <utility>

#include "base/int_math.h"
#include "kernels/cpu/conv.h"
#include "kernels/x86/kernels.h"

namespace kiln::kernels::x86 {

// The nChw16c pointwise register tile (kernels_nchw16c_impl.h, which the Winograd products run
// on too): up to 4 (AVX-512) or 2 (AVX2) output blocks wide, with 24 of AVX-512's 32 registers or
// 12 of AVX2's 16 holding accumulators, at most 12 pixels.
inline constexpr int64_t kNchw16cMaxTilePixels = 12;
inline int64_t nchw16c_max_co_tile(Isa isa) { return isa == Isa::kAvx512 ? 4 : 2; }
inline int64_t nchw16c_tile_pixels(Isa isa, int64_t co_tile) {
  const int64_t nv = isa == Isa::kAvx512 ? 1 : 2;
  return std::min<int64_t>(kNchw16cMaxTilePixels, (isa == Isa::kAvx512 ? 24 : 12) / (co_tile * nv));
}

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

// Items [first, second) of block b when `extent` items, in units of `unit` items (the last unit
// may be shorter: a register tile of pixels), are dealt out to `blocks` blocks: two blocks differ
// by at most one unit, where blocks of a fixed size leave the last one short (49 pixels in tiles
// of 3 as 15 + 15 + 15 + 4, 30 pixels on one of two threads and 19 on the other). The nChw16c
// and Winograd planners cut their pixels, tiles and rows so.
inline std::pair<int64_t, int64_t> dealt_range(int64_t extent, int64_t unit, int64_t blocks,
                                               int64_t b) {
  const int64_t units = ceil_div(extent, unit);
  const auto first = [&](int64_t i) { return std::min(extent, units * i / blocks * unit); };
  return {first(b), first(b + 1)};
}

// `blocks` raised to a multiple of the threads when there are several of both, and at most
// `units` (one unit a block): run_tasks() hands each thread an equal count of tasks, which are
// then equal work when the blocks are dealt_range's.
inline int64_t thread_multiple(int64_t blocks, int64_t units, int threads) {
  const bool raise = threads > 1 && blocks > 1;
  return std::min(units, raise ? round_up(blocks, int64_t{threads}) : blocks);
}

// What a thread pays, in the makespan's lanes, to set up a task's columns, and how its tile
// computes them. An INT8 convolution that is not flat builds a pixel block's quad planes, once
// for consecutive tasks of the same block (a block of nc output pixels spans ceil(nc / row) +
// extra_rows rows of per_row lanes each; with per_row set, blocks of whole rows are split
// candidates too); every task packs its columns (per_col lanes each: a float convolution's B,
// an INT8 convolution's patch panels). Zero for GEMMs.
struct BlockSetup {
  int64_t per_row = 0, row = 1, extra_rows = 0;
  int64_t per_col = 0;
  // The tile's column granularity, to which a block's columns are rounded up in the cost (0: the
  // panel width nr; the INT8 tile runs a short panel as fewer vectors).
  int64_t col_grain = 0;
  int64_t block_lanes(int64_t nc) const {
    return per_row == 0 ? 0 : per_row * (ceil_div(nc, row) + extra_rows);
  }
};

// Rows and columns per task for an [m x n] output per unit (image x group), in tiles of mr rows
// and nr columns: within m_cap and n_cap (cache budgets), and with more threads the split of
// rows and columns whose slowest thread finishes first (ties: fewer tasks), tasks being run as
// run_tasks() runs them (contiguous ranges, row blocks fastest). Column panels are coarse: a
// 14x14 plane's 196 pixels are 6 panels of 32 and a bit, which no column split shares evenly
// over 2 threads, while its 256 or 1024 output channels split exactly. With area_cap > 0, n_cap
// only sets the starting split: any task of at most area_cap outputs (mc x nc) is allowed, so
// that splitting rows can buy wider column blocks.
Split split_tasks(int64_t m, int64_t n, int64_t units, int64_t mr, int64_t nr, int64_t m_cap,
                  int64_t n_cap, int threads, const BlockSetup& setup = {}, int64_t area_cap = 0);

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
