#pragma once
// kiln's x86 INT8 kernels: uint8 activations (per-tensor zero point) times int8 symmetric weights
// (one scale per output channel or column), accumulated exactly in int32, with the whole float
// epilogue of kiln.QConv / kiln.QGemm (ops/kiln_quant.h) applied in registers before the only
// store: scale, bias, residual (float, or uint8 dequantized), activation, then a float32 store or
// a requantization to uint8. NCHW, like the engine, but for one channels-last convolution
// (kiln.QConvNhwc's).
//
//   implicit-GEMM convolution  any 1-D / 2-D convolution (depthwise ones have their own kernel)
//   depthwise convolution      group == in_c, one input channel per group
//   GEMM                       Y [m, n] = A [m, k] (uint8, row-major) x B [k, n] (int8, prepacked)
//   channels-last convolution  kiln.QConvNhwc, AVX-512 VNNI only (qkernels_nhwc_impl.h)
//
// Four ISAs, one translation unit each (qkernels_vnni.cc, qkernels_amx.cc, qkernels_avx2.cc,
// qkernels_avx2_maddubs.cc), the same templates:
//   kAvx512Vnni  vpdpbusd: 4 u8 x s8 products summed into each int32 lane, 16 lanes per zmm.
//   kAmxInt8     the implicit-GEMM convolution only: tdpbsud, a 16 x 16 int32 tile of 16 output
//                channels x 16 pixels += 16 x 64 s8 weights times 64 x 16 u8 patch bytes (16
//                quads), 8x vpdpbusd's products per cycle; the epilogue is the VNNI one.
//   kAvx2        the exact equivalent on AVX2: the u8 operand split into its even and odd bytes
//                (16-bit lanes), the s8 one sign-extended to 16 bits when packed, two vpmaddwd.
//                (vpmaddubsw would saturate its 16-bit pair sums: 255 * 127 * 2 > 32767.)
//   kAvx2Maddubs vpmaddubsw, then vpmaddwd by ones: 3 instructions per 32 products where kAvx2
//                issues 4, for weights whose pair sums cannot saturate (q*_maddubs_overflow
//                below): exact too. Convolutions and GEMM (the quantize kernels are kAvx2's).
// The integer result is bit-exact to the reference (kernels/ref/qconv.h); the epilogue follows
// its order of float operations but divides by y_scale as a multiplication by 1 / y_scale, and
// the activations are kernels_math.h's approximations (see README.md, "INT8").
//
// As for the float kernels: plans split the work into tasks, run functions are single-threaded
// over a task range with caller-provided scratch, never allocate, and flush denormals.

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/int_math.h"
#include "kernels/cpu/conv.h"
#include "kernels/cpu/pool.h"
#include "kernels/ref/qconv.h"

namespace kiln::kernels::x86 {

enum class QIsa { kAvx2, kAvx512Vnni, kAvx2Maddubs, kAmxInt8 };

// The epilogue of every INT8 kernel is the reference's (kernels/ref/qconv.h: fields and order of
// float operations), so the tactics hand a layer's epilogue over without a copy. Per output
// element with channel (conv) or column (GEMM) c and flat index i into Y (the residual is read at
// the same i):
//   v = act(float(acc) * (in_scale * w_scale[c]) + bias[c] + z[i]),  z[i] = z_f32[i] or
//   (z_u8[i] - z_zero) * z_scale; y[i] = v, or clamp(rne(v * (1 / y_scale)) + y_zero, 0, 255).
// in_zero (0..255) is also the value padded positions read; w_scale is required.
using QEpilogue = kernels::ref::QuantEpilogue;

// The register tile: mr rows (output channels; GEMM: rows of A) x nr columns (output pixels;
// GEMM: columns of B), lanes int32 per vector. Depth runs in quads: 4 consecutive k per lane.
struct QBlocking {
  int64_t mr = 0, nr = 0, lanes = 0;
  int64_t wq = 0;  // bytes of one row's quad in a packed weight panel (the AVX2 form is 16-bit)
  int64_t kq_step = 1;  // the depth loop's step in quads: the weights are zero-padded to it
};
// AVX-512: 8 rows x 3 zmm = 24 accumulators, 3 patch vectors, weights broadcast from memory.
inline constexpr QBlocking kVnniBlocking{8, 48, 16, 4};
// AVX2: 4 rows x 2 ymm = 8 accumulators, 4 split patch vectors, 2 broadcast weights.
inline constexpr QBlocking kQAvx2Blocking{4, 16, 8, 8};
// AVX2 with vpmaddubsw: the same tile, the weights' quads as their 4 bytes.
inline constexpr QBlocking kQAvx2MaddubsBlocking{4, 16, 8, 4};
// AMX: 2 x 2 tiles of 16 x 16 int32 (32 rows x 32 pixels), 16 quads (64 bytes) of depth a step.
inline constexpr QBlocking kAmxBlocking{32, 32, 16, 4, 16};
inline constexpr QBlocking qblocking(QIsa isa) {
  return isa == QIsa::kAvx512Vnni ? kVnniBlocking
         : isa == QIsa::kAvx2     ? kQAvx2Blocking
         : isa == QIsa::kAmxInt8  ? kAmxBlocking
                                  : kQAvx2MaddubsBlocking;
}

// vpmaddubsw sums two u8 x s8 products into a saturating int16: exact for every u8 pair when the
// pair's positive weights, and its negative ones, each add up to at most 128 in magnitude
// (255 * 128 = 32640 <= 32767). The pairs are the packed quads' bytes 0-1 and 2-3: consecutive
// input channels (convolution, from a multiple of 4, at one tap), taps along a kernel row
// (depthwise, from a multiple of 4) or depth rows (GEMM's B). "" when every pair qualifies, else
// the first pair that does not, named.
std::string qconv_maddubs_overflow(const cpu::Conv2DParams& p, const int8_t* w);
std::string qdepthwise_maddubs_overflow(const cpu::Conv2DParams& p, const int8_t* w);
std::string qgemm_maddubs_overflow(const int8_t* b, int64_t k, int64_t n);
inline constexpr int kMaddubsPairBound = 128;

// --- implicit-GEMM convolution ---------------------------------------------------------------
// Per image and group, Y_g [Mg x OH*OW] = W_g [Mg x KH*KW*Cg] x patches, the depth ordered
// (kh, kw, channel) so that a quad is 4 channels at one tap.
//
// A task first rewrites its rows of the input as "quad planes" (X4): 4 channels interleaved per
// pixel (one int32 lane), padded with x_zero, split into stride phases (stride 2: even and odd
// rows and columns apart), rows of `wps` lanes (the padded phase width). In X4 the quads of a tap
// for consecutive output pixels of one row are consecutive int32s. Per NR output pixels (in Y's
// order, so a panel may span several output rows), the patches are then copied from X4 into the
// thread's panel, one run per output row and quad, and every MR-row weight panel of the task runs
// against it (against two panels in turn where QConvPlan::panels_at_once is 2). (An earlier
// "wide" grid computed rows of wps pixels and dropped the columns past out_w: on 14x14 images that
// left an eighth of the lanes idle, on 28x28 a fifteenth.) The
// weights are packed once into MR-row panels of quads (channels padded with zero weights),
// followed by each output channel's weight sum: the accumulators start at -x_zero * sum W, so the
// inner loop multiplies raw uint8 values.

struct QConvPlan {
  QIsa isa = QIsa::kAvx512Vnni;
  QBlocking bl;
  cpu::Conv2DParams p;
  int64_t mg = 0;          // output channels per group
  int64_t cg = 0;          // input channels per group
  int64_t cq = 0;          // channel quads per group: ceil(cg / 4)
  int64_t kq = 0;          // depth quads: k_h * k_w * cq
  int64_t kqp = 0;         // kq rounded up to bl.kq_step: the packed weights' and panels' depth
  int64_t wps = 0;         // a quad plane row: the padded width of one column phase
  int64_t row_halo = 0;    // phase rows a block reads below its last output row: (kh - 1) dh / sh
  int64_t nw = 0;          // output pixels per image: out_h * out_w
  bool flat = false;       // 1x1, stride 1, unpadded: panels straight from X (no quad planes)
  int64_t mc = 0, nc = 0;  // rows (a multiple of mr) and output pixels (of nr) per task
  int64_t m_blocks = 0, n_blocks = 0;
  int64_t tasks = 0;  // batch * group * n_blocks * m_blocks
  // Patch panels packed before the task's weight panels run over each of them (1 or
  // kQConvMaxPanelsAtOnce; the thread's scratch holds that many): 2 where a task's weights pass
  // the L2 budget, which then stream once per two panels.
  int panels_at_once = 1;
  size_t x4_bytes = 0;  // a task's quad planes, slack included
  // build_x4's interleaved input row: pad_left lanes of x_zero, the row's in_w quads, then
  // x_zero lanes as far as any phase row's gather reads.
  int64_t qrow_lanes = 0;
};

// Bytes past the patch panel and past the quad planes that a panel's runs (copied in whole
// vectors of up to 64 bytes) may write and read.
inline constexpr int64_t kQPanelCopySlack = 64;

// The most patch panels a task packs before its weight panels run over them
// (QConvPlan::panels_at_once).
inline constexpr int kQConvMaxPanelsAtOnce = 2;

QConvPlan plan_qconv(QIsa isa, const cpu::Conv2DParams& p, int threads);
// The packed weights (and weight sums) depend on out_c, in_c, group, k_h and k_w only.
size_t qconv_packed_weights_bytes(QIsa isa, const cpu::Conv2DParams& p);
// w: [out_c, in_c / group, k_h, k_w].
void qconv_pack_weights(QIsa isa, const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
size_t qconv_scratch_bytes(const QConvPlan& plan);  // per thread, 64-byte aligned
// y: float* or uint8_t* (ep.out_u8); residuals have Y's shape.
void qconv_run(const QConvPlan& plan, const uint8_t* x, const uint8_t* packed_w,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
               int64_t task_end);

// --- depthwise convolution -------------------------------------------------------------------
// group == in_c (out_c = in_c * multiplier). A task is one output plane: the input plane is
// copied into a scratch plane padded with x_zero, then 16 (AVX2: 8) output pixels at a time form,
// per kernel row and quad of taps, their 4 input bytes in each int32 lane with one byte shuffle
// of a 64-byte window, and one dot product per quad accumulates them (a 3x3 kernel: 3 per row of
// 16 pixels). Geometries whose taps do not fit one window (stride + dilation > 5) gather bytes.

struct QDepthwisePlan {
  QIsa isa = QIsa::kAvx512Vnni;
  cpu::Conv2DParams p;
  int64_t hp = 0, wp = 0;  // the padded plane
  int64_t quads_w = 0;     // quads of taps per kernel row: ceil(k_w / 4)
  bool shuffle = false;    // the taps of 4 neighbouring pixels fit a 16-byte window
  int64_t tasks = 0;       // batch * out_c
};
// Depthwise layers (kernels.h's is_depthwise) take plan_qdepthwise.
QDepthwisePlan plan_qdepthwise(QIsa isa, const cpu::Conv2DParams& p);
size_t qdepthwise_packed_weights_bytes(QIsa isa, const cpu::Conv2DParams& p);
void qdepthwise_pack_weights(QIsa isa, const cpu::Conv2DParams& p, const int8_t* w,
                             uint8_t* packed);
size_t qdepthwise_scratch_bytes(const QDepthwisePlan& plan);
void qdepthwise_run(const QDepthwisePlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
                    int64_t task_end);

// --- depthwise convolution, channels in the lanes (AVX-512 VNNI only) ----------------------------
// The plane-by-plane kernel above pays per channel (padding the plane, its setup, a short last
// vector per row: a 7x7 plane fills 7 of 16 lanes), which small planes with many channels (7x7,
// 14x14) multiply. Here a task is 16 channels (one int32 lane each) and a band of output rows of
// one image. Its input rows are byte-transposed into pixels x 16 channels (padding x_zero), and
// from those into "tap quads": per pixel p and channel, the bytes of pixels p, p + dw, p + 2 dw,
// p + 3 dw, so that one vpdpbusd adds 4 taps of a kernel row for 16 channels (a 3x3 kernel: 3 per
// output pixel, a 5x5 one 10). The accumulators start at -x_zero * sum W like every INT8 kernel
// here. uint8 out without a residual is requantized in the lanes and byte-transposed back to the
// planes; every other epilogue gets the sums transposed to each channel's row of the band, which
// is contiguous in Y's plane, and finished by the plane kernel's. Multiplier 1 only.

struct QDepthwiseLanesPlan {
  cpu::Conv2DParams p;
  int64_t quads_w = 0;    // quads of taps per kernel row: ceil(k_w / 4)
  int64_t wq = 0;         // tap quads per scratch row: every block of 8 output pixels' reads
  int64_t wt = 0;         // pixels of the byte-transposed row the quads read: wq + 3 dw
  int64_t quad_step = 1;  // stride_w where every quad read starts on a multiple of it, else 1
  int64_t groups = 0;     // ceil(out_c / 16)
  int64_t band_rows = 0;  // output rows per task
  int64_t bands = 0;
  int64_t in_rows = 0;  // padded input rows a band reads
  int64_t tasks = 0;    // batch * groups * bands
};
// Channels a task (an int32 lane each) and output pixels a register block.
inline constexpr int64_t kQDwLanesChannels = 16;
inline constexpr int64_t kQDwLanesBlock = 8;
// The padded input rows `rows` output rows read.
inline int64_t qdepthwise_lanes_in_rows(const cpu::Conv2DParams& p, int64_t rows) {
  return (rows - 1) * p.stride_h + (p.k_h - 1) * p.dil_h + 1;
}
// A group's packed weights: k_h x ceil(k_w / 4) vectors of 16 channels' tap quads, then their 16
// int32 weight sums, 64 bytes each.
inline int64_t qdepthwise_lanes_group_bytes(const cpu::Conv2DParams& p) {
  return (p.k_h * ceil_div(p.k_w, 4) + 1) * 64;
}
// A thread's scratch, in 64-byte vectors from its start: the band's tap-quad rows; one
// byte-transposed row (16 bytes a pixel) at `row`; the sums per pixel at `sums` (a block of 8 may
// run 8 pixels past the band, a transpose reads 16 at a time); the sums per channel at `chan`,
// rows of `pitch` int32 pixels.
struct QDwLanesScratch {
  int64_t row = 0, sums = 0, chan = 0, vectors = 0;
  int64_t pitch = 0;
};
inline QDwLanesScratch qdepthwise_lanes_scratch(const QDepthwiseLanesPlan& plan) {
  QDwLanesScratch s;
  s.pitch = round_up(plan.band_rows * plan.p.out_w, kQDwLanesChannels);
  s.row = plan.in_rows * plan.wq;
  s.sums = s.row + ceil_div(plan.wt, 4);
  s.chan = s.sums + s.pitch + kQDwLanesChannels;
  s.vectors = s.chan + s.pitch;  // 16 int32 a vector: pitch vectors hold 16 channels' rows
  return s;
}
// "" when the kernel runs p, else why not.
std::string qdepthwise_lanes_why_not(const cpu::Conv2DParams& p);
QDepthwiseLanesPlan plan_qdepthwise_lanes(const cpu::Conv2DParams& p, int threads);
size_t qdepthwise_lanes_packed_weights_bytes(const cpu::Conv2DParams& p);
void qdepthwise_lanes_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
size_t qdepthwise_lanes_scratch_bytes(const QDepthwiseLanesPlan& plan);
void qdepthwise_lanes_run(const QDepthwiseLanesPlan& plan, const uint8_t* x,
                          const uint8_t* packed_w, const QEpilogue& ep, void* y, uint8_t* scratch,
                          int64_t task_begin, int64_t task_end);

// --- convolution on channels-last tensors (AVX-512 VNNI only) ---------------------------------
// kiln.QConvNhwc: X [N, H, W, C] uint8 (C a multiple of 4), W [M, C, KH, KW], Y (and a residual)
// [N, OH, OW, M]; one group, any window, stride, padding and dilation. An indirect convolution
// (qkernels_nhwc_impl.h): a register tile of up to kQNhwcPixels output pixels x 64 output
// channels (4 zmm each, 24 accumulators); per tap, each pixel reads its input pixel's channels in
// place (or a row of x_zero where the tap falls on padding), per channel quad the 4 weight vectors
// are loaded once and each pixel's 4 bytes broadcast against them. Nothing is packed per run: the
// implicit-GEMM kernel above builds quad planes and patch panels first, which on channels-last
// data would be a transpose. The weights are packed once into blocks of 64 output channels (per
// tap and channel quad, 64 channels' 4 bytes), then every channel's weight sum.
inline constexpr int64_t kQNhwcPixels = 6;
inline constexpr int64_t kQNhwcChannels = 64;
// A channel block's epilogue constants in the scratch (8 vectors and their lanes).
inline constexpr int64_t kQNhwcColsBytes = 640;

struct QConvNhwcPlan {
  cpu::Conv2DParams p;
  int64_t oc_blocks = 0;     // ceil(out_c / 64)
  int64_t pixels = 0;        // batch * out_h * out_w
  int64_t px_per_block = 0;  // output pixels a task runs (a multiple of kQNhwcPixels)
  int64_t px_blocks = 0;
  int64_t ob_per_task = 0;  // channel blocks a task runs
  int64_t ob_tasks = 0;     // oc_blocks / ob_per_task
  // A task runs its channel blocks tile by tile (each tile's input read once for all of them)
  // where their weights fit the L2 share, else block by block (each block's weights stay in L2
  // while the tiles stream).
  bool ob_inner = true;
  int64_t tasks = 0;  // px_blocks * ob_tasks: task t is pixel block t / ob_tasks
};
// "" when the kernel runs p, else why not.
std::string qconv_nhwc_why_not(const cpu::Conv2DParams& p);
QConvNhwcPlan plan_qconv_nhwc(const cpu::Conv2DParams& p, int threads);
size_t qconv_nhwc_packed_weights_bytes(const cpu::Conv2DParams& p);
// w: [out_c, in_c, k_h, k_w].
void qconv_nhwc_pack_weights(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed);
size_t qconv_nhwc_scratch_bytes(const QConvNhwcPlan& plan);
// x, y and the residual channels-last; y uint8_t* or float* (ep.out_u8).
void qconv_nhwc_run(const QConvNhwcPlan& plan, const uint8_t* x, const uint8_t* packed_w,
                    const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
                    int64_t task_end);

// --- GEMM ------------------------------------------------------------------------------------
// Y [m x n] (row-major) = A [m x k] (row-major uint8) x B [k x n] (int8). B is packed once into
// NR-column panels of depth quads, followed by each column's weight sum; the rows of a task's A
// are packed into MR-row panels of quads (the depth tail zero) in the thread's scratch.

struct QGemmPlan {
  QIsa isa = QIsa::kAvx512Vnni;
  QBlocking bl;
  int64_t m = 0, n = 0, k = 0, kq = 0;
  int64_t mc = 0, nc = 0;
  int64_t m_blocks = 0, n_blocks = 0;
  int64_t tasks = 0;
};

QGemmPlan plan_qgemm(QIsa isa, int64_t m, int64_t n, int64_t k, int threads);
size_t qgemm_packed_b_bytes(QIsa isa, int64_t k, int64_t n);
void qgemm_pack_b(QIsa isa, const int8_t* b, int64_t k, int64_t n, uint8_t* packed);
size_t qgemm_scratch_bytes(const QGemmPlan& plan);
void qgemm_run(const QGemmPlan& plan, const uint8_t* a, const uint8_t* packed_b,
               const QEpilogue& ep, void* y, uint8_t* scratch, int64_t task_begin,
               int64_t task_end);

// --- QuantizeLinear / DequantizeLinear, per tensor ---------------------------------------------
// Bit-exact to kernels/ref/quantize.h: y = saturate(round_half_even(x / scale) + zero) with the
// division in float32 (a NaN quotient gives the zero point), and x = (q - zero) * scale. The
// quantized side is uint8 (is_signed false) or int8. Elements [begin, end) of the tensors.

void quantize_per_tensor(QIsa isa, const float* x, float scale, int32_t zero, bool is_signed,
                         void* y, int64_t begin, int64_t end);
void dequantize_per_tensor(QIsa isa, const void* x, float scale, int32_t zero, bool is_signed,
                           float* y, int64_t begin, int64_t end);

// --- uint8 max pooling (AVX-512 BW, in the VNNI unit) -------------------------------------------
// cpu::max_pool2d's result and row numbering (kernels/cpu/pool.h), whole rows in vectors: the max
// over the window's input rows into a zero-padded row buffer (uint8's lowest is 0, so padding
// needs no test), then over the taps along it; stride 2 splits the buffer into its even and odd
// bytes first, so every tap is one unaligned load. Eight rows go through each step before the
// next step, so no load meets a store still in flight. The portable form's per-row loops with
// scalar tails cost more than the arithmetic on ResNet-50's 56-wide rows.

// Bytes of the row buffer a layer needs; the kernel applies when stride_w is 1 or 2 and this is
// at most kQMaxPoolBufBytes.
inline constexpr int64_t kQMaxPoolBufBytes = 4096;
int64_t qmax_pool_buf_bytes(const cpu::Pool2DParams& p);
bool qmax_pool_applies(const cpu::Pool2DParams& p);
// Rows [row_begin, row_end); isa must be kAvx512Vnni.
void qmax_pool_run(QIsa isa, const cpu::Pool2DParams& p, const uint8_t* x, uint8_t* y,
                   int64_t row_begin, int64_t row_end);
// kiln.MaxPoolNhwc: p's planes are images, `channels` bytes per pixel (channels-last); rows are
// the images' output rows, [row_begin, row_end) of planes * out_h. Any window; isa must be
// kAvx512Vnni.
void qmax_pool_nhwc_run(QIsa isa, const cpu::Pool2DParams& p, int64_t channels, const uint8_t* x,
                        uint8_t* y, int64_t row_begin, int64_t row_end);

}  // namespace kiln::kernels::x86
