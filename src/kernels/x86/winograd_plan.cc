// The ISA-neutral half of the Winograd convolution (kernels.h): which convolutions it runs, the
// transformed weights, the plan, and the dispatch to the ISA's instantiation
// (kernels_winograd_impl.h).
#include <algorithm>

#include "base/int_math.h"
#include "kernels/ref/layout.h"
#include "kernels/x86/isa_entry.h"
#include "kernels/x86/kernels.h"
#include "kernels/x86/plan_util.h"
#include "kernels/x86/winograd_matrices.h"

namespace kiln::kernels::x86 {
namespace {

constexpr int64_t kWinoBlock = ref::kChannelBlock;

// A task's transformed input stays within 512 KiB (half of L2 on the targets' cores): the co
// tiles' products read it again for each of their alpha^2 planes.
constexpr int64_t kInputFloats = 128 * 1024;

// Transformed weights up to this size are read by every thread, each transforming only its own
// tiles; larger ones are split by output blocks between the threads, which then transform every
// tile (the transform is 15% of such a layer).
// ResNet-50's 28x28 layers (2.4 MB): 0.46 (oneDNN; kiln's channel split 0.47) -> 0.40 ms in the
// network; its 14x14 ones (9.4 MB) stay split by channels, which was 5% faster even hot.
constexpr int64_t kSharedWeightBytes = 4 << 20;

// U = G g G^T for each (output, input) channel pair, in double, into [xi][out_block][in_c][16].
// The 16 output channels of a block are transformed together, so that each plane's line is written
// whole: one channel at a time wrote every line of alpha^2 planes 16 times over, which spilled L2
// on the wide layers (62 ms of ResNet-50's 117 ms warm-cache rebuild).
template <int M, int S>
void pack_m(const cpu::Conv2DParams& p, const float* w, float* packed) {
  using W = winograd::Transforms<M, S>;
  constexpr int A = W::kAlpha;
  constexpr int64_t L = kWinoBlock;
  const int64_t out_blocks = ref::channel_blocks(p.out_c);
  const int64_t xi_floats = out_blocks * p.in_c * L;
  for (int64_t ob = 0; ob < out_blocks; ++ob) {
    const int64_t lanes = std::min(L, p.out_c - ob * L);
    for (int64_t ic = 0; ic < p.in_c; ++ic) {
      double g[9][L] = {};  // lanes past out_c stay 0, and so do their transformed weights
      for (int64_t l = 0; l < lanes; ++l) {
        const float* src = w + ((ob * L + l) * p.in_c + ic) * 9;
        for (int t = 0; t < 9; ++t) g[t][l] = src[t];
      }
      double gg[A][3][L];  // G g
      for (int r = 0; r < A; ++r) {
        for (int c = 0; c < 3; ++c) {
          for (int64_t l = 0; l < L; ++l) {
            gg[r][c][l] =
                W::kG[r][0] * g[c][l] + W::kG[r][1] * g[3 + c][l] + W::kG[r][2] * g[6 + c][l];
          }
        }
      }
      float* at = packed + (ob * p.in_c + ic) * L;
      for (int r = 0; r < A; ++r) {
        for (int c = 0; c < A; ++c) {
          float* line = at + (r * A + c) * xi_floats;
          for (int64_t l = 0; l < L; ++l) {
            const double u =
                gg[r][0][l] * W::kG[c][0] + gg[r][1][l] * W::kG[c][1] + gg[r][2][l] * W::kG[c][2];
            line[l] = static_cast<float>(u);
          }
        }
      }
    }
  }
}

// The input tile's side: m outputs of a 3-tap window at `stride`.
int winograd_alpha(int m, int stride) { return (m - 1) * stride + 3; }

// floats (a whole number of 64-byte lines) rounded up to an odd number of lines: up to 64 planes
// that far apart then fall in distinct L1 sets.
int64_t odd_lines(int64_t floats) {
  return (floats / kWinoBlock) % 2 == 1 ? floats : floats + kWinoBlock;
}

}  // namespace

bool winograd_applies(const cpu::Conv2DParams& p, int m, int stride) {
  const bool variant = stride == 1 || (stride == 2 && m == 2);
  return variant && p.k_h == 3 && p.k_w == 3 && p.stride_h == stride && p.stride_w == stride &&
         p.dil_h == 1 && p.dil_w == 1 && p.group == 1;
}

size_t winograd_packed_weights_floats(const cpu::Conv2DParams& p, int m, int stride) {
  const int64_t alpha = winograd_alpha(m, stride);
  return static_cast<size_t>(alpha * alpha * ref::channel_blocks(p.out_c) * p.in_c * kWinoBlock);
}

void winograd_pack_weights(const cpu::Conv2DParams& p, int m, int stride, const float* w,
                           float* packed) {
  if (stride == 2) return pack_m<2, 2>(p, w, packed);
  if (m == 2) return pack_m<2, 1>(p, w, packed);
  if (m == 3) return pack_m<3, 1>(p, w, packed);
  pack_m<4, 1>(p, w, packed);
}

// Tile blocks as large as kInputFloats allows (each block reads every transformed weight once), or
// all the tiles in one when the weights outweigh the image's transformed input and
// kSharedWeightBytes (ResNet-50's 14x14 and 7x7 layers: 9 to 38 MB of weights, streamed from
// memory in the network); all output blocks
// in one group. Then, for threads, smaller tile blocks while the image's transformed input
// outweighs the weights, else smaller co groups (each re-transforms its tiles).
WinogradPlan plan_winograd(Isa isa, const cpu::Conv2DParams& p, int m, int threads) {
  WinogradPlan pl;
  pl.isa = isa;
  pl.p = p;
  pl.m = m;
  pl.stride = static_cast<int>(p.stride_h);
  pl.alpha = winograd_alpha(m, pl.stride);
  pl.in_blocks = ref::channel_blocks(p.in_c);
  pl.out_blocks = ref::channel_blocks(p.out_c);
  pl.tiles_w = ceil_div(p.out_w, m);
  pl.tiles = ceil_div(p.out_h, m) * pl.tiles_w;
  const int64_t co_tiles = ceil_div(pl.out_blocks, nchw16c_max_co_tile(isa));
  pl.co_tile = ceil_div(pl.out_blocks, co_tiles);
  pl.px_tile = nchw16c_tile_pixels(isa, pl.co_tile);
  const int64_t tile_floats = pl.alpha * pl.alpha * pl.in_blocks * kWinoBlock;
  const auto weight_floats = static_cast<int64_t>(winograd_packed_weights_floats(p, m, pl.stride));
  const bool weights_larger =
      weight_floats > tile_floats * pl.tiles &&
      weight_floats * static_cast<int64_t>(sizeof(float)) > kSharedWeightBytes;
  pl.tile_block = std::max(pl.px_tile, kInputFloats / tile_floats / pl.px_tile * pl.px_tile);
  if (weights_larger) pl.tile_block = round_up(pl.tiles, pl.px_tile);
  pl.tile_block = std::min(pl.tile_block, round_up(pl.tiles, pl.px_tile));
  pl.co_group = pl.out_blocks;
  const auto count = [&] {
    pl.tile_blocks = ceil_div(pl.tiles, pl.tile_block);
    pl.co_groups = ceil_div(pl.out_blocks, pl.co_group);
    pl.tasks = p.batch * pl.tile_blocks * pl.co_groups;
  };
  count();
  const int64_t want = 2 * static_cast<int64_t>(threads);
  while (threads > 1 && pl.tasks < want) {
    const bool tiles_left = pl.tile_block > pl.px_tile;
    if (tiles_left && (!weights_larger || pl.co_group <= pl.co_tile)) {
      pl.tile_block = round_up(ceil_div(pl.tile_block, 2), pl.px_tile);
    } else if (pl.co_group > pl.co_tile) {
      pl.co_group = round_up(ceil_div(pl.co_group, 2), pl.co_tile);
    } else {
      break;
    }
    count();
  }
  // As many tile blocks as a multiple of the threads, of nearly equal tiles: blocks of a whole
  // tile_block but the last had cut 49 tiles (ResNet-50's 28x28 layers at m = 4) 15 + 15 and
  // 15 + 4 between two threads.
  const int64_t groups = ceil_div(pl.tiles, pl.px_tile);
  pl.tile_blocks = thread_multiple(pl.tile_blocks, groups, threads);
  pl.tile_block = ceil_div(groups, pl.tile_blocks) * pl.px_tile;
  pl.tasks = p.batch * pl.tile_blocks * pl.co_groups;
  pl.v_plane = odd_lines(pl.in_blocks * pl.tile_block * kWinoBlock);
  pl.m_plane = odd_lines(pl.co_tile * pl.tile_block * kWinoBlock);
  return pl;
}

std::pair<int64_t, int64_t> winograd_tile_range(const WinogradPlan& plan, int64_t b) {
  return dealt_range(plan.tiles, plan.px_tile, plan.tile_blocks, b);
}

size_t winograd_scratch_floats(const WinogradPlan& plan) {
  return static_cast<size_t>(plan.alpha * plan.alpha * (plan.v_plane + plan.m_plane));
}

void winograd_run(const WinogradPlan& plan, const float* packed_w, const WinogradIo& io,
                  const Epilogue& ep, int64_t task_begin, int64_t task_end) {
  if (plan.isa == Isa::kAvx512) {
    return avx512::winograd_run(plan, packed_w, io, ep, task_begin, task_end);
  }
  return avx2::winograd_run(plan, packed_w, io, ep, task_begin, task_end);
}

}  // namespace kiln::kernels::x86
