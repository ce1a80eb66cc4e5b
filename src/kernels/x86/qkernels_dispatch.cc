// The ISA-neutral half of qkernels.h: plans (blocks and the split into tasks), buffer sizes, and
// the dispatch to the instantiation the plan's QIsa names. Built without ISA flags.
#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <optional>

#include "base/int_math.h"
#include "kernels/x86/plan_util.h"
#include "kernels/x86/qisa_entry.h"
#include "kernels/x86/qkernels.h"

namespace kiln::kernels::x86 {
namespace {

size_t round64(int64_t bytes) { return static_cast<size_t>(round_up(bytes, 64)); }

// A task's weights (rows x depth) stay within this share of L2 while its pixel panels stream.
constexpr int64_t kL2WeightBytes = 384 * 1024;
// A task's quad planes (its rows of the input) stay within this.
constexpr int64_t kX4Bytes = 512 * 1024;

// Stride phases a kernel's taps (k of them, dilation d) fall on along one axis.
int64_t phases_used(int64_t k, int64_t d, int64_t stride) {
  int64_t used = 0;
  for (int64_t phase = 0; phase < stride; ++phase) {
    bool hit = false;
    for (int64_t t = 0; t < k && !hit; ++t) hit = (t * d) % stride == phase;
    used += hit ? 1 : 0;
  }
  return used;
}

// What a task's pixels cost beyond their dot products, in lanes (a lane of output costs kq / 16
// cycles of vpdpbusd). The tile computes whole vectors of pixels, so a short block costs its
// vectors, not whole panels.
// - Every task packs its patch panels: a flat plan straight from the input (pack_flat_panel),
//   others as runs copied from the quad planes; about half a cycle per pixel and channel quad, 8
//   lanes a pixel. Uncharged, ResNet-50's 1x1 layers on 56x56 planes (64 -> 64, 64 -> 256) tied
//   with the pixel split and were cut over output channels: both threads packed every panel and
//   read all of the input, and 2 threads ran 64 -> 64 no faster than 1.
// - build_x4 per quad plane row: about 15 + wps cycles (1 thread, each layer timed with and
//   without rebuilding its quad planes: 21-58 cycles a phase row on ResNet-50's 3x3 layers,
//   2026-11-29, after each input row became interleaved once for all its column phases; before,
//   four byte rows were gathered per phase row and the cost was 50 + 1.5 * wps). Ignoring it split
//   stride-2 layers over output channels, and both threads built the same quad planes: 2 threads
//   ran them only 1.24x faster than 1.
// - Pixel blocks of whole output rows are candidates: one that starts mid-row builds the quad
//   planes of the rows it shares with its neighbour again. ResNet-50's 784-pixel layers had been
//   cut 432 + 352 pixels (15.4 rows) or over channels; in whole rows, 2 threads: 3x3 s2 128@56
//   0.23-0.24 -> 0.22-0.23 ms (kernel bench), 3x3 128@28 0.203 -> 0.193 (in the network). The
//   14x14 stride-2 256-channel layer keeps its channel split: whole rows were faster alone (0.35
//   -> 0.26 ms) but not in the network.
BlockSetup quad_plane_setup(const QConvPlan& pl) {
  BlockSetup s{.per_col = 8, .col_grain = pl.bl.lanes};
  if (pl.flat) return s;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t phases =
      phases_used(p.k_h, p.dil_h, p.stride_h) * phases_used(p.k_w, p.dil_w, p.stride_w);
  const int64_t cycles = phases * pl.cq * (30 + 2 * pl.wps) / 2;
  s.per_row = std::max<int64_t>(1, cycles * 16 / std::max<int64_t>(pl.kq, 1));
  s.row = std::max<int64_t>(1, p.out_w);
  s.extra_rows = 1 + pl.row_halo;
  return s;
}

// The larger of a pair's positive and negative sums: what 255 times it must keep within int16.
int pair_load(int a, int b) {
  return std::max(std::max(a, 0) + std::max(b, 0), std::max(-a, 0) + std::max(-b, 0));
}

// True when no pair of these n weights can pass the bound: none is larger than half of it in
// magnitude (7-bit weights). One vectorized pass, so that loading an engine, which checks its
// maddubs layers again, does not walk every pair (ResNet-50: 25M weights, 117 ms pair by pair).
bool all_within_half_bound(const int8_t* w, int64_t n) {
  int amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::abs(static_cast<int>(w[i])));
  return amax <= kMaddubsPairBound / 2;
}

// The first pair past the bound of weights viewed as [outer, depth, inner], paired along depth:
// rows (2i, 2i + 1) at the same outer and inner index (a row without a partner pairs with 0).
struct PairOverflow {
  int64_t outer, row, inner;
  int a, b;
};
std::optional<PairOverflow> first_pair_overflow(const int8_t* w, int64_t outer, int64_t depth,
                                                int64_t inner) {
  if (all_within_half_bound(w, outer * depth * inner)) return std::nullopt;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r = 0; r + 1 < depth; r += 2) {
      const int8_t* row = w + (o * depth + r) * inner;
      for (int64_t i = 0; i < inner; ++i) {
        if (pair_load(row[i], row[inner + i]) > kMaddubsPairBound) {
          return PairOverflow{o, r, i, row[i], row[inner + i]};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

// --- implicit-GEMM convolution ---------------------------------------------------------------

QConvPlan plan_qconv(QIsa isa, const cpu::Conv2DParams& p, int threads) {
  QConvPlan pl;
  pl.isa = isa;
  pl.bl = qblocking(isa);
  pl.p = p;
  pl.mg = p.out_c / p.group;
  pl.cg = p.in_c / p.group;
  pl.cq = ceil_div(pl.cg, 4);
  pl.kq = p.k_h * p.k_w * pl.cq;
  pl.kqp = round_up(pl.kq, pl.bl.kq_step);
  // The padded width the valid outputs read, in columns of one stride phase.
  const int64_t wp = (p.out_w - 1) * p.stride_w + (p.k_w - 1) * p.dil_w + 1;
  pl.wps = ceil_div(wp, p.stride_w);
  pl.row_halo = (p.k_h - 1) * p.dil_h / p.stride_h;
  pl.nw = p.out_h * p.out_w;
  pl.flat = p.k_h == 1 && p.k_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
            p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
  // The weights' L2 budget pays off over a task's many pixel panels. An image of at most two
  // panels (7x7 outputs) streams its weights once per panel however its rows are cut (once in
  // all where panels_at_once, below, packs both first), and fewer row blocks copy its panels fewer
  // times: 2-thread 3x3 512->512 at 7x7 0.26 -> 0.24 ms.
  const bool few_panels = pl.nw <= 2 * pl.bl.nr;
  const int64_t m_cap =
      few_panels ? pl.mg
                 : kL2WeightBytes / std::max<int64_t>(pl.kqp * pl.bl.wq, 1) / pl.bl.mr * pl.bl.mr;
  // Wide rows whose quad planes fit kX4Bytes (at least one).
  const int64_t row_bytes = p.stride_h * p.stride_w * pl.cq * pl.wps * 4;
  const int64_t rows_cap = std::max<int64_t>(1, kX4Bytes / std::max<int64_t>(row_bytes, 1));
  const Split s = split_tasks(pl.mg, pl.nw, p.batch * p.group, pl.bl.mr, pl.bl.nr, m_cap,
                              rows_cap * p.out_w, threads, quad_plane_setup(pl));
  pl.mc = s.mc;
  pl.nc = s.nc;
  pl.m_blocks = s.m_blocks;
  pl.n_blocks = s.n_blocks;
  pl.tasks = pl.mg == 0 || pl.nw == 0 ? 0 : p.batch * p.group * pl.m_blocks * pl.n_blocks;
  // Where a task's weights exceed the L2 budget (7x7 and 14x14 images with their weights whole:
  // ResNet-50's layer4), two panels at once stream them half as often: kernel bench, 1 thread, 3
  // alternated rounds, 3x3 512@7 and s2 512@14 0.83x and 0.80x the time on AMX, 0.90x and 0.86x on
  // VNNI. Smaller weights stay in L2 and lost by it (3x3 64@56 1.14x on AMX).
  pl.panels_at_once = pl.mc * pl.kqp * pl.bl.wq > kL2WeightBytes ? kQConvMaxPanelsAtOnce : 1;
  // A block of nc output pixels spans at most ceil(nc / out_w) + 1 rows, plus the halo below.
  const int64_t rph = ceil_div(pl.nc, std::max<int64_t>(p.out_w, 1)) + 1 + pl.row_halo;
  // Slack: a panel's run copies whole vectors, up to 63 bytes past the run's end (which is within
  // a row). (A flat plan builds none.)
  pl.x4_bytes =
      pl.flat ? 0 : round64(p.stride_h * p.stride_w * pl.cq * rph * pl.wps * 4 + kQPanelCopySlack);
  // A phase row's lane t reads lane pad_left + t * stride + phase; a stride-2 gather reads 8 lanes
  // for 4 (qkernels_conv_impl.h's gather_quads); the interleave writes whole 16-lane groups.
  pl.qrow_lanes = p.pad_left + std::max(round_up(p.in_w, 16), (pl.wps + 4) * p.stride_w) + 16;
  return pl;
}

size_t qconv_packed_weights_bytes(QIsa isa, const cpu::Conv2DParams& p) {
  const QBlocking bl = qblocking(isa);
  const int64_t mg = p.out_c / p.group;
  const int64_t kq = round_up(p.k_h * p.k_w * ceil_div(p.in_c / p.group, 4), bl.kq_step);
  // The panels, then int32 sums of W per output channel and per output channel and kernel row.
  return round64(p.group * ceil_div(mg, bl.mr) * kq * bl.mr * bl.wq) +
         static_cast<size_t>(p.out_c * (1 + p.k_h)) * 4;
}

void qconv_pack_weights(QIsa isa, const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  if (isa == QIsa::kAvx512Vnni) return vnni::qconv_pack_weights(p, w, packed);
  if (isa == QIsa::kAmxInt8) return amx::qconv_pack_weights(p, w, packed);
  if (isa == QIsa::kAvx2Maddubs) return qavx2ubs::qconv_pack_weights(p, w, packed);
  return qavx2::qconv_pack_weights(p, w, packed);
}

size_t qconv_scratch_bytes(const QConvPlan& plan) {
  // The patch panel, build_x4's interleaved row, the quad planes, a task's rows' start, scale and
  // bias (qkernels_conv_impl.h).
  return plan.panels_at_once * round64(plan.kqp * plan.bl.nr * 4 + kQPanelCopySlack) +
         round64(plan.qrow_lanes * 4) + plan.x4_bytes + round64(plan.mc * 12);
}

void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
               int64_t task_end) {
  if (plan.isa == QIsa::kAvx512Vnni) {
    return vnni::qconv_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
  }
  if (plan.isa == QIsa::kAmxInt8) {
    return amx::qconv_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
  }
  if (plan.isa == QIsa::kAvx2Maddubs) {
    return qavx2ubs::qconv_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
  }
  return qavx2::qconv_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
}

std::string qconv_maddubs_overflow(const cpu::Conv2DParams& p, const int8_t* w) {
  const int64_t cg = p.in_c / p.group, khw = p.k_h * p.k_w;
  const std::optional<PairOverflow> f = first_pair_overflow(w, p.out_c, cg, khw);
  if (!f) return "";
  return fmt::format(
      "output channel {}, tap ({}, {}): input channels {} and {} weigh {} and {}, past "
      "vpmaddubsw's exact bound (same-sign pair sums of at most {})",
      f->outer, f->inner / p.k_w, f->inner % p.k_w, f->row, f->row + 1, f->a, f->b,
      kMaddubsPairBound);
}

std::string qdepthwise_maddubs_overflow(const cpu::Conv2DParams& p, const int8_t* w) {
  const std::optional<PairOverflow> f = first_pair_overflow(w, p.out_c * p.k_h, p.k_w, 1);
  if (!f) return "";
  return fmt::format(
      "output channel {}, kernel row {}: taps {} and {} weigh {} and {}, past vpmaddubsw's "
      "exact bound (same-sign pair sums of at most {})",
      f->outer / p.k_h, f->outer % p.k_h, f->row, f->row + 1, f->a, f->b, kMaddubsPairBound);
}

std::string qgemm_maddubs_overflow(const int8_t* b, int64_t k, int64_t n) {
  const std::optional<PairOverflow> f = first_pair_overflow(b, 1, k, n);
  if (!f) return "";
  return fmt::format(
      "column {}: rows {} and {} of B weigh {} and {}, past vpmaddubsw's exact bound "
      "(same-sign pair sums of at most {})",
      f->inner, f->row, f->row + 1, f->a, f->b, kMaddubsPairBound);
}

// --- depthwise -------------------------------------------------------------------------------

QDepthwisePlan plan_qdepthwise(QIsa isa, const cpu::Conv2DParams& p) {
  QDepthwisePlan pl;
  pl.isa = isa;
  pl.p = p;
  const PaddedPlane plane = padded_plane(p);
  pl.hp = plane.h;
  pl.wp = plane.w;
  pl.quads_w = ceil_div(p.k_w, 4);
  const int64_t taps = std::min<int64_t>(p.k_w, 4);
  pl.shuffle = p.stride_w <= 4 && 3 * p.stride_w + (taps - 1) * p.dil_w <= 15 && pl.quads_w <= 8;
  pl.tasks = p.out_h * p.out_w == 0 ? 0 : p.batch * p.out_c;
  return pl;
}

size_t qdepthwise_packed_weights_bytes(QIsa isa, const cpu::Conv2DParams& p) {
  return round64(p.out_c * p.k_h * ceil_div(p.k_w, 4) * qblocking(isa).wq) +
         static_cast<size_t>(p.out_c) * 4;
}

void qdepthwise_pack_weights(QIsa isa, const cpu::Conv2DParams& p, const int8_t* w,
                             uint8_t* packed) {
  if (isa == QIsa::kAvx512Vnni) return vnni::qdepthwise_pack_weights(p, w, packed);
  if (isa == QIsa::kAvx2Maddubs) return qavx2ubs::qdepthwise_pack_weights(p, w, packed);
  return qavx2::qdepthwise_pack_weights(p, w, packed);
}

size_t qdepthwise_scratch_bytes(const QDepthwisePlan& plan) {
  // Slack for the windows of the vectors past a row's last output (up to 4 vectors of lanes,
  // stride apart) read from the last row, plus a 64-byte window.
  const cpu::Conv2DParams& p = plan.p;
  const int64_t lanes = qblocking(plan.isa).lanes;
  const int64_t slack =
      (p.out_w + 4 * lanes) * p.stride_w + 4 * plan.quads_w * p.dil_w + 4 * p.dil_w + 128;
  return round64(plan.hp * plan.wp + slack);
}

void qdepthwise_run(const QDepthwisePlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
                    int64_t task_end) {
  if (plan.isa == QIsa::kAvx512Vnni) {
    return vnni::qdepthwise_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
  }
  if (plan.isa == QIsa::kAvx2Maddubs) {
    return qavx2ubs::qdepthwise_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
  }
  return qavx2::qdepthwise_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
}

// --- depthwise, channels in the lanes --------------------------------------------------------

namespace {
constexpr int64_t kLanesBandPixels = 512;  // a band's output pixels, about
}  // namespace

std::string qdepthwise_lanes_why_not(const cpu::Conv2DParams& p) {
  if (!is_depthwise(p) || p.out_c != p.in_c) {
    return fmt::format(
        "not a depthwise convolution with multiplier 1 ({} -> {} channels, group {})", p.in_c,
        p.out_c, p.group);
  }
  return "";
}

QDepthwiseLanesPlan plan_qdepthwise_lanes(const cpu::Conv2DParams& p, int threads) {
  QDepthwiseLanesPlan pl;
  pl.p = p;
  pl.quads_w = ceil_div(p.k_w, 4);
  pl.wq = (round_up(p.out_w, kQDwLanesBlock) - 1) * p.stride_w + (pl.quads_w - 1) * 4 * p.dil_w + 1;
  pl.wt = pl.wq + 3 * p.dil_w;
  // Reads start at ow * sw + 4 q dw: with 4 dw a multiple of sw (stride 2) only those quads are
  // built.
  pl.quad_step = (4 * p.dil_w) % p.stride_w == 0 ? p.stride_w : 1;
  pl.groups = ceil_div(p.out_c, kQDwLanesChannels);
  if (p.out_h * p.out_w == 0 || p.batch == 0) return pl;
  int64_t rows = std::clamp<int64_t>(ceil_div(kLanesBandPixels, p.out_w), 1, p.out_h);
  // At least 4 tasks a thread where the rows allow, so that the split stays even.
  while (rows > 1 && p.batch * pl.groups * ceil_div(p.out_h, rows) < 4 * int64_t{threads}) {
    rows = ceil_div(rows, 2);
  }
  pl.bands = ceil_div(p.out_h, rows);
  pl.band_rows = ceil_div(p.out_h, pl.bands);
  pl.bands = ceil_div(p.out_h, pl.band_rows);
  pl.in_rows = qdepthwise_lanes_in_rows(p, pl.band_rows);
  pl.tasks = p.batch * pl.groups * pl.bands;
  return pl;
}

size_t qdepthwise_lanes_packed_weights_bytes(const cpu::Conv2DParams& p) {
  return static_cast<size_t>(ceil_div(p.out_c, kQDwLanesChannels) *
                             qdepthwise_lanes_group_bytes(p));
}

void qdepthwise_lanes_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  vnni::qdepthwise_lanes_pack_weights(p, w, packed);
}

size_t qdepthwise_lanes_scratch_bytes(const QDepthwiseLanesPlan& plan) {
  return static_cast<size_t>(qdepthwise_lanes_scratch(plan).vectors) * 64;
}

void qdepthwise_lanes_run(const QDepthwiseLanesPlan& plan, const uint8_t* x,
                          const uint8_t* packed_w, const QEpilogue& ep, void* y, uint8_t* scratch,
                          int64_t task_begin, int64_t task_end) {
  vnni::qdepthwise_lanes_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
}

// --- convolution on channels-last tensors ----------------------------------------------------

std::string qconv_nhwc_why_not(const cpu::Conv2DParams& p) {
  if (p.group != 1) return fmt::format("group {}: one group only", p.group);
  if (p.in_c % 4 != 0) {
    return fmt::format(
        "{} input channels: a multiple of 4 only (a pixel's channels are read in "
        "quads, in place)",
        p.in_c);
  }
  return "";
}

// Threads split the output channels where every thread gets the same number of blocks and the
// weights outweigh the input by far and the L2 share (each thread then streams only its share of
// the weights and reads all of the input, half of it written by the other core), else the pixels,
// dealt out in whole tiles (each thread reads every weight, from L2 after its first tile).
// ResNet-50's 256 -> 1024 at 14x14 (256 KB of weights, 50 KB of input) split by channels ran
// 0.105-0.110 ms in the INT8 network, by pixels 0.083-0.085 (2 threads, 5 alternated profiles);
// its 3x3 256 at 14x14 (590 KB) and layer4's (1-2.4 MB) lose by pixels (0.15 -> 0.17, 0.18 ->
// 0.25 ms).
QConvNhwcPlan plan_qconv_nhwc(const cpu::Conv2DParams& p, int threads) {
  QConvNhwcPlan pl;
  pl.p = p;
  pl.oc_blocks = ceil_div(p.out_c, kQNhwcChannels);
  pl.pixels = p.batch * p.out_h * p.out_w;
  const int64_t tiles = ceil_div(pl.pixels, kQNhwcPixels);
  const int64_t block_bytes = kQNhwcChannels * p.k_h * p.k_w * p.in_c;
  const int64_t input_bytes = p.batch * p.in_h * p.in_w * p.in_c;
  const int64_t weight_bytes = pl.oc_blocks * block_bytes;
  const bool channels = threads > 1 && pl.oc_blocks % threads == 0 &&
                        weight_bytes > 4 * input_bytes && weight_bytes > kL2WeightBytes;
  const Blocks b = even_blocks(std::max<int64_t>(tiles, 1), channels ? 1 : threads, 1);
  pl.px_per_block = b.size * kQNhwcPixels;
  pl.px_blocks = b.count;
  pl.ob_tasks = channels ? threads : 1;
  pl.ob_per_task = pl.oc_blocks / pl.ob_tasks;
  pl.ob_inner = pl.ob_per_task * block_bytes <= kL2WeightBytes;
  pl.tasks = pl.pixels == 0 || p.out_c == 0 ? 0 : pl.px_blocks * pl.ob_tasks;
  return pl;
}

size_t qconv_nhwc_packed_weights_bytes(const cpu::Conv2DParams& p) {
  const int64_t blocks = ceil_div(p.out_c, kQNhwcChannels);
  return static_cast<size_t>(blocks * kQNhwcChannels * (p.k_h * p.k_w * p.in_c + 4));
}

void qconv_nhwc_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  vnni::qconv_nhwc_pack_weights(p, w, packed);
}

// Per channel block its epilogue constants and the accumulators' start per channel (-x_zero *
// its weight sum), then the row of x_zero that taps on padding read.
size_t qconv_nhwc_scratch_bytes(const QConvNhwcPlan& plan) {
  return static_cast<size_t>(plan.oc_blocks * (kQNhwcColsBytes + kQNhwcChannels * 4)) +
         round64(plan.p.in_c + 64);
}

void qconv_nhwc_run(const QConvNhwcPlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
                    int64_t task_end) {
  vnni::qconv_nhwc_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
}

// --- GEMM ------------------------------------------------------------------------------------

QGemmPlan plan_qgemm(QIsa isa, int64_t m, int64_t n, int64_t k, int threads) {
  QGemmPlan pl;
  pl.isa = isa;
  pl.bl = qblocking(isa);
  pl.m = m;
  pl.n = n;
  pl.k = k;
  pl.kq = ceil_div(k, 4);
  // A task's packed rows of A stay within the L2 share.
  const int64_t m_cap = kL2WeightBytes / std::max<int64_t>(pl.kq * 4, 1) / pl.bl.mr * pl.bl.mr;
  const Split s = split_tasks(m, n, 1, pl.bl.mr, pl.bl.nr, m_cap, n, threads);
  pl.mc = s.mc;
  pl.nc = s.nc;
  pl.m_blocks = s.m_blocks;
  pl.n_blocks = s.n_blocks;
  pl.tasks = m == 0 || n == 0 ? 0 : pl.m_blocks * pl.n_blocks;
  return pl;
}

size_t qgemm_packed_b_bytes(QIsa isa, int64_t k, int64_t n) {
  const QBlocking bl = qblocking(isa);
  const int64_t panels = ceil_div(std::max<int64_t>(n, 1), bl.nr);
  // One vector of a quad: 4 bytes per column (VNNI: 16 columns; AVX2: 8, as 16-bit pairs;
  // vpmaddubsw: 8, as bytes).
  const int64_t vec_bytes = bl.lanes * bl.wq;
  return round64(panels * ceil_div(k, 4) * (bl.nr / bl.lanes) * vec_bytes) +
         static_cast<size_t>(panels * bl.nr) * 4;
}

void qgemm_pack_b(QIsa isa, const int8_t* b, int64_t k, int64_t n, uint8_t* packed) {
  if (isa == QIsa::kAvx512Vnni) return vnni::qgemm_pack_b(b, k, n, packed);
  if (isa == QIsa::kAvx2Maddubs) return qavx2ubs::qgemm_pack_b(b, k, n, packed);
  return qavx2::qgemm_pack_b(b, k, n, packed);
}

size_t qgemm_scratch_bytes(const QGemmPlan& plan) {
  return round64(round_up(plan.mc, plan.bl.mr) * plan.kq * 4);
}

void qgemm_run(const QGemmPlan& plan, const uint8_t* a, const uint8_t* packed_b,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
               int64_t task_end) {
  if (plan.isa == QIsa::kAvx512Vnni) {
    return vnni::qgemm_run(plan, a, packed_b, ep, y, scratch, task_begin, task_end);
  }
  if (plan.isa == QIsa::kAvx2Maddubs) {
    return qavx2ubs::qgemm_run(plan, a, packed_b, ep, y, scratch, task_begin, task_end);
  }
  return qavx2::qgemm_run(plan, a, packed_b, ep, y, scratch, task_begin, task_end);
}

// --- QuantizeLinear / DequantizeLinear ---------------------------------------------------------

void quantize_per_tensor(QIsa isa, const float* x, float scale, int32_t zero, bool is_signed,
                         void* y, int64_t begin, int64_t end) {
  if (isa == QIsa::kAvx512Vnni)
    return vnni::quantize_per_tensor(x, scale, zero, is_signed, y, begin, end);
  return qavx2::quantize_per_tensor(x, scale, zero, is_signed, y, begin, end);
}

void dequantize_per_tensor(QIsa isa, const void* x, float scale, int32_t zero, bool is_signed,
                           float* y, int64_t begin, int64_t end) {
  if (isa == QIsa::kAvx512Vnni) {
    return vnni::dequantize_per_tensor(x, scale, zero, is_signed, y, begin, end);
  }
  return qavx2::dequantize_per_tensor(x, scale, zero, is_signed, y, begin, end);
}

// --- uint8 max pooling ----------------------------------------------------------------------

int64_t qmax_pool_buf_bytes(const cpu::Pool2DParams& p) {
  // The vertical pass writes whole 64-byte groups of the row after pad_left zeros; stride 1 reads
  // a 64-byte vector at every tap of every output group; stride 2 splits whole 128-byte groups
  // into the even and odd halves its taps read.
  const int64_t out = round_up(p.out_w, 64), reach = (p.k_w - 1) * p.dil_w;
  const int64_t taps = p.stride_w == 1 ? out + reach + 64 : 2 * round_up(out + reach / 2 + 1, 64);
  return round_up(std::max(p.pad_left + round_up(p.in_w, 64), taps), 128);
}

bool qmax_pool_applies(const cpu::Pool2DParams& p) {
  return (p.stride_w == 1 || p.stride_w == 2) && p.k_w >= 1 && p.dil_w >= 1 && p.dil_h >= 1 &&
         qmax_pool_buf_bytes(p) <= kQMaxPoolBufBytes;
}

void qmax_pool_nhwc_run(QIsa isa, const cpu::Pool2DParams& p, int64_t channels, const uint8_t* x,
                        uint8_t* y, int64_t row_begin, int64_t row_end) {
  assert(isa == QIsa::kAvx512Vnni);
  (void)isa;
  vnni::max_pool_nhwc_u8(p, channels, x, y, row_begin, row_end);
}

void qmax_pool_run(QIsa isa, const cpu::Pool2DParams& p, const uint8_t* x, uint8_t* y,
                   int64_t row_begin, int64_t row_end) {
  assert(isa == QIsa::kAvx512Vnni && qmax_pool_applies(p));
  (void)isa;
  vnni::max_pool_u8(p, x, y, row_begin, row_end);
}

}  // namespace kiln::kernels::x86
