// The ISA-neutral half of the nChw16c convolutions (kernels.h): which convolutions they run, the
// packed weights, the plans, and the dispatch to the ISA's instantiation (kernels_nchw16c_impl.h).
#include <algorithm>

#include "base/int_math.h"
#include "kernels/ref/layout.h"
#include "kernels/x86/isa_entry.h"
#include "kernels/x86/kernels.h"
#include "kernels/x86/plan_util.h"

namespace kiln::kernels::x86 {
namespace {

constexpr int64_t kBlk = ref::kChannelBlock;

// An input chunk of a pointwise task stays within 64 KiB (L2, ahead of the weights' tile).
constexpr int64_t kChunkFloats = 16 * 1024;

// A co-outer plan splits the output pixels between the threads (one part each) where every
// thread gets at least this many; fewer, and the threads split the co tiles instead (one part),
// each reading all of the (small) input and half of the weights. In the pixel split each thread
// streams every weight for its few pixels: ResNet-50's 7x7 1x1 layers (2 threads, 24 or 25 pixels
// each, 4.2 to 8.4 MB of weights) ran 0.87-0.94x as long split by channels, 6 ABBA rounds in the
// network; its 14x14 ones (98 pixels a thread) 1.06-1.13x, so they keep the pixel split.
constexpr int64_t kPixelsPerPart = 32;

// Co tiles as wide as the register tile allows, but no wider than a core's L2 holds the tile's
// packed weights, where one block's fit: every register tile of pixels reads all of its co tile's
// weights, from L2 when they fit, else from L3. ResNet-50's stride-2 3x3 layer of 512 channels
// (7x7 out) has 590 KB a 2-block AVX2 co tile; on a 512 KiB L2 one block (295 KB) by 6 pixels ran
// 2.04 -> 1.65 ms in the network (2 threads). Co tiles that fit run as before: 1-block tiles read
// their weights for 12 FMAs a channel, as 2-block ones do, but twice the broadcasts.
int64_t widest_co_tile(const Nchw16cConvPlan& pl, int64_t l2_bytes) {
  const int64_t widest = nchw16c_max_co_tile(pl.isa);
  const int64_t block_bytes = pl.p.k_h * pl.p.k_w * pl.p.in_c * kBlk * int64_t{sizeof(float)};
  if (l2_bytes <= 0 || block_bytes <= 0) return widest;
  return std::clamp<int64_t>(l2_bytes / block_bytes, 1, widest);
}

void plan_tiles(Nchw16cConvPlan& pl, int64_t l2_bytes) {
  pl.co_tiles = ceil_div(pl.out_blocks, widest_co_tile(pl, l2_bytes));
  pl.co_tile = ceil_div(pl.out_blocks, pl.co_tiles);
  pl.co_tiles = ceil_div(pl.out_blocks, pl.co_tile);
  pl.px_tile = nchw16c_tile_pixels(pl.isa, pl.co_tile);
}

// About `chunks` chunks of an image's output pixels, as many as a multiple of the threads, each
// of nearly the same number of tiles (nchw16c_chunk_range): a thread's share is then whole chunks
// of equal work. Chunks of a whole number of tiles but the last had cut 196 pixels 168 + 28, and
// 49 (MobileNetV2's 960 -> 320 at 7x7, two chunks a thread) 15 + 15 and 15 + 4: 10 tiles on one
// thread, 7 on the other.
void even_chunks(Nchw16cConvPlan& pl, int64_t chunks, int threads) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t tiles = ceil_div(p.out_h * p.out_w, pl.px_tile);
  pl.chunks = thread_multiple(chunks, tiles, threads);
  pl.chunk = ceil_div(tiles, pl.chunks) * pl.px_tile;
  pl.tasks = p.batch * pl.chunks * pl.co_tiles;
}

void plan_pointwise(Nchw16cConvPlan& pl, int threads, int64_t l2_bytes) {
  const cpu::Conv2DParams& p = pl.p;
  plan_tiles(pl, l2_bytes);
  const int64_t pixels = p.out_h * p.out_w;
  int64_t chunk =
      std::max(pl.px_tile, kChunkFloats / std::max<int64_t>(p.in_c, 1) / pl.px_tile * pl.px_tile);
  // At least two tasks per thread where the pixels allow, so no thread idles at the end.
  const int64_t want = 2 * static_cast<int64_t>(threads);
  const int64_t per_image = p.batch * pl.co_tiles;
  if (threads > 1 && per_image * ceil_div(pixels, chunk) < want) {
    chunk = round_up(ceil_div(pixels, ceil_div(want, per_image)), pl.px_tile);
  }
  even_chunks(pl, ceil_div(pixels, std::min(chunk, round_up(pixels, pl.px_tile))), threads);
}

// Tasks of whole output rows whose input rows (all channels) fit kChunkFloats, so that the
// consecutive tasks of one chunk (its co tiles) read them from cache, but of at least 8 full
// register tiles (a blocked X's tiles run across rows: ResNet-50's 7-pixel rows of 512 channels,
// one a task, cut into 2-pixel tiles, which read as many weights as 3-pixel ones for 8 FMAs in
// place of 12); at least two tasks per thread where the rows allow. A blocked X's chunks are then
// pixel ranges as the pointwise ones (as many as a multiple of the threads, of nearly equal
// tiles): whole rows had cut ResNet-50's stride-2 3x3 layers unevenly between two threads (14
// rows as 3 chunks of 2 rows and 4 of them; 7 rows as 4 and 3).
void plan_dense(Nchw16cConvPlan& pl, int threads, int64_t l2_bytes) {
  const cpu::Conv2DParams& p = pl.p;
  plan_tiles(pl, l2_bytes);
  const int64_t row_floats = std::max<int64_t>(1, p.stride_h * p.in_w * p.in_c);
  const int64_t tile_rows = pl.plain_x ? 1 : ceil_div(8 * pl.px_tile, p.out_w);
  int64_t rows = std::clamp<int64_t>(std::max(kChunkFloats / row_floats, tile_rows), 1, p.out_h);
  const int64_t want = 2 * static_cast<int64_t>(threads);
  const int64_t per_image = p.batch * pl.co_tiles;
  if (threads > 1 && per_image * ceil_div(p.out_h, rows) < want) {
    rows = std::max<int64_t>(1, ceil_div(p.out_h, ceil_div(want, per_image)));
  }
  if (!pl.plain_x) return even_chunks(pl, ceil_div(p.out_h, rows), threads);
  // Whole rows, dealt out evenly (nchw16c_row_range): chunks of `rows` had cut a 112-row stem
  // 9 x 12 + 4, 60 rows on one thread and 52 on the other.
  pl.row_chunks = thread_multiple(ceil_div(p.out_h, rows), p.out_h, threads);
  pl.rows = ceil_div(p.out_h, pl.row_chunks);
  pl.tasks = p.batch * pl.row_chunks * pl.co_tiles;
}

// Tasks of nchw16c_row_range's rows of one block: at least four per thread, and as many as a
// multiple of the threads where the rows allow (MobileNetV2's 144 channels, 9 blocks, had run 5
// on one thread and 4 on the other).
void plan_depthwise(Nchw16cConvPlan& pl, int threads) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t planes = p.batch * pl.out_blocks;
  int64_t chunks =
      std::clamp<int64_t>(ceil_div(4 * static_cast<int64_t>(threads), planes), 1, p.out_h);
  while (threads > 1 && planes * chunks % threads != 0 && chunks < p.out_h) ++chunks;
  pl.row_chunks = chunks;
  pl.rows = ceil_div(p.out_h, chunks);
  pl.tasks = planes * pl.row_chunks;
}

}  // namespace

bool nchw16c_is_pointwise(const cpu::Conv2DParams& p) {
  return p.group == 1 && p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         p.out_h == (p.in_h - 1) / p.stride_h + 1 && p.out_w == (p.in_w - 1) / p.stride_w + 1;
}

bool nchw16c_is_depthwise(const cpu::Conv2DParams& p) {
  return p.group == p.in_c && p.out_c == p.in_c;
}

bool nchw16c_is_dense(const cpu::Conv2DParams& p) {
  return p.group == 1 && !nchw16c_is_pointwise(p) && !nchw16c_is_depthwise(p);
}

size_t nchw16c_conv_packed_weights_floats(const cpu::Conv2DParams& p) {
  const int64_t out = ref::padded_channels(p.out_c);
  const int64_t taps = p.k_h * p.k_w;
  return static_cast<size_t>(nchw16c_is_depthwise(p) ? out * taps : out * taps * p.in_c);
}

void nchw16c_conv_pack_weights(const cpu::Conv2DParams& p, const float* w, float* packed) {
  const int64_t out_blocks = ref::channel_blocks(p.out_c);
  if (nchw16c_is_depthwise(p)) {
    const int64_t taps = p.k_h * p.k_w;
    for (int64_t b = 0; b < out_blocks; ++b) {
      for (int64_t t = 0; t < taps; ++t) {
        for (int64_t l = 0; l < kBlk; ++l) {
          const int64_t c = b * kBlk + l;
          packed[(b * taps + t) * kBlk + l] = c < p.out_c ? w[c * taps + t] : 0.0f;
        }
      }
    }
    return;
  }
  const int64_t taps = p.k_h * p.k_w;
  for (int64_t b = 0; b < out_blocks; ++b) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t ci = 0; ci < p.in_c; ++ci) {
        for (int64_t l = 0; l < kBlk; ++l) {
          const int64_t c = b * kBlk + l;
          packed[((b * taps + t) * p.in_c + ci) * kBlk + l] =
              c < p.out_c ? w[(c * p.in_c + ci) * taps + t] : 0.0f;
        }
      }
    }
  }
}

Nchw16cConvPlan plan_nchw16c_conv(Isa isa, const cpu::Conv2DParams& p, int threads, bool plain_x,
                                  int64_t l2_bytes) {
  Nchw16cConvPlan pl;
  pl.isa = isa;
  pl.p = p;
  // A one-channel group-1 convolution is depthwise too: with a plain X the dense kernel runs it.
  pl.depthwise = nchw16c_is_depthwise(p) && !(plain_x && p.group == 1);
  pl.in_blocks = ref::channel_blocks(p.in_c);
  pl.out_blocks = ref::channel_blocks(p.out_c);
  pl.plain_x = plain_x && !pl.depthwise;
  pl.dense = nchw16c_is_dense(p) || pl.plain_x;
  pl.ow_lo = std::min(p.out_w, ceil_div(p.pad_left, p.stride_w));
  const int64_t reach = p.in_w - 1 + p.pad_left - (p.k_w - 1) * p.dil_w;
  pl.ow_hi = reach < 0 ? 0 : std::min(p.out_w, reach / p.stride_w + 1);
  if (pl.depthwise) {
    plan_depthwise(pl, threads);
  } else if (pl.dense) {
    plan_dense(pl, threads, l2_bytes);
  } else {
    plan_pointwise(pl, threads, l2_bytes);
  }
  if (!pl.depthwise) {
    const int64_t in_floats = pl.in_blocks * kBlk * p.in_h * p.in_w;
    pl.co_outer = static_cast<int64_t>(nchw16c_conv_packed_weights_floats(p)) > in_floats;
    if (pl.co_outer && p.batch * p.out_h * p.out_w >= kPixelsPerPart * threads) {
      pl.parts = std::max<int64_t>(1, std::min<int64_t>(threads, pl.tasks / pl.co_tiles));
    }
    // In the network a co-outer layer's weights come from L3 or memory, each co tile's first
    // tile waiting for them. The next ones brought in alongside: ResNet-50's 512 -> 2048 1x1 at
    // 7x7 0.72 -> 0.63 ms (2 threads, 12 rounds). Where two co tiles fill L2 (2048 -> 512 on a
    // 512 KiB L2) the prefetch evicts the weights in use: a quarter of L2 is left for the input.
    const int64_t co_tile_bytes = p.in_c * pl.co_tile * kBlk * int64_t{sizeof(float)};
    pl.prefetch_next =
        pl.co_outer && !pl.dense && l2_bytes > 0 && 2 * co_tile_bytes <= l2_bytes * 3 / 4;
  }
  return pl;
}

// A pointwise tile's scaled input pixels: [in_blocks][pixels][16], for the widest tile (a last,
// narrower co tile takes more pixels than px_tile, and one whose last block is half padding more
// again: AVX2's 8 channels take 12).
size_t nchw16c_conv_scratch_floats(const Nchw16cConvPlan& plan) {
  if (plan.depthwise || plan.dense) return 0;
  return static_cast<size_t>(plan.in_blocks * kNchw16cMaxTilePixels * kBlk);
}

std::pair<int64_t, int64_t> nchw16c_row_range(const Nchw16cConvPlan& plan, int64_t c) {
  return dealt_range(plan.p.out_h, 1, plan.row_chunks, c);
}

std::pair<int64_t, int64_t> nchw16c_chunk_range(const Nchw16cConvPlan& plan, int64_t c) {
  if (plan.plain_x) {
    const auto [oh0, oh1] = nchw16c_row_range(plan, c);
    return {oh0 * plan.p.out_w, oh1 * plan.p.out_w};
  }
  return dealt_range(plan.p.out_h * plan.p.out_w, plan.px_tile, plan.chunks, c);
}

Nchw16cTask nchw16c_task(const Nchw16cConvPlan& plan, int64_t task) {
  if (!plan.co_outer) return {task % plan.co_tiles, task / plan.co_tiles};
  // Part i holds spans [s0, s1) (s0 = spans * i / parts): tasks [co_tiles * s0, co_tiles * s1),
  // co tile by co tile, so task / co_tiles is one of its spans and names the part.
  const int64_t spans = plan.tasks / plan.co_tiles;
  const auto first_span = [&](int64_t i) { return spans * i / plan.parts; };
  const int64_t i = ((task / plan.co_tiles + 1) * plan.parts - 1) / spans;
  const int64_t s0 = first_span(i), n = first_span(i + 1) - s0;
  const int64_t local = task - plan.co_tiles * s0;
  return {local / n, s0 + local % n, local % n, n};
}

void nchw16c_conv_run(const Nchw16cConvPlan& plan, const float* packed_w, const Nchw16cConvIo& io,
                      const Epilogue& ep, int64_t task_begin, int64_t task_end) {
  if (plan.isa == Isa::kAvx512) {
    return avx512::nchw16c_conv_run(plan, packed_w, io, ep, task_begin, task_end);
  }
  return avx2::nchw16c_conv_run(plan, packed_w, io, ep, task_begin, task_end);
}

Nchw16cExpandDwPlan plan_nchw16c_expand_dw(Isa isa, const cpu::Conv2DParams& pw,
                                           const cpu::Conv2DParams& dw, int threads,
                                           int64_t band_bytes) {
  Nchw16cExpandDwPlan pl;
  pl.pw = plan_nchw16c_conv(isa, pw, 1);
  pl.dw = plan_nchw16c_conv(isa, dw, threads);
  const int64_t row_bytes = pl.pw.out_blocks * dw.in_w * kBlk * int64_t{sizeof(float)};
  // The input rows a band of r output rows reads.
  const auto in_rows = [&](int64_t r) {
    return std::min(dw.in_h, (r - 1) * dw.stride_h + (dw.k_h - 1) * dw.dil_h + 1);
  };
  int64_t r = 1;
  while (r < dw.out_h && in_rows(r + 1) * row_bytes <= band_bytes) ++r;
  pl.band_rows = r;
  pl.band_in_rows = in_rows(r);
  pl.row_chunks = std::max<int64_t>(1, std::min<int64_t>(dw.out_h, threads));
  pl.tasks = dw.batch * pl.row_chunks;
  return pl;
}

size_t nchw16c_expand_dw_scratch_floats(const Nchw16cExpandDwPlan& plan) {
  return static_cast<size_t>(plan.pw.out_blocks * plan.band_in_rows * plan.dw.p.in_w * kBlk);
}

std::pair<int64_t, int64_t> nchw16c_expand_dw_row_range(const Nchw16cExpandDwPlan& plan,
                                                        int64_t c) {
  return dealt_range(plan.dw.p.out_h, 1, plan.row_chunks, c);
}

void nchw16c_expand_dw_run(const Nchw16cExpandDwPlan& plan, const float* pw_packed,
                           const float* dw_packed, const Nchw16cExpandDwIo& io,
                           const Epilogue& pw_ep, const Epilogue& dw_ep, int64_t task_begin,
                           int64_t task_end) {
  if (plan.dw.isa == Isa::kAvx512) {
    return avx512::nchw16c_expand_dw_run(plan, pw_packed, dw_packed, io, pw_ep, dw_ep, task_begin,
                                         task_end);
  }
  return avx2::nchw16c_expand_dw_run(plan, pw_packed, dw_packed, io, pw_ep, dw_ep, task_begin,
                                     task_end);
}

}  // namespace kiln::kernels::x86
