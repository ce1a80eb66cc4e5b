// The ISA-neutral half of kernels.h: plans (blocking and the split into tasks) and the dispatch
// to the instantiation the plan's Isa names. Built without ISA flags.
#include <algorithm>

#include "base/half.h"
#include "base/int_math.h"
#include "kernels/x86/isa_entry.h"
#include "kernels/x86/kernels.h"
#include "kernels/x86/plan_util.h"

namespace kiln::kernels::x86 {
namespace {

// Floats of one L2-resident block: the A block of a depth step and the C block a task revisits
// per depth step each stay within ~512 KiB of Cascade Lake's 1 MiB L2.
constexpr int64_t kL2BlockFloats = 128 * 1024;
// A flat convolution's packed B block (per thread): 128 KiB, a quarter of L2.
constexpr int64_t kFlatBlockFloats = 32 * 1024;
// The most columns a flat plan's task may have to pack B once over the whole depth
// (ConvGemmPlan::whole_depth): a 7x7 plane's 49 pixels, whether or not split over threads.
constexpr int64_t kWholeDepthMaxCols = 64;
// Shallow flat plans pack blocks of B of at most this many floats over the whole depth
// (ConvGemmPlan::depth_cols) when a block then has at least kShallowBlockMinCols columns (a
// depth of at most 512): each weight panel is read from L2 once per block, the block from L2
// once per weight panel.
constexpr int64_t kShallowBlockFloats = 64 * 1024;
constexpr int64_t kShallowBlockMinCols = 128;
// The most rows a flat plan's task may have to read B in place (ConvGemmPlan::direct_b): with
// more weight panels per column panel, packing pays for itself (64 -> 256 and 1024 -> 256 1x1
// layers measured slower in place).
constexpr int64_t kDirectBMaxRows = 64;

// Rows and columns per task: as large as the L2 budget allows (the A block of a depth step, and
// the C block a task revisits per depth step), then split as plan_util.h's split_tasks finds the
// slowest thread finishing first. Greedily halving columns first, as this did, left a 14x14
// layer's 2 threads 128 and 68 of its 196 pixels (the AVX2 tile's narrower panels then won). The
// C budget is per task, not per column block of all rows: ResNet-50's 256 -> 1024 layers on 14x14
// planes then split into 2 x 512 rows of all 196 pixels instead of 1024 rows of 128 and 68.
Split split_work(int64_t m, int64_t n, int64_t units, const Blocking& bl, int threads,
                 const BlockSetup& setup = {}) {
  const int64_t m1 = std::max<int64_t>(m, 1);
  const int64_t m_cap = std::max(bl.mr, kL2BlockFloats / bl.kc / bl.mr * bl.mr);
  const Blocks mb = even_blocks(m1, ceil_div(m1, m_cap), bl.mr);
  const int64_t n_cap = std::max(bl.nr, kL2BlockFloats / mb.size / bl.nr * bl.nr);
  return split_tasks(m, n, units, bl.mr, bl.nr, m_cap, n_cap, threads, setup, kL2BlockFloats);
}

// What a convolution task pays to pack its columns of B, in lanes per column (a lane: one output
// of the depth's FMAs, depth / 16 cycles; packing a column: depth floats at c cycles each, 16c
// lanes). A flat block is a contiguous copy. Patches gathered from a padded window cost about 2
// cycles a float on a stride-2 layer (perf: a quarter of ResNet-50's 3x3 stride-2 layer on one
// thread). Charged 32, the AVX2 tile split ResNet-50's 3x3 256-channel 14x14 layer over
// channels, each thread packing all patches, and ran slower on 2 threads than with its uneven
// column split (kernel bench: 1.6-2.3 ms -> 2.3-2.6); charged 64 it keeps the column split, while
// the AVX-512 tile (196 pixels: 128 + 68) still splits channels, and gains (2.3-3.0 -> 1.9-2.2).
BlockSetup conv_pack_setup(bool flat) { return {.per_col = flat ? 4 : 64}; }

// The depth blocks of a depth k: as few as the largest block allows, of equal size (a 600-deep
// product runs as 5 x 120, not 4 x 128 + 88).
Blocking even_depth(Blocking bl, int64_t k) {
  if (k > 0) bl.kc = ceil_div(k, ceil_div(k, bl.kc));
  return bl;
}

}  // namespace

// --- implicit-GEMM convolution ---------------------------------------------------------------

ConvGemmPlan plan_conv_gemm(Isa isa, const cpu::Conv2DParams& p, int threads) {
  ConvGemmPlan pl;
  pl.isa = isa;
  pl.p = p;
  pl.flat = p.k_h == 1 && p.k_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
            p.pad_left == 0 && p.out_h == p.in_h && p.out_w == p.in_w;
  pl.mg = p.out_c / p.group;
  pl.kdim = p.in_c / p.group * p.k_h * p.k_w;
  pl.n = p.out_h * p.out_w;
  pl.bl = even_depth(blocking(isa), pl.kdim);
  const Split s =
      split_work(pl.mg, pl.n, p.batch * p.group, pl.bl, threads, conv_pack_setup(pl.flat));
  pl.mc = s.mc;
  pl.nc = s.nc;
  pl.m_blocks = s.m_blocks;
  pl.n_blocks = s.n_blocks;
  pl.tasks = pl.mg == 0 || pl.n == 0 ? 0 : p.batch * p.group * pl.m_blocks * pl.n_blocks;
  pl.depth_inner = pl.mc * pl.kdim <= kL2BlockFloats;
  pl.flat_cols =
      std::min(pl.nc, std::max(pl.bl.nr, kFlatBlockFloats / pl.bl.kc / pl.bl.nr * pl.bl.nr));
  pl.whole_depth = pl.flat && pl.nc <= kWholeDepthMaxCols &&
                   pl.kdim * round_up(pl.nc, pl.bl.nr) <= kL2BlockFloats;
  pl.direct_b = pl.flat && !pl.whole_depth && pl.mc <= kDirectBMaxRows;
  pl.depth_cols = round_up(pl.nc, pl.bl.nr);
  if (pl.flat && !pl.whole_depth && !pl.direct_b && pl.kdim > pl.bl.kc) {
    const int64_t cols =
        std::min(pl.depth_cols, kShallowBlockFloats / pl.kdim / pl.bl.nr * pl.bl.nr);
    if (cols >= kShallowBlockMinCols) {
      pl.whole_depth = true;
      pl.depth_cols = cols;
    }
  }
  return pl;
}

size_t conv_gemm_packed_weights_floats(Isa isa, const cpu::Conv2DParams& p) {
  const Blocking bl = blocking(isa);
  const int64_t mg = p.out_c / p.group;
  const int64_t kdim = p.in_c / p.group * p.k_h * p.k_w;
  return static_cast<size_t>(p.group * round_up(mg, bl.mr) * kdim);
}

void conv_gemm_pack_weights(Isa isa, const cpu::Conv2DParams& p, const float* w, float* packed) {
  if (isa == Isa::kAvx512) return avx512::conv_gemm_pack_weights(p, w, packed);
  return avx2::conv_gemm_pack_weights(p, w, packed);
}

size_t conv_gemm_scratch_floats(const ConvGemmPlan& plan) {
  // One B panel, or a flat plan's block of panels (over the whole depth: whole_depth).
  if (plan.whole_depth) return static_cast<size_t>(plan.kdim * plan.depth_cols);
  if (plan.direct_b) return static_cast<size_t>(plan.kdim * plan.bl.nr);  // the tail panel
  return static_cast<size_t>(plan.bl.kc * std::max(plan.bl.nr, plan.flat_cols));
}

void conv_gemm_run(const ConvGemmPlan& plan, const float* x, const float* packed_w,
                   const Epilogue& ep, float* y, float* scratch, int64_t task_begin,
                   int64_t task_end) {
  if (plan.isa == Isa::kAvx512) {
    return avx512::conv_gemm_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
  }
  return avx2::conv_gemm_run(plan, x, packed_w, ep, y, scratch, task_begin, task_end);
}

// --- depthwise -------------------------------------------------------------------------------

bool is_depthwise(const cpu::Conv2DParams& p) {
  return p.group > 1 && p.group == p.in_c && p.out_c % p.group == 0;
}

DepthwisePlan plan_depthwise(Isa isa, const cpu::Conv2DParams& p) {
  const int64_t lanes = blocking(isa).lanes;
  const PaddedPlane plane = padded_plane(p);
  DepthwisePlan pl;
  pl.isa = isa;
  pl.p = p;
  pl.hq = ceil_div(plane.h, p.stride_h);
  pl.wq = ceil_div(plane.w, p.stride_w);
  // Past the plane: the lanes beyond the last output pixel read up to a vector and a row on,
  // the last row's zero tail (kernels_dw_impl.h) reaches up to a vector on, and the row-shift
  // kernel loads one more whole vector.
  pl.phase_floats = round_up(pl.hq * pl.wq + pl.wq + 2 * lanes, lanes);
  pl.vectors = ceil_div(p.out_h * pl.wq, lanes);
  for (int64_t kh = 0; kh < p.k_h; ++kh) {
    const int64_t r = kh * p.dil_h;
    pl.rows.push_back((r % p.stride_h) * p.stride_w * pl.phase_floats + r / p.stride_h * pl.wq);
    for (int64_t kw = 0; kw < p.k_w; ++kw) {
      const int64_t c = kw * p.dil_w;
      const int64_t phase = (r % p.stride_h) * p.stride_w + c % p.stride_w;
      pl.taps.push_back(phase * pl.phase_floats + r / p.stride_h * pl.wq + c / p.stride_w);
    }
  }
  for (int64_t v = 0; v < pl.vectors; ++v) {
    uint32_t mask = 0;
    for (int64_t l = 0; l < lanes; ++l) {
      const int64_t q = v * lanes + l;
      if (q < p.out_h * pl.wq && q % pl.wq < p.out_w) mask |= 1u << l;
    }
    pl.masks.push_back(mask);
  }
  pl.tasks = p.out_h * p.out_w == 0 ? 0 : p.batch * p.out_c;
  return pl;
}

size_t depthwise_scratch_floats(const DepthwisePlan& plan) {
  // Two sets of phase planes (the next channel's are filled while this one's are read).
  return static_cast<size_t>(2 * plan.p.stride_h * plan.p.stride_w * plan.phase_floats);
}

void depthwise_run(const DepthwisePlan& plan, const float* x, const float* w, const Epilogue& ep,
                   float* y, float* scratch, int64_t task_begin, int64_t task_end) {
  if (plan.isa == Isa::kAvx512) {
    return avx512::depthwise_run(plan, x, w, ep, y, scratch, task_begin, task_end);
  }
  return avx2::depthwise_run(plan, x, w, ep, y, scratch, task_begin, task_end);
}

// --- GEMM ------------------------------------------------------------------------------------

GemmPlan plan_gemm(Isa isa, int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs,
                   int64_t ldc, int threads) {
  GemmPlan pl;
  pl.isa = isa;
  pl.bl = even_depth(blocking(isa), k);
  pl.m = m;
  pl.n = n;
  pl.k = k;
  pl.a_rs = a_rs;
  pl.a_cs = a_cs;
  pl.ldc = ldc;
  const Split s = split_work(m, n, 1, pl.bl, threads);
  pl.mc = s.mc;
  pl.nc = s.nc;
  pl.m_blocks = s.m_blocks;
  pl.n_blocks = s.n_blocks;
  pl.tasks = m == 0 || n == 0 ? 0 : pl.m_blocks * pl.n_blocks;
  return pl;
}

size_t gemm_packed_b_floats(Isa isa, int64_t k, int64_t n) {
  return static_cast<size_t>(round_up(std::max<int64_t>(n, 1), blocking(isa).nr) * k);
}

void gemm_pack_b(Isa isa, const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                 float* packed) {
  if (isa == Isa::kAvx512) return avx512::gemm_pack_b(b, rs, cs, k, n, packed);
  return avx2::gemm_pack_b(b, rs, cs, k, n, packed);
}

size_t gemm_scratch_floats(const GemmPlan& plan) {
  // The packed A block of a depth step; none when A is read in place.
  return plan.direct_a() ? 0 : static_cast<size_t>(plan.mc * plan.bl.kc);
}

void gemm_run(const GemmPlan& plan, const float* a, const float* packed_b, const Epilogue& ep,
              float* c, float* scratch, int64_t task_begin, int64_t task_end) {
  if (plan.isa == Isa::kAvx512) {
    return avx512::gemm_run(plan, a, packed_b, ep, c, scratch, task_begin, task_end);
  }
  return avx2::gemm_run(plan, a, packed_b, ep, c, scratch, task_begin, task_end);
}

GemmPlan plan_gemm_f16(Isa isa, int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs,
                       int64_t ldc, int threads) {
  GemmPlan pl = plan_gemm(isa, m, n, k, a_rs, a_cs, ldc, threads);
  if (m <= pl.bl.mr && k > 0) pl.bl.kc = k;
  return pl;
}

// Packing is ISA-neutral (the layout depends on NR only), so it is written once, here, with the
// portable conversion: it runs once per engine load, not per inference.
void gemm_pack_b_f16(Isa isa, const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                     uint16_t* packed) {
  const int64_t nr = blocking(isa).nr;
  for (int64_t j = 0; j < n; j += nr) {
    const int64_t cols = std::min(nr, n - j);
    uint16_t* d = packed + (j / nr) * k * nr;
    for (int64_t p = 0; p < k; ++p, d += nr) {
      const float* src = b + p * rs + j * cs;
      int64_t q = 0;
      for (; q < cols; ++q) d[q] = Half::float_to_half_bits(src[q * cs]);
      for (; q < nr; ++q) d[q] = 0;
    }
  }
}

void gemm_run_f16(const GemmPlan& plan, const float* a, const uint16_t* packed_b,
                  const Epilogue& ep, float* c, float* scratch, int64_t task_begin,
                  int64_t task_end) {
  if (plan.isa == Isa::kAvx512) {
    return avx512::gemm_run_f16(plan, a, packed_b, ep, c, scratch, task_begin, task_end);
  }
  return avx2::gemm_run_f16(plan, a, packed_b, ep, c, scratch, task_begin, task_end);
}

void softmax_rows(Isa isa, int64_t rows, int64_t n, const float* x, float* y) {
  if (isa == Isa::kAvx512) return avx512::softmax_rows(rows, n, x, y);
  return avx2::softmax_rows(rows, n, x, y);
}

void softmax_columns(Isa isa, int64_t n, int64_t inner, int64_t begin, int64_t end, const float* x,
                     float* y) {
  if (isa == Isa::kAvx512) return avx512::softmax_columns(n, inner, begin, end, x, y);
  return avx2::softmax_columns(n, inner, begin, end, x, y);
}

void activate(Isa isa, const Epilogue& ep, const float* x, float* y, int64_t n) {
  if (isa == Isa::kAvx512) return avx512::activate(ep, x, y, n);
  return avx2::activate(ep, x, y, n);
}

void max_pool_nchw16c(Isa isa, const cpu::Pool2DParams& p, const float* x, float* y,
                      int64_t row_begin, int64_t row_end) {
  if (isa == Isa::kAvx512) return avx512::max_pool_nchw16c(p, x, y, row_begin, row_end);
  return avx2::max_pool_nchw16c(p, x, y, row_begin, row_end);
}

void layer_norm_rows(Isa isa, int64_t rows, int64_t n, const float* x, const float* scale,
                     const float* bias, float epsilon, float* y, float* mean_out,
                     float* inv_std_out) {
  if (isa == Isa::kAvx512) {
    return avx512::layer_norm_rows(rows, n, x, scale, bias, epsilon, y, mean_out, inv_std_out);
  }
  return avx2::layer_norm_rows(rows, n, x, scale, bias, epsilon, y, mean_out, inv_std_out);
}

}  // namespace kiln::kernels::x86
