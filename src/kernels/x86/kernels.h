#pragma once
// kiln's x86 SIMD kernels (AVX-512 and AVX2 + FMA), float32, NCHW: an implicit-GEMM convolution
// (1x1 and kxk, any stride, dilation, padding and group), a depthwise convolution and a GEMM with
// constant, prepacked B, all with a fused epilogue (scale, bias, addend, activation) applied to
// each register tile before it is stored.
//
// This header is ISA-neutral: the code behind it is one template (kernels_impl.h) instantiated in
// one translation unit per ISA (kernels_avx512.cc, kernels_avx2.cc), and these functions pick the
// instantiation by `Isa`. Callers must check the CPU (host_cpu_features()) before asking for an
// ISA.
//
// Like kernels/cpu, the kernels know parameter structs and pointers, never graphs; they are
// single-threaded and take task ranges: a plan splits the work into independent tasks, and the
// caller spreads [0, plan.tasks) over threads, giving each thread its own scratch. run functions
// never allocate, and flush denormals (FTZ/DAZ) while they run.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/conv.h"
#include "kernels/cpu/pool.h"
#include "kernels/ref/activation.h"

namespace kiln::kernels::x86 {

enum class Isa { kAvx2, kAvx512 };

// The fused activation is the reference's (kernels/ref/activation.h: formulas and parameters), so
// a node's activation attribute reaches the epilogue without a translation table.
using Act = kernels::ref::Activation;

// y[i, j] = act(alpha * acc[i, j] + row_bias[i] + col_bias[j] + addend_scale * addend(i, j)), with
// addend(i, j) = addend[i * addend_rs + j * addend_cs] (addend_cs is 0 or 1). Indices are the
// whole output's: a convolution's rows are output channels, its columns output pixels, its
// images follow each other (the conv kernels offset the pointers per image and group).
struct Epilogue {
  float alpha = 1.0f;
  const float* row_bias = nullptr;
  const float* col_bias = nullptr;
  const float* addend = nullptr;
  int64_t addend_rs = 0;
  int64_t addend_cs = 0;
  float addend_scale = 1.0f;
  Act act = Act::kNone;
  float act_alpha = 0.0f;
  float act_beta = 0.0f;
};

// The register tile and depth block of an ISA's GEMM microkernel.
struct Blocking {
  int64_t mr = 0;     // rows of the register tile
  int64_t nr = 0;     // columns (a multiple of the vector width)
  int64_t lanes = 0;  // floats per vector
  int64_t kc = 0;     // depth block (the largest; plans even out the blocks of a depth)
};
// The depth block keeps one B panel (kc x nr floats) at 16 KiB, half of L1, so that the A panel
// and C tile streaming past it do not evict it. AVX-512: 8 rows x 2 zmm = 16 accumulators.
inline constexpr Blocking kAvx512Blocking{8, 32, 16, 128};
// AVX2: 6 rows x 2 ymm = 12 accumulators of the 16 registers.
inline constexpr Blocking kAvx2Blocking{6, 16, 8, 256};
inline constexpr Blocking blocking(Isa isa) {
  return isa == Isa::kAvx512 ? kAvx512Blocking : kAvx2Blocking;
}

// --- implicit-GEMM convolution ---------------------------------------------------------------
// Per image and group, Y_g [Mg x OH*OW] = W_g [Mg x Cg*kh*kw] * patches [Cg*kh*kw x OH*OW]. The
// weights are packed once into MR-row panels; the patches are packed per depth block straight
// from the input into NR-column panels (no im2col buffer), zero where the window leaves the input.

struct ConvGemmPlan {
  Isa isa = Isa::kAvx512;
  Blocking bl;
  cpu::Conv2DParams p;
  bool flat = false;  // 1x1, stride 1, no padding: each channel is one contiguous row of pixels
  int64_t mg = 0;     // output channels per group
  int64_t kdim = 0;   // Cg * kh * kw
  int64_t n = 0;      // output pixels per image
  int64_t nc = 0;     // columns per task (a multiple of nr)
  int64_t mc = 0;     // rows per task (a multiple of mr)
  int64_t n_blocks = 0, m_blocks = 0;
  int64_t tasks = 0;  // batch * group * n_blocks * m_blocks
  // Loop order within a task: column panel outside the depth blocks when the task's weights fit
  // in L2 (they are re-read per panel, while the C tiles stay in L1), else depth block outside.
  bool depth_inner = true;
  // Other flat plans (neither whole_depth nor direct_b, below) pack B a block of flat_cols
  // columns (a multiple of nr) and one depth step at a time, one channel's pixels in one pass
  // (conv_gemm_scratch_floats sizes the block); each weight panel then runs over the block.
  int64_t flat_cols = 0;
  // Flat plans with few columns a task (7x7 planes): B packed once over the whole depth, then each
  // MR-row weight panel read once, front to back, for all the task's columns. Depth blocks would
  // read every panel in short pieces, once per column panel, which the prefetchers follow poorly
  // when the weights come from memory (a network's do: 1.2x slower than a lone layer's).
  bool whole_depth = false;
  // Also whole_depth: other flat plans with a shallow depth (at most 512), in blocks of depth_cols
  // columns packed over the whole depth; each weight panel then runs over the block and its tiles
  // store once. With depth blocks, ResNet-50's 256 -> 1024 layers on 14x14 planes kept a 512 KiB
  // A block per depth step and revisited a 512 KiB C block per step (all of L2): 1.09x as long
  // in the network. depth_cols: the columns of one packed block.
  int64_t depth_cols = 0;
  // Flat plans with few rows a task (at most 64) read B's full column panels in place (each
  // depth step one input row, pixels contiguous) over the whole depth: packing B, paid once per
  // column panel for few weight panels, took a third of a 32 -> 16 layer.
  bool direct_b = false;
};

ConvGemmPlan plan_conv_gemm(Isa isa, const cpu::Conv2DParams& p, int threads);
// The packed weights depend on out_c, in_c, group, k_h and k_w only.
size_t conv_gemm_packed_weights_floats(Isa isa, const cpu::Conv2DParams& p);
// w: [out_c, in_c / group, k_h, k_w].
void conv_gemm_pack_weights(Isa isa, const cpu::Conv2DParams& p, const float* w, float* packed);
size_t conv_gemm_scratch_floats(const ConvGemmPlan& plan);  // per thread, 64-byte aligned
// ep: row_bias [out_c]; addend = the residual of Y's shape (addend_rs = OH*OW, addend_cs = 1).
// The addend may be Y itself (in place; alpha and addend_scale 1): the tiles then start from Y's
// values instead of adding them in the epilogue, so no depth step overwrites a residual value
// before it is added.
void conv_gemm_run(const ConvGemmPlan& plan, const float* x, const float* packed_w,
                   const Epilogue& ep, float* y, float* scratch, int64_t task_begin,
                   int64_t task_end);

// --- depthwise convolution -------------------------------------------------------------------
// group == in_c and one input channel per group (out_c = in_c * multiplier). Each task is one
// output plane, computed over a "wide" grid whose every tap is one load at a fixed offset from
// the output lane (kernels_dw_impl.h): the zero-padded input plane is split into stride_h x
// stride_w phase planes of hq x wq, and output (oh, ow) is lane oh * wq + ow of the grid.

struct DepthwisePlan {
  Isa isa = Isa::kAvx512;
  cpu::Conv2DParams p;
  int64_t hq = 0, wq = 0;       // one phase plane
  int64_t phase_floats = 0;     // from one phase plane to the next (with the slack reads need)
  int64_t vectors = 0;          // of the wide grid [out_h x wq]
  std::vector<int64_t> taps;    // per tap kh * k_w + kw: its input's offset from the lane
  std::vector<int64_t> rows;    // per kh: the offset of window row kh's first column phase
  std::vector<uint32_t> masks;  // per vector of the grid: the lanes that are output pixels
  int64_t tasks = 0;            // batch * out_c
};
bool is_depthwise(const cpu::Conv2DParams& p);
DepthwisePlan plan_depthwise(Isa isa, const cpu::Conv2DParams& p);
size_t depthwise_scratch_floats(const DepthwisePlan& plan);  // per thread
// w: [out_c, 1, k_h, k_w] as it is; ep as for conv_gemm_run.
void depthwise_run(const DepthwisePlan& plan, const float* x, const float* w, const Epilogue& ep,
                   float* y, float* scratch, int64_t task_begin, int64_t task_end);

// --- convolutions on the blocked nChw16c layout (kernels/ref/layout.h) -----------------------
// X, Y and the residual are blocked: a block of 16 channels of one pixel is one AVX-512 vector (two
// AVX2 ones), so no kernel gathers or transposes. Pointwise: 1x1, group 1, no padding, any
// stride; a register tile of px_tile pixels x co_tile blocks accumulates over every input channel
// (one broadcast input value times a vector of 16 weights). Dense: group 1, any window, stride,
// dilation and padding (a direct convolution, no im2col): the same register tile over the pixels
// of one output row, accumulated over every tap and input channel; a tap in the padding reads
// zeros. Depthwise: group = in_c = out_c, any window, stride, dilation and padding; runs of output
// pixels of one block, one input vector per pixel and tap. The padding lanes of Y get act(0 +
// residual's padding).

struct Nchw16cConvPlan {
  Isa isa = Isa::kAvx512;
  cpu::Conv2DParams p;
  bool depthwise = false;
  bool dense = false;    // neither pointwise nor depthwise, or a plain X
  bool plain_x = false;  // dense only: X is NCHW (a first layer's few channels), Y blocked
  int64_t in_blocks = 0, out_blocks = 0;
  // Pointwise and dense: a tile is co_tile blocks (the last may be narrower) by px_tile pixels.
  // Pointwise and dense on a blocked X: a task is one co tile over a chunk of an image's output
  // pixels (nchw16c_chunk_range; `chunk` is the largest, a multiple of px_tile).
  int64_t co_tile = 0, co_tiles = 0, px_tile = 0, chunk = 0, chunks = 0;
  // Pointwise and dense: consecutive tasks share a co tile (its weights outweigh an image's input)
  // rather than a chunk of pixels. The (image, chunk) spans then split into `parts` contiguous
  // parts, one per thread, each running its co tiles over its own spans: a thread reads the input
  // pixels it (or the layer before, split the same way) wrote, not the other core's. With only a
  // few pixels a thread (nchw16c_plan.cc's kPixelsPerPart), one part: the threads' contiguous
  // ranges of tasks then split the co tiles.
  bool co_outer = false;
  int64_t parts = 1;
  // Pointwise co_outer plans whose co tile's weights fit twice in 3/4 of L2 (plan_nchw16c_conv's
  // l2_bytes): a thread's tiles bring the next co tile's weights into L2 while they run this one.
  bool prefetch_next = false;
  // Output columns [ow_lo, ow_hi) have every tap inside the input row (depthwise and a plain X's
  // dense tiles use it; ow_hi may be below ow_lo). Depthwise and dense on a plain X: a task is the
  // output rows of one chunk (nchw16c_row_range, at most `rows`) of one block (depthwise) or co
  // tile (dense) of one image.
  int64_t ow_lo = 0, ow_hi = 0, rows = 0, row_chunks = 0;
  int64_t tasks = 0;
  // Pointwise: floats from one block of Y to the next when Y is not a whole image (a band of
  // rows, nchw16c_expand_dw_run's); 0: the image's plane.
  int64_t y_plane = 0;
};

bool nchw16c_is_pointwise(const cpu::Conv2DParams& p);
bool nchw16c_is_depthwise(const cpu::Conv2DParams& p);
// Group 1 and not pointwise (a window, padding or dilation).
bool nchw16c_is_dense(const cpu::Conv2DParams& p);
// w: [out_c, in_c / group, k_h, k_w]. Packed: pointwise and dense [out_blocks][k_h * k_w][in_c][16]
// (pointwise: one tap), depthwise [out_blocks][k_h * k_w][16], lanes past out_c zero; the same for
// every ISA and plan.
size_t nchw16c_conv_packed_weights_floats(const cpu::Conv2DParams& p);
void nchw16c_conv_pack_weights(const cpu::Conv2DParams& p, const float* w, float* packed);
// plain_x: X is NCHW (not depthwise): the dense kernel runs it, a 1x1 too. l2_bytes: a core's L2
// (host_cache_sizes()), which a co tile's packed weights stay within where one block's do; 0: no
// bound.
Nchw16cConvPlan plan_nchw16c_conv(Isa isa, const cpu::Conv2DParams& p, int threads,
                                  bool plain_x = false, int64_t l2_bytes = 0);
// Pointwise and dense: task's co tile and (image, chunk) span. co_outer plans run a co tile over
// `shares` spans of a part in a row; this task is the share'th (shares is 0 otherwise).
struct Nchw16cTask {
  int64_t co_tile = 0, span = 0;
  int64_t share = 0, shares = 0;
};
Nchw16cTask nchw16c_task(const Nchw16cConvPlan& plan, int64_t task);
// Depthwise and dense on a plain X: output rows [first, second) of row chunk c, dealt out evenly.
std::pair<int64_t, int64_t> nchw16c_row_range(const Nchw16cConvPlan& plan, int64_t c);
// Pointwise and dense: output pixels [first, second) of chunk c, the image's px_tile tiles (the
// last may be shorter) dealt out so that two chunks differ by at most one tile; on a plain X, the
// pixels of row chunk c's rows.
std::pair<int64_t, int64_t> nchw16c_chunk_range(const Nchw16cConvPlan& plan, int64_t c);
// A run's tensors, all blocked but the bias.
struct Nchw16cConvIo {
  const float* x = nullptr;
  // Pointwise only: X's channels times these before the convolution (a squeeze-and-excitation's
  // scale, fused): Cp floats, for every image or (x_scale_per_image) one set per image. Null: none.
  const float* x_scale = nullptr;
  bool x_scale_per_image = false;
  const float* bias = nullptr;      // [out_c] or null
  const float* residual = nullptr;  // Y's shape, or null; may be y itself
  float* y = nullptr;
  // With x_scale: this thread's nchw16c_conv_scratch_floats(plan) floats.
  float* scratch = nullptr;
};
size_t nchw16c_conv_scratch_floats(const Nchw16cConvPlan& plan);
// ep: the activation fields only.
void nchw16c_conv_run(const Nchw16cConvPlan& plan, const float* packed_w, const Nchw16cConvIo& io,
                      const Epilogue& ep, int64_t task_begin, int64_t task_end);

// --- a pointwise convolution into a depthwise one, a band of rows at a time --------------------
// The depthwise convolution of a pointwise one's output (an inverted residual block's expansion
// and depthwise layers) without writing the expanded tensor: per band of the depthwise layer's
// output rows, the expansion rows it reads are computed into the thread's scratch (sized to stay
// in L2 with the band's output), and the depthwise kernel reads them there. Rows a band shares
// with the next (the window's halo) are computed again. Each output is bit-identical to the two
// layers run one after the other (the same tiles per pixel, the same order of sums).
struct Nchw16cExpandDwPlan {
  Nchw16cConvPlan pw, dw;    // pw: pointwise on a blocked X, planned for one thread
  int64_t band_rows = 0;     // depthwise output rows a band
  int64_t band_in_rows = 0;  // the most expansion rows a band reads
  int64_t row_chunks = 0;    // chunks of output rows an image, dealt out evenly
  int64_t tasks = 0;         // (image, row chunk)
};
// pw: 1x1, stride 1, unpadded, group 1; dw: depthwise with pw.out_c channels over pw's output.
// band_bytes: what a band's expansion rows may take (a share of a core's L2).
Nchw16cExpandDwPlan plan_nchw16c_expand_dw(Isa isa, const cpu::Conv2DParams& pw,
                                           const cpu::Conv2DParams& dw, int threads,
                                           int64_t band_bytes);
size_t nchw16c_expand_dw_scratch_floats(const Nchw16cExpandDwPlan& plan);
// Depthwise output rows [first, second) of row chunk c, dealt out evenly.
std::pair<int64_t, int64_t> nchw16c_expand_dw_row_range(const Nchw16cExpandDwPlan& plan, int64_t c);
struct Nchw16cExpandDwIo {
  const float* x = nullptr;         // pw's blocked X
  const float* pw_bias = nullptr;   // [pw out_c] or null
  const float* dw_bias = nullptr;   // [dw out_c] or null
  const float* residual = nullptr;  // the depthwise output's shape, or null
  float* y = nullptr;               // the depthwise output, blocked
  float* scratch = nullptr;         // this thread's nchw16c_expand_dw_scratch_floats
};
// pw_ep, dw_ep: the two layers' activations.
void nchw16c_expand_dw_run(const Nchw16cExpandDwPlan& plan, const float* pw_packed,
                           const float* dw_packed, const Nchw16cExpandDwIo& io,
                           const Epilogue& pw_ep, const Epilogue& dw_ep, int64_t task_begin,
                           int64_t task_end);

// --- Winograd convolution between nChw16c tensors ----------------------------------------------
// F(m x m, 3 x 3) (Lavin and Gray), m = 2, 3 or 4: for 3x3, stride-1, undilated, group-1
// convolutions. Each (m + 2)^2 input tile is transformed (B^T d B, in registers, 16 channels a
// vector), multiplied by the transformed weights (G g G^T, at engine build) as (m + 2)^2
// independent products over the channels, the pointwise kernel's register tiles, and transformed
// back (A^T M A) with bias, residual and activation before the only store: (m + 2)^2 / (9 m^2) of
// the direct convolution's multiplications (0.44x for m = 2, 0.31x for m = 3, 0.25x for m = 4), at
// the price of larger rounding errors (m = 4: about 1e-5 of the output's magnitude against 1e-7
// direct) and of the transforms' adds.
// Stride 2 (m = 2 only): the even and odd input columns and rows are separate correlations, the
// even ones with F(2, 2) (winograd_matrices.h); 5 x 5 input tiles, 25 products for 2 x 2 outputs
// (0.69x the direct multiplications), coefficients 0 and +-1 only.

// 3x3, dilation 1, group 1, stride `stride` on both axes (1, or 2 with m = 2).
bool winograd_applies(const cpu::Conv2DParams& p, int m, int stride);

struct WinogradPlan {
  Isa isa = Isa::kAvx512;
  cpu::Conv2DParams p;
  int m = 4;       // output tile side
  int stride = 1;  // the convolution's, 1 or 2
  int alpha = 6;   // input tile side, (m - 1) stride + 3
  int64_t in_blocks = 0, out_blocks = 0;
  int64_t tiles_w = 0, tiles = 0;  // per image: tiles_h * tiles_w
  // A task is (image, tile block, co group): it transforms a tile block's tiles of the input (all
  // its channels; winograd_tile_range, at most tile_block), then multiplies and transforms back
  // co_group output blocks, co_tile at a time (the register tile's width), px_tile tiles per
  // register tile.
  int64_t tile_block = 0, tile_blocks = 0;
  int64_t co_group = 0, co_groups = 0;
  int64_t co_tile = 0, px_tile = 0;
  int64_t tasks = 0;
  // Floats from one alpha^2 plane of the transformed input ([xi][cb][tile][16]) or of the
  // products ([xi][block][tile][16]) to the next: a tile's alpha^2 values are read or written
  // together, and plane sizes that are multiples of 4 KiB put them all in one L1 set.
  int64_t v_plane = 0, m_plane = 0;
};

// Packed: [alpha^2][out_blocks][in_c][16] (each transformed tap in the pointwise kernel's layout),
// lanes past out_c zero; the same for every ISA.
size_t winograd_packed_weights_floats(const cpu::Conv2DParams& p, int m, int stride);
void winograd_pack_weights(const cpu::Conv2DParams& p, int m, int stride, const float* w,
                           float* packed);
// p.stride_h is the plan's stride (winograd_applies).
WinogradPlan plan_winograd(Isa isa, const cpu::Conv2DParams& p, int m, int threads);
// Tiles [first, second) of tile block b: the image's tiles px_tile at a time, dealt out so that two
// blocks differ by at most px_tile tiles.
std::pair<int64_t, int64_t> winograd_tile_range(const WinogradPlan& plan, int64_t b);
// Per thread: the task's transformed input and one co tile's products.
size_t winograd_scratch_floats(const WinogradPlan& plan);
struct WinogradIo {
  const float* x = nullptr;         // blocked
  const float* bias = nullptr;      // [out_c] or null
  const float* residual = nullptr;  // Y's shape, or null; may be y itself
  float* y = nullptr;
  float* scratch = nullptr;  // this thread's winograd_scratch_floats(plan) floats
};
// ep: the activation fields only.
void winograd_run(const WinogradPlan& plan, const float* packed_w, const WinogradIo& io,
                  const Epilogue& ep, int64_t task_begin, int64_t task_end);

// --- GEMM with constant B --------------------------------------------------------------------
// C [m x n] (row stride ldc) = epilogue(A * B); A(i, p) = a[i * a_rs + p * a_cs]. B is packed once
// into NR-column panels over its whole depth.

struct GemmPlan {
  Isa isa = Isa::kAvx512;
  Blocking bl;
  int64_t m = 0, n = 0, k = 0;
  int64_t a_rs = 0, a_cs = 1, ldc = 0;
  int64_t mc = 0, nc = 0;
  int64_t m_blocks = 0, n_blocks = 0;
  int64_t tasks = 0;
  // A's rows are read in place by the register tile, not packed: a row-major A.
  bool direct_a() const { return a_cs == 1; }
};

GemmPlan plan_gemm(Isa isa, int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs,
                   int64_t ldc, int threads);
size_t gemm_packed_b_floats(Isa isa, int64_t k, int64_t n);
// B(p, j) = b[p * rs + j * cs].
void gemm_pack_b(Isa isa, const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                 float* packed);
size_t gemm_scratch_floats(const GemmPlan& plan);  // per thread
void gemm_run(const GemmPlan& plan, const float* a, const float* packed_b, const Epilogue& ep,
              float* c, float* scratch, int64_t task_begin, int64_t task_end);

// --- softmax ---------------------------------------------------------------------------------
// y = softmax of each of `rows` contiguous rows of n floats (x and y may be the same buffer).
// Within a few ulp of the reference (the vector exp); tiny probabilities flush to 0.
void softmax_rows(Isa isa, int64_t rows, int64_t n, const float* x, float* y);
// Softmax along a strided axis of x and y [outer, n, inner]: the n values inner apart at each of
// the positions [begin, end) of the outer * inner ones (x and y may be the same buffer).
void softmax_columns(Isa isa, int64_t n, int64_t inner, int64_t begin, int64_t end, const float* x,
                     float* y);

// --- element-wise activation -------------------------------------------------------------------
// y = ep's activation of n floats of x (x and y may be the same buffer); ep: the activation fields
// only. The same vector math as the fused epilogues (kernels_math.h's accuracy).
void activate(Isa isa, const Epilogue& ep, const float* x, float* y, int64_t n);

// --- max pooling on nChw16c ------------------------------------------------------------------
// kernels/cpu/nchw16c.h's max_pool_nchw16c (rows [row_begin, row_end) of pool2d_rows(p), plane
// fastest; p.planes counts channel blocks; NaN skipped; a window wholly in the padding gives
// lowest()) with a block's 16 lanes in AVX-512 or AVX2 vectors.
void max_pool_nchw16c(Isa isa, const cpu::Pool2DParams& p, const float* x, float* y,
                      int64_t row_begin, int64_t row_end);

// --- layer normalization ---------------------------------------------------------------------
// Each of `rows` contiguous rows of n floats normalised to mean 0 and variance 1 (epsilon added to
// the variance), times scale[n], plus bias[n] (may be null); each row's mean and 1 / std into
// mean_out / inv_std_out when not null: ONNX LayerNormalization with stash_type 1.
void layer_norm_rows(Isa isa, int64_t rows, int64_t n, const float* x, const float* scale,
                     const float* bias, float epsilon, float* y, float* mean_out,
                     float* inv_std_out);

// --- GEMM with constant FP16 B ------------------------------------------------------------------
// The same GEMM with B's panels stored as IEEE binary16 (an FP16 layer's weights: half the bytes
// read per inference, which is what a memory-bound GEMM at batch 1 waits on). The microkernel
// widens each B vector to float32 in registers (vcvtph2ps) and accumulates in float32, so the
// result is the float32 GEMM's with B rounded to binary16. Same layout and element count as
// gemm_pack_b (gemm_packed_b_floats elements, uint16_t each).
// B(p, j) = b[p * rs + j * cs], rounded to nearest even (overflow to +-inf, as the conversion).
// plan_gemm, except that a product of at most MR rows (batch-1 layers: B is read once per
// inference, so B's bandwidth is the time) takes its whole depth in one block: each B panel is then
// read as one contiguous run, which the hardware prefetcher follows, instead of a kc-row run per
// depth block (1.8x on a 1 x 2048 x 4096 product: 1.53 -> 0.83 ms, 2026-11-26).
GemmPlan plan_gemm_f16(Isa isa, int64_t m, int64_t n, int64_t k, int64_t a_rs, int64_t a_cs,
                       int64_t ldc, int threads);
void gemm_pack_b_f16(Isa isa, const float* b, int64_t rs, int64_t cs, int64_t k, int64_t n,
                     uint16_t* packed);
void gemm_run_f16(const GemmPlan& plan, const float* a, const uint16_t* packed_b,
                  const Epilogue& ep, float* c, float* scratch, int64_t task_begin,
                  int64_t task_end);

}  // namespace kiln::kernels::x86
