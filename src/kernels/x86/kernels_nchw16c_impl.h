#pragma once
// The nChw16c convolutions behind kernels.h over a vector-traits type T. Included after
// kernels_impl.h by each ISA's translation unit; anonymous namespace as there.
//
// A channel block of one pixel is NV = 16 / lanes vectors. Both kernels keep their accumulators in
// registers for a whole output tile and store it once, after the epilogue (bias, residual,
// activation), so a residual in Y's own buffer is read before its place is written.

#include <algorithm>
#include <utility>

#include "base/int_math.h"
#include "kernels/ref/layout.h"
#include "kernels/x86/kernels_impl.h"

namespace kiln::kernels::x86 {
namespace {

constexpr int64_t kBlk = kernels::ref::kChannelBlock;
constexpr int kMaxDensePixels = 12;  // max_tile_pixels' bound

template <class T>
inline constexpr int kNv = static_cast<int>(kBlk) / T::kLanes;

// The bias of `blocks` channel blocks from channel c0, zero past out_c: bias[out_c] may be null.
inline void block_bias(const float* bias, int64_t out_c, int64_t c0, int64_t blocks, float* out) {
  for (int64_t i = 0; i < blocks * kBlk; ++i) {
    out[i] = bias != nullptr && c0 + i < out_c ? bias[c0 + i] : 0.0f;
  }
}

// acc[i] + bias, + the residual at the same place, activated, stored. Vector i of a pixel's NB
// blocks is at y + pixel * 16 + (i / NV) * block_stride + (i % NV) * lanes.
template <class T, int P, int NB>
inline __attribute__((always_inline)) void store_tile(typename T::V* acc, const float* bias,
                                                      const float* z, float* y,
                                                      int64_t block_stride, int64_t pixel_stride,
                                                      const Epilogue& ep) {
  constexpr int NV = kNv<T>;
  constexpr int N = P * NB * NV;
#pragma GCC unroll 48
  for (int k = 0; k < N; ++k) {
    const int p = k / (NB * NV), i = k % (NB * NV);
    const int64_t at = p * pixel_stride + (i / NV) * block_stride + (i % NV) * T::kLanes;
    acc[k] = T::add(acc[k], T::loadu(bias + i * T::kLanes));
    if (z != nullptr) acc[k] = T::add(acc[k], T::loadu(z + at));
  }
  activate_n<T, N>(ep, acc);
#pragma GCC unroll 48
  for (int k = 0; k < N; ++k) {
    const int p = k / (NB * NV), i = k % (NB * NV);
    T::storeu(y + p * pixel_stride + (i / NV) * block_stride + (i % NV) * T::kLanes, acc[k]);
  }
}

// One input channel's step of a register tile: acc[p * NW + j] += x(p) * W's vector j for P
// pixels and the first NL of the tile's NW vectors (vector j of block j / NV at w + (j / NV) *
// w_block). x(p) reads pixel p's value of the channel: the pointwise, dense and plain-input
// kernels differ only there.
template <class T, int P, int NW, int NL, class X>
inline __attribute__((always_inline)) void channel_step(const float* w, int64_t w_block, X x,
                                                        typename T::V* acc) {
  using V = typename T::V;
  V wv[NW];
#pragma GCC unroll 8
  for (int j = 0; j < NL; ++j) wv[j] = T::loadu(w + (j / kNv<T>)*w_block + (j % kNv<T>)*T::kLanes);
#pragma GCC unroll 24
  for (int p = 0; p < P; ++p) {
    const V xv = T::set1(x(p));
#pragma GCC unroll 8
    for (int j = 0; j < NL; ++j) acc[p * NW + j] = T::fmadd(xv, wv[j], acc[p * NW + j]);
  }
}

// Input lines a tile's channel loop asks for kAheadBlocks channel blocks early, into L1. Each
// pixel's 16 channels of a block are one line, read for 16 channel steps; the next block's lines
// are a plane further (12.5 KiB at 14x14), a stride the hardware prefetchers did not follow, and
// where a thread's input and co tile outgrow L2 they come from L3. ResNet-50's 1024 -> 256 at
// 14x14 ran at 72-80% of the FMA peak on one thread, its 64 -> 256 at 56x56 (4 blocks, in L1)
// at 89%; with the lines asked for two blocks (32 channel steps) early, 0.88x the time.
constexpr int64_t kAheadBlocks = 2;

// addr(p): pixel p's line in the block kAheadBlocks ahead.
template <int P, class Addr>
inline __attribute__((always_inline)) void prefetch_ahead(Addr addr) {
#pragma GCC unroll 12
  for (int p = 0; p < P; ++p) _mm_prefetch(reinterpret_cast<const char*>(addr(p)), _MM_HINT_T0);
}

// --- pointwise ---------------------------------------------------------------------------------

struct PwArgs {
  const float* x;   // the tile's first input pixel, block 0
  int64_t x_block;  // floats from one input block to the next
  int64_t x_pixel;  // floats from one input pixel of the tile to the next
  int64_t in_c;
  const float* w;     // the tile's first block's packed weights: [in_c][16]
  int64_t w_block;    // floats from one block's weights to the next (in_c x 16)
  const float* bias;  // NB * 16 floats
  const float* z;     // residual at the tile's first output pixel, or null
  float* y;           // the tile's first output pixel, block 0
  int64_t y_block;    // floats from one output block to the next
  // With a prefetching tile (pointwise_tile's Prefetch): prefetch_lines lines of 16 floats from
  // `prefetch` to bring into L2, spread evenly over the input channels (a block's at a time).
  const float* prefetch = nullptr;
  int64_t prefetch_lines = 0;
};

// Skip: trailing vectors of the last block that hold only padding channels (AVX2: a block of 24
// or 40 channels' last 8 lanes): neither loaded nor multiplied, their accumulators stay zero, so
// the store writes act(0 + residual) there as for any padding lane. Prefetch: the channel loop
// also prefetches a's lines (Winograd's next tap), spread over the loop.
template <class T, int P, int NB, int Skip, bool Prefetch>
void pointwise_tile(const PwArgs& a, const Epilogue& ep) {
  using V = typename T::V;
  constexpr int NW = NB * kNv<T>;
  constexpr int NL = NW - Skip;  // vectors loaded and multiplied
  V acc[P * NW];
#pragma GCC unroll 48
  for (int k = 0; k < P * NW; ++k) acc[k] = T::zero();
  const float* w = a.w;
  const float* q = a.prefetch;
  int64_t due = 0;  // prefetch_lines per channel, in units of 1 / in_c lines
  for (int64_t c0 = 0; c0 < a.in_c; c0 += kBlk) {
    const float* xb = a.x + (c0 / kBlk) * a.x_block;
    const int lanes = static_cast<int>(std::min(kBlk, a.in_c - c0));
    if (c0 + kAheadBlocks * kBlk < a.in_c) {
      prefetch_ahead<P>([&](int p) { return xb + kAheadBlocks * a.x_block + p * a.x_pixel; });
    }
    // A block of channels' share at once: a branch at every channel step cost the 960 -> 320 1x1
    // a tenth of its time with its weights warm.
    if constexpr (Prefetch) {
      for (due += a.prefetch_lines * lanes; due >= a.in_c; due -= a.in_c, q += kBlk) {
        _mm_prefetch(reinterpret_cast<const char*>(q), _MM_HINT_T1);
      }
    }
    for (int l = 0; l < lanes; ++l, w += kBlk) {
      channel_step<T, P, NW, NL>(
          w, a.w_block, [&](int p) { return xb[p * a.x_pixel + l]; }, acc);
    }
  }
  store_tile<T, P, NB>(acc, a.bias, a.z, a.y, a.y_block, kBlk, ep);
}

template <class T, int NB, int Skip, bool Prefetch, int... Ps>
constexpr auto pointwise_table(std::integer_sequence<int, Ps...>) {
  return std::array<void (*)(const PwArgs&, const Epilogue&), sizeof...(Ps)>{
      &pointwise_tile<T, Ps + 1, NB, Skip, Prefetch>...};
}

// Tiles of up to 24 (AVX-512) or 12 (AVX2) accumulators: a plan's px_tile for nb blocks. With
// `skip` padding-only vectors in the last block (pointwise_tile's Skip), which take none, a
// pointwise tile takes more pixels: AVX2's 24 channels, 3 vectors a pixel, 4 pixels where 2 full
// blocks take 3, so each weight load and broadcast feeds more FMAs.
template <class T>
constexpr int max_tile_pixels(int nb, int skip = 0) {
  return std::min(12, (T::kLanes == 16 ? 24 : 12) / (nb * kNv<T> - skip));
}

// A tile of NB blocks (Skip padding-only vectors) takes 1 to max_tile_pixels pixels (at least one
// size).
template <class T, int NB, int Skip = 0>
using TilePixels = std::make_integer_sequence<int, std::max(1, max_tile_pixels<T>(NB, Skip))>;

// Runs the tile of nb blocks (1 to 4) and `pixels` pixels: entry pixels - 1 of t1 .. t4 (the
// tables' data: indexing the std::arrays themselves, GCC merged the paths of two instantiations'
// tables of different sizes and warned of reads past the smaller one).
template <class Fn, class... Args>
inline void call_tile(int nb, int pixels, const Fn* t1, const Fn* t2, const Fn* t3, const Fn* t4,
                      const Args&... args) {
  const auto i = static_cast<size_t>(pixels - 1);
  switch (nb) {
    case 1:
      return t1[i](args...);
    case 2:
      return t2[i](args...);
    case 3:
      return t3[i](args...);
    default:
      return t4[i](args...);
  }
}

template <class T, int Skip, bool Prefetch>
void pointwise_tile_nb(int pixels, int nb, const PwArgs& a, const Epilogue& ep) {
  static constexpr auto t1 = pointwise_table<T, 1, Skip, Prefetch>(TilePixels<T, 1, Skip>());
  static constexpr auto t2 = pointwise_table<T, 2, Skip, Prefetch>(TilePixels<T, 2, Skip>());
  static constexpr auto t3 = pointwise_table<T, 3, Skip, Prefetch>(TilePixels<T, 3, Skip>());
  static constexpr auto t4 = pointwise_table<T, 4, Skip, Prefetch>(TilePixels<T, 4, Skip>());
  call_tile(nb, pixels, t1.data(), t2.data(), t3.data(), t4.data(), a, ep);
}

// half_last: the tile's last block holds at most 8 real channels (only AVX2's two vectors per
// block can skip one).
template <class T, bool Prefetch = false>
void pointwise_tile_any(int pixels, int nb, bool half_last, const PwArgs& a, const Epilogue& ep) {
  if constexpr (kNv < T >> 1) {
    if (half_last) return pointwise_tile_nb<T, 1, Prefetch>(pixels, nb, a, ep);
  }
  pointwise_tile_nb<T, 0, Prefetch>(pixels, nb, a, ep);
}

// Weights the tiles' channel loops bring into L2 while they run (pointwise_tile's Prefetch): nb
// blocks of in_c lines of 16 floats, contiguous from `next`. A thread's run of a co tile (its
// `shares` tasks) gives this task share `share` of the lines, and a tile covering items [begin,
// end) of the task's `extent` (its pixels, say) the same part of that share, so that the weights
// the thread runs next arrive in L2 while it runs this co tile, not while it waits for memory at
// the next one's first channel steps. Items past the extent prefetch nothing.
struct NextWeights {
  const float* next = nullptr;  // null: nothing to prefetch
  int64_t lo = 0, hi = 0;       // this task's lines
  int64_t extent = 1;

  NextWeights(const float* next_w, int64_t nb, int64_t in_c, int64_t share, int64_t shares,
              int64_t extent_)
      : next(next_w), extent(std::max<int64_t>(extent_, 1)) {
    const int64_t lines = next == nullptr || shares <= 0 ? 0 : nb * in_c;
    lo = shares > 0 ? lines * share / shares : 0;
    hi = shares > 0 ? lines * (share + 1) / shares : 0;
  }

  void set(int64_t begin, int64_t end, PwArgs& a) const {
    const auto line = [&](int64_t i) { return lo + (hi - lo) * std::min(i, extent) / extent; };
    a.prefetch = next == nullptr ? nullptr : next + line(begin) * kBlk;
    a.prefetch_lines = next == nullptr ? 0 : line(end) - line(begin);
  }
};

// n input pixels (x_pixel floats apart; blocks in_plane apart) times the channel scale s, into
// out as [in_blocks][n][16]: the tile then reads them from L1, and the unscaled X is read once.
template <class T>
void scale_tile(const float* x, int64_t in_plane, int64_t x_pixel, int n, int64_t in_blocks,
                const float* s, float* out) {
  constexpr int NV = kNv<T>;
  for (int64_t cb = 0; cb < in_blocks; ++cb) {
    typename T::V sv[NV];
    for (int v = 0; v < NV; ++v) sv[v] = T::loadu(s + cb * kBlk + v * T::kLanes);
    const float* src = x + cb * in_plane;
    float* dst = out + cb * n * kBlk;
    for (int p = 0; p < n; ++p) {
      for (int v = 0; v < NV; ++v) {
        T::storeu(dst + p * kBlk + v * T::kLanes,
                  T::mul(T::loadu(src + p * x_pixel + v * T::kLanes), sv[v]));
      }
    }
  }
}

// Output pixels [q0, q1) of one image and co tile t: runs of a row (all of them at once when the
// stride is 1: input and output pixels are then the same), split into register tiles. With a
// channel scale s, each tile's input pixels are scaled into scratch first. With next_w, the tiles
// bring the weights of the co tile the thread runs next into L2 (NextWeights).
template <class T>
void pointwise_task(const Nchw16cConvPlan& pl, const float* x, const float* s, float* scratch,
                    const float* packed, const float* bias, const float* z, const Epilogue& ep,
                    float* y, const Nchw16cTask& task, int64_t q0, int64_t q1,
                    const float* next_w) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t in_plane = p.in_h * p.in_w * kBlk;
  const int64_t out_plane = pl.y_plane > 0 ? pl.y_plane : p.out_h * p.out_w * kBlk;
  const int64_t t = task.co_tile;
  const int64_t nb = std::min(pl.co_tile, pl.out_blocks - t * pl.co_tile);
  alignas(64) float tile_bias[4 * kBlk];
  block_bias(bias, p.out_c, t * pl.co_tile * kBlk, nb, tile_bias);
  const bool unit = p.stride_h == 1 && p.stride_w == 1;
  const int64_t real = p.out_c - (t * pl.co_tile + nb - 1) * kBlk;  // channels in the last block
  const bool half_last = real <= kBlk / 2;
  const int max_px = max_tile_pixels<T>(static_cast<int>(nb), half_last && kNv<T> > 1 ? 1 : 0);
  PwArgs a{
      nullptr,       in_plane,  p.stride_w * kBlk, p.in_c,  packed + t * pl.co_tile * p.in_c * kBlk,
      p.in_c * kBlk, tile_bias, nullptr,           nullptr, out_plane};
  // Calls tile(q, i, n) for the tiles of n pixels from output pixel q + i, i input pixels (times
  // the stride) from in_px.
  const auto for_each_tile = [&](auto&& tile) {
    for (int64_t q = q0; q < q1;) {
      const int64_t oh = q / p.out_w, ow = q % p.out_w;
      const int64_t run = unit ? q1 - q : std::min(q1 - q, p.out_w - ow);
      const int64_t in_px = unit ? q : oh * p.stride_h * p.in_w + ow * p.stride_w;
      for (int64_t i = 0; i < run;) {
        const int n = static_cast<int>(std::min<int64_t>(max_px, run - i));
        tile(q + i, in_px + i * p.stride_w, n);
        i += n;
      }
      q += run;
    }
  };
  const int64_t next_nb = std::min(pl.co_tile, pl.out_blocks - (t + 1) * pl.co_tile);
  const NextWeights ahead(next_w, next_nb, p.in_c, task.share, task.shares, q1 - q0);
  for_each_tile([&](int64_t out_px, int64_t in_px, int n) {
    const int64_t out_at = t * pl.co_tile * out_plane + out_px * kBlk;
    a.x = x + in_px * kBlk;
    if (s != nullptr) {
      scale_tile<T>(a.x, in_plane, p.stride_w * kBlk, n, pl.in_blocks, s, scratch);
      a.x = scratch;
      a.x_block = n * kBlk;
      a.x_pixel = kBlk;
    }
    a.y = y + out_at;
    a.z = z == nullptr ? nullptr : z + out_at;
    if (next_w == nullptr) return pointwise_tile_any<T>(n, static_cast<int>(nb), half_last, a, ep);
    ahead.set(out_px - q0, out_px - q0 + n, a);
    pointwise_tile_any<T, true>(n, static_cast<int>(nb), half_last, a, ep);
  });
}

// --- depthwise ---------------------------------------------------------------------------------

struct DwRow {
  const float* x;     // the block's input plane
  const float* w;     // the block's packed taps [k_h * k_w][16]
  const float* bias;  // the block's 16 biases
  int64_t kh0, kh1;   // the taps' rows inside the input for this output row
  int64_t ih0;        // input row of tap row 0 (may be negative)
  int64_t row0 = 0;   // the input row x starts at (a band's first row; 0: the plane's)
};

// U output pixels from column ow, taps [kw0, kw1) of each row inside the input.
template <class T, int U>
inline __attribute__((always_inline)) void depthwise_pixels(const Nchw16cConvPlan& pl,
                                                            const DwRow& r, int64_t ow, int64_t kw0,
                                                            int64_t kw1, const float* z, float* y,
                                                            const Epilogue& ep) {
  using V = typename T::V;
  constexpr int NV = kNv<T>;
  const cpu::Conv2DParams& p = pl.p;
  V acc[U * NV];
#pragma GCC unroll 16
  for (int k = 0; k < U * NV; ++k) acc[k] = T::zero();
  const int64_t step = p.stride_w * kBlk;
  for (int64_t kh = r.kh0; kh < r.kh1; ++kh) {
    const float* xr = r.x + (r.ih0 + kh * p.dil_h - r.row0) * p.in_w * kBlk;
    const float* wr = r.w + kh * p.k_w * kBlk;
    for (int64_t kw = kw0; kw < kw1; ++kw) {
      const float* xs = xr + (ow * p.stride_w - p.pad_left + kw * p.dil_w) * kBlk;
      V wv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) wv[j] = T::loadu(wr + kw * kBlk + j * T::kLanes);
#pragma GCC unroll 16
      for (int u = 0; u < U; ++u) {
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) {
          acc[u * NV + j] =
              T::fmadd(T::loadu(xs + u * step + j * T::kLanes), wv[j], acc[u * NV + j]);
        }
      }
    }
  }
  store_tile<T, U, 1>(acc, r.bias, z, y, 0, kBlk, ep);
}

// --- depthwise, window rows of K taps and stride S: each input vector loaded once ---------------
// depthwise_pixels loads one input vector per tap and pixel (10 loads per 8 FMAs on AVX2: 63% of
// the FMA peak in a register-only loop of its shape), and its edge pixels, one at a time with
// their taps inside the row counted at run time, took a third of a 14-pixel row's time. Along a
// window row of K taps, output pixel p reads input columns p * S .. p * S + K - 1, so P pixels
// read (P - 1) * S + K columns: loaded once each (a column outside the input row, in the padding,
// reads zero), every column multiplies the taps of each pixel that reads it. H of the block's NV
// vectors are done together (kDwGroupVectors).

template <int K, int S, int P>
inline constexpr int kDwColumns = (P - 1) * S + K;

// acc[p * H + h] += the window row at xr (input column c0 of pixel 0, vector h) times its K taps.
// Checked: only the row's columns [0, in_w) are loaded (c0 + c is the column).
template <class T, int K, int S, int P, int H, bool Checked>
inline __attribute__((always_inline)) void dw_window_row(const float* xr, const float* wr,
                                                         int64_t c0, int64_t in_w,
                                                         typename T::V* acc) {
  using V = typename T::V;
  V w[K * H];
#pragma GCC unroll 16
  for (int i = 0; i < K * H; ++i) w[i] = T::loadu(wr + (i / H) * kBlk + (i % H) * T::kLanes);
#pragma GCC unroll 64
  for (int i = 0; i < kDwColumns<K, S, P> * H; ++i) {
    const int c = i / H, h = i % H;
    if (Checked && (c0 + c < 0 || c0 + c >= in_w)) continue;
    const V x = T::loadu(xr + c * kBlk + h * T::kLanes);
#pragma GCC unroll 8
    for (int kw = 0; kw < K; ++kw) {
      const int d = c - kw;  // pixel d / S reads column c with tap kw
      if (d >= 0 && d % S == 0 && d / S < P) {
        acc[(d / S) * H + h] = T::fmadd(x, w[kw * H + h], acc[(d / S) * H + h]);
      }
    }
  }
}

// P output pixels from column ow (vectors h0 .. h0 + H - 1 of the block), then bias, residual
// and activation and the only store.
template <class T, int K, int S, int P, int H, bool Checked>
inline __attribute__((always_inline)) void depthwise_window(const Nchw16cConvPlan& pl,
                                                            const DwRow& r, int64_t ow, int h0,
                                                            const float* z, float* y,
                                                            const Epilogue& ep) {
  using V = typename T::V;
  const cpu::Conv2DParams& p = pl.p;
  V acc[P * H];
#pragma GCC unroll 16
  for (int k = 0; k < P * H; ++k) acc[k] = T::zero();
  const int64_t lane0 = h0 * T::kLanes, c0 = ow * S - p.pad_left;
  const float* x0 = r.x + c0 * kBlk + lane0;
  for (int64_t kh = r.kh0; kh < r.kh1; ++kh) {
    dw_window_row<T, K, S, P, H, Checked>(x0 + (r.ih0 + kh * p.dil_h - r.row0) * p.in_w * kBlk,
                                          r.w + kh * K * kBlk + lane0, c0, p.in_w, acc);
  }
#pragma GCC unroll 16
  for (int k = 0; k < P * H; ++k) {
    const int64_t at = (k / H) * kBlk + lane0 + (k % H) * T::kLanes;
    acc[k] = T::add(acc[k], T::loadu(r.bias + lane0 + (k % H) * T::kLanes));
    if (z != nullptr) acc[k] = T::add(acc[k], T::loadu(z + at));
  }
  activate_n<T, P * H>(ep, acc);
#pragma GCC unroll 16
  for (int k = 0; k < P * H; ++k) {
    T::storeu(y + (k / H) * kBlk + lane0 + (k % H) * T::kLanes, acc[k]);
  }
}

// The vectors of a block a window group of N pixels and K taps does together: all of them when the
// accumulators, the taps' weights and an input vector fit in the 16 AVX2 registers, else one at a
// time (AVX-512 has one vector a block).
template <class T, int K, int N>
inline constexpr int kDwGroupVectors = (N + K) * kNv<T> + 1 <= 16 ? kNv<T> : 1;

// The N pixels from ow, every vector of the block; the columns checked where the pixels' windows
// leave the row.
template <class T, int K, int S, int N>
void depthwise_group(const Nchw16cConvPlan& pl, const DwRow& r, int64_t ow, const float* z,
                     float* y, const Epilogue& ep) {
  constexpr int H = kDwGroupVectors<T, K, N>;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t first = ow * S - p.pad_left, last = (ow + N - 1) * S - p.pad_left + K - 1;
  const bool inside = first >= 0 && last < p.in_w;
  for (int h0 = 0; h0 < kNv<T>; h0 += H) {
    if (inside) {
      depthwise_window<T, K, S, N, H, false>(pl, r, ow, h0, z, y, ep);
    } else {
      depthwise_window<T, K, S, N, H, true>(pl, r, ow, h0, z, y, ep);
    }
  }
}

// A whole output row in groups of P pixels, then of P / 2, P / 4 and 1. P: 8 accumulators (FMA
// latency 4 at 2 a cycle needs 8 independent chains): AVX-512 8 pixels, AVX2 4 pixels of both
// vectors for 3 taps, 8 pixels of one vector for 5 (whose 10 weights would not fit beside 8
// accumulators of both).
template <class T, int K, int S>
void depthwise_windows(const Nchw16cConvPlan& pl, const DwRow& r, const float* z, float* y,
                       const Epilogue& ep) {
  constexpr int P = 8 / kDwGroupVectors<T, K, 8 / kNv<T>>;
  const int64_t out_w = pl.p.out_w;
  int64_t ow = 0;
  const auto groups = [&]<int N>(std::integral_constant<int, N>) {
    for (; ow + N <= out_w; ow += N) {
      depthwise_group<T, K, S, N>(pl, r, ow, z ? z + ow * kBlk : nullptr, y + ow * kBlk, ep);
    }
  };
  groups(std::integral_constant<int, P>());
  groups(std::integral_constant<int, std::max(1, P / 2)>());
  groups(std::integral_constant<int, std::max(1, P / 4)>());
  groups(std::integral_constant<int, 1>());
}

// The window-row kernel for the plan's rows, or null: windows 3 wide with column stride 1 or 2, or
// 5 wide with column stride 1 (any height, row stride and row dilation; no column dilation). 5 taps
// at stride 2 stay with depthwise_pixels: EfficientNet-B0's 5x5 stride-2 layer has 7-pixel output
// rows, which cut into groups of 4, 2 and 1 with too few independent accumulators on AVX2 (1.15x
// as long as depthwise_pixels in the kernel benchmark, where every other MobileNetV2 and
// EfficientNet-B0 depthwise layer ran 0.53-0.97x).
template <class T>
using DwWindowsFn = void (*)(const Nchw16cConvPlan&, const DwRow&, const float*, float*,
                             const Epilogue&);
template <class T>
DwWindowsFn<T> depthwise_windows_for(const cpu::Conv2DParams& p) {
  if (p.dil_w != 1) return nullptr;
  if (p.k_w == 3 && p.stride_w <= 2) {
    return p.stride_w == 1 ? &depthwise_windows<T, 3, 1> : &depthwise_windows<T, 3, 2>;
  }
  if (p.k_w == 5 && p.stride_w == 1) return &depthwise_windows<T, 5, 1>;
  return nullptr;
}

// The taps of output column ow inside the input row: [kw0, kw1).
inline std::pair<int64_t, int64_t> inside_taps(const cpu::Conv2DParams& p, int64_t ow) {
  const int64_t left = ow * p.stride_w - p.pad_left;  // input column of tap 0
  const int64_t kw0 = left >= 0 ? 0 : (-left + p.dil_w - 1) / p.dil_w;
  const int64_t last = p.in_w - 1 - left;  // tap columns up to last / dil_w are inside
  const int64_t kw1 = last < 0 ? 0 : std::min(p.k_w, last / p.dil_w + 1);
  return {kw0, std::max(kw0, kw1)};
}

template <class T>
void depthwise_row(const Nchw16cConvPlan& pl, const DwRow& r, const float* z, float* y,
                   const Epilogue& ep) {
  constexpr int U = T::kLanes == 16 ? 8 : 4;
  const cpu::Conv2DParams& p = pl.p;
  const auto edge = [&](int64_t ow) {
    const auto [kw0, kw1] = inside_taps(p, ow);
    depthwise_pixels<T, 1>(pl, r, ow, kw0, kw1, z ? z + ow * kBlk : nullptr, y + ow * kBlk, ep);
  };
  if (const DwWindowsFn<T> windows = depthwise_windows_for<T>(p)) return windows(pl, r, z, y, ep);
  for (int64_t ow = 0; ow < pl.ow_lo; ++ow) edge(ow);
  int64_t ow = pl.ow_lo;
  for (; ow + U <= pl.ow_hi; ow += U) {
    depthwise_pixels<T, U>(pl, r, ow, 0, p.k_w, z ? z + ow * kBlk : nullptr, y + ow * kBlk, ep);
  }
  for (; ow < pl.ow_hi; ++ow) {
    depthwise_pixels<T, 1>(pl, r, ow, 0, p.k_w, z ? z + ow * kBlk : nullptr, y + ow * kBlk, ep);
  }
  for (ow = std::max(pl.ow_hi, pl.ow_lo); ow < p.out_w; ++ow) edge(ow);
}

// Output rows [oh0, oh1) of the block whose input rows r reads (r.x, r.row0) and whose output
// plane is `plane`.
template <class T>
void depthwise_rows(const Nchw16cConvPlan& pl, DwRow r, const float* z, const Epilogue& ep,
                    float* y, int64_t plane, int64_t oh0, int64_t oh1) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t out_plane = p.out_h * p.out_w * kBlk;
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    r.ih0 = oh * p.stride_h - p.pad_top;
    r.kh0 = r.ih0 >= 0 ? 0 : (-r.ih0 + p.dil_h - 1) / p.dil_h;
    const int64_t last = p.in_h - 1 - r.ih0;
    r.kh1 = last < 0 ? 0 : std::min(p.k_h, last / p.dil_h + 1);
    r.kh1 = std::max(r.kh0, r.kh1);
    const int64_t at = plane * out_plane + oh * p.out_w * kBlk;
    depthwise_row<T>(pl, r, z ? z + at : nullptr, y + at, ep);
  }
}

// Output rows [oh0, oh1) of block b of image n.
template <class T>
void depthwise_task(const Nchw16cConvPlan& pl, const float* x, const float* packed,
                    const float* bias, const float* z, const Epilogue& ep, float* y, int64_t n,
                    int64_t b, int64_t oh0, int64_t oh1) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t plane = (n * pl.out_blocks + b);
  alignas(64) float block_b[kBlk];
  block_bias(bias, p.out_c, b * kBlk, 1, block_b);
  DwRow r{x + plane * p.in_h * p.in_w * kBlk, packed + b * p.k_h * p.k_w * kBlk, block_b, 0, 0, 0};
  depthwise_rows<T>(pl, r, z, ep, y, plane, oh0, oh1);
}

// --- dense (group 1, any window) ---------------------------------------------------------------

// One tap of a dense tile: P output pixels of a row, each reading the input pixel at x[p]
// (x_block floats from one of its channel blocks to the next; a pixel whose tap falls in the
// padding reads a zero block with x_block 0). A plain (NCHW) X's channels are x_lane floats apart
// (0 in the padding); a blocked X's are adjacent.
struct DenseTap {
  const float* x[kMaxDensePixels];
  int64_t x_block[kMaxDensePixels];
  int64_t x_lane[kMaxDensePixels];
};

template <class T, int P, int NB, bool Plain>
inline __attribute__((always_inline)) void dense_tap(const DenseTap& tap, int64_t in_c,
                                                     const float* w, int64_t w_block,
                                                     typename T::V* acc) {
  constexpr int NW = NB * kNv<T>;
  for (int64_t c0 = 0; c0 < in_c; c0 += kBlk) {
    const float* xb[P];
#pragma GCC unroll 12
    for (int p = 0; p < P; ++p) xb[p] = tap.x[p] + (c0 / kBlk) * tap.x_block[p];
    const int lanes = static_cast<int>(std::min(kBlk, in_c - c0));
    if (!Plain && c0 + kAheadBlocks * kBlk < in_c) {
      prefetch_ahead<P>([&](int p) { return xb[p] + kAheadBlocks * tap.x_block[p]; });
    }
    for (int l = 0; l < lanes; ++l, w += kBlk) {
      channel_step<T, P, NW, NW>(
          w, w_block, [&](int p) { return Plain ? xb[p][l * tap.x_lane[p]] : xb[p][l]; }, acc);
    }
  }
}

struct DenseArgs {
  const float* x;     // the image's input, block 0
  int64_t x_block;    // floats from one input channel block to the next (plain X too: 16 planes)
  const float* w;     // the tile's first block's packed weights: [k_h][k_w][in_c][16]
  int64_t w_block;    // floats from one block's weights to the next
  const float* bias;  // NB * 16 floats
  const float* z;     // residual at the tile's first output pixel, or null
  float* y;           // the tile's first output pixel, block 0
  int64_t y_block;
};

// A plain (NCHW) X's tile whose every tap column lies inside the input row: the taps' pixels are
// at fixed strides from one pointer, so no per-tap pixel table. A first layer has 3 channels, so a
// tap is 3 broadcasts per pixel: building the table cost more than its FMAs (MobileNetV2's stem ran
// at 36% of the FMA peak). S: the column stride when it is 1 or 2 (0: sw at run time); a constant
// one makes each pixel's broadcast an immediate offset, where a run-time one kept 11 pixels'
// offsets on the stack, reloaded every channel. Its own accumulators: shared with dense_tile's
// general path, they lived on the stack. C: the input channels when they are an RGB image's 3 (0:
// at run time), so that a tap's channels run unrolled, not as a 3-step loop per tap.
template <class T, int P, int NB, int S, int C = 0>
void dense_plain_inside_s(const Nchw16cConvPlan& pl, const DenseArgs& a, int64_t oh, int64_t ow0,
                          const Epilogue& ep) {
  using V = typename T::V;
  constexpr int NW = NB * kNv<T>;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t in_c = C != 0 ? C : p.in_c;
  const int64_t plane = p.in_h * p.in_w, sw = S != 0 ? S : p.stride_w;
  V acc[P * NW];
#pragma GCC unroll 48
  for (int k = 0; k < P * NW; ++k) acc[k] = T::zero();
  for (int64_t kh = 0; kh < p.k_h; ++kh) {
    const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
    if (ih < 0 || ih >= p.in_h) continue;
    const float* xr = a.x + ih * p.in_w + ow0 * sw - p.pad_left;
    const float* w = a.w + kh * p.k_w * in_c * kBlk;
    for (int64_t kw = 0; kw < p.k_w; ++kw) {
      const float* xk = xr + kw * p.dil_w;
      for (int64_t c = 0; c < in_c; ++c, w += kBlk) {
        const float* xc = xk + c * plane;
        channel_step<T, P, NW, NW>(
            w, a.w_block, [&](int q) { return xc[q * sw]; }, acc);
      }
    }
  }
  store_tile<T, P, NB>(acc, a.bias, a.z, a.y, a.y_block, kBlk, ep);
}

template <class T, int P, int NB>
void dense_plain_inside(const Nchw16cConvPlan& pl, const DenseArgs& a, int64_t oh, int64_t ow0,
                        const Epilogue& ep) {
  switch (pl.p.stride_w) {
    case 1:
      return dense_plain_inside_s<T, P, NB, 1>(pl, a, oh, ow0, ep);
    case 2:
      if (pl.p.in_c == 3) return dense_plain_inside_s<T, P, NB, 2, 3>(pl, a, oh, ow0, ep);
      return dense_plain_inside_s<T, P, NB, 2>(pl, a, oh, ow0, ep);
    default:
      return dense_plain_inside_s<T, P, NB, 0>(pl, a, oh, ow0, ep);
  }
}

// P output pixels from flat output pixel q0 (row q0 / out_w): every tap with at least one pixel
// inside the input accumulates over all input channels (a pixel outside reads zeros), then one
// store. A blocked X's tile may run on into the next rows (dense_task cuts whole tasks into tiles:
// a 7-pixel row cut alone gives tiles of 2, 2 and 3, and a 2-pixel tile reads its co tile's
// weights for 8 FMAs where 3 pixels give 12); a plain X's stays in its row. Plain: X is NCHW (a
// first layer's few channels), Y blocked.
template <class T, int P, int NB, bool Plain>
void dense_tile(const Nchw16cConvPlan& pl, const DenseArgs& a, int64_t q0, const Epilogue& ep) {
  using V = typename T::V;
  constexpr int NW = NB * kNv<T>;
  alignas(64) static constexpr float kZeros[kBlk] = {};
  const cpu::Conv2DParams& p = pl.p;
  // One division, then column steps (a division per pixel cost a plain stem a third of its FMA
  // time: its channel loop is 3 long).
  int64_t oh = q0 / p.out_w, ow = q0 % p.out_w;
  if constexpr (Plain) {  // a plain X's tile stays in its row
    if (ow >= pl.ow_lo && ow + P <= pl.ow_hi) {
      return dense_plain_inside<T, P, NB>(pl, a, oh, ow, ep);
    }
  }
  V acc[P * NW];
#pragma GCC unroll 48
  for (int k = 0; k < P * NW; ++k) acc[k] = T::zero();
  int64_t ih0[P], iw0[P];  // each pixel's input pixel of tap (0, 0), maybe in the padding
#pragma GCC unroll 12
  for (int i = 0; i < P; ++i) {
    ih0[i] = oh * p.stride_h - p.pad_top;
    iw0[i] = ow * p.stride_w - p.pad_left;
    if (++ow == p.out_w) {
      ow = 0;
      ++oh;
    }
  }
  const int64_t tap_floats = p.in_c * kBlk;
  const int64_t pixel = Plain ? 1 : kBlk, plane = p.in_h * p.in_w;
  for (int64_t kh = 0; kh < p.k_h; ++kh) {
    for (int64_t kw = 0; kw < p.k_w; ++kw) {
      DenseTap tap;
      bool any = false;
      for (int i = 0; i < P; ++i) {
        const int64_t ih = ih0[i] + kh * p.dil_h, iw = iw0[i] + kw * p.dil_w;
        const bool inside = ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w;
        any |= inside;
        tap.x[i] = inside ? a.x + (ih * p.in_w + iw) * pixel : kZeros;
        tap.x_block[i] = inside ? a.x_block : 0;
        tap.x_lane[i] = inside ? plane : 0;
      }
      if (!any) continue;
      dense_tap<T, P, NB, Plain>(tap, p.in_c, a.w + (kh * p.k_w + kw) * tap_floats, a.w_block, acc);
    }
  }
  store_tile<T, P, NB>(acc, a.bias, a.z, a.y, a.y_block, kBlk, ep);
}

template <class T, int NB, bool Plain, int... Ps>
constexpr auto dense_table(std::integer_sequence<int, Ps...>) {
  return std::array<void (*)(const Nchw16cConvPlan&, const DenseArgs&, int64_t, const Epilogue&),
                    sizeof...(Ps)>{&dense_tile<T, Ps + 1, NB, Plain>...};
}

template <class T, bool Plain>
void dense_tile_any(int pixels, int nb, const Nchw16cConvPlan& pl, const DenseArgs& a, int64_t q0,
                    const Epilogue& ep) {
  static constexpr auto t1 = dense_table<T, 1, Plain>(TilePixels<T, 1>());
  static constexpr auto t2 = dense_table<T, 2, Plain>(TilePixels<T, 2>());
  static constexpr auto t3 = dense_table<T, 3, Plain>(TilePixels<T, 3>());
  static constexpr auto t4 = dense_table<T, 4, Plain>(TilePixels<T, 4>());
  call_tile(nb, pixels, t1.data(), t2.data(), t3.data(), t4.data(), pl, a, q0, ep);
}

// Output pixels [q0, q1) of one image and co tile t (whole rows for a plain X), cut into tiles of
// nearly equal width (7 pixels at 3 per tile: 2, 2, 3, never a lone 1): all at once for a blocked
// X, each row alone for a plain one.
template <class T>
void dense_task(const Nchw16cConvPlan& pl, const float* x, const float* packed, const float* bias,
                const float* z, const Epilogue& ep, float* y, int64_t t, int64_t q0, int64_t q1) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t out_plane = p.out_h * p.out_w * kBlk;
  const int64_t nb = std::min(pl.co_tile, pl.out_blocks - t * pl.co_tile);
  alignas(64) float tile_bias[4 * kBlk];
  block_bias(bias, p.out_c, t * pl.co_tile * kBlk, nb, tile_bias);
  const int max_px = max_tile_pixels<T>(static_cast<int>(nb));
  const int64_t w_block = p.k_h * p.k_w * p.in_c * kBlk;
  DenseArgs a{x,
              p.in_h * p.in_w * kBlk,
              packed + t * pl.co_tile * w_block,
              w_block,
              tile_bias,
              nullptr,
              nullptr,
              out_plane};
  // Pixels [q, q + n) in tiles.
  const auto run = [&](int64_t q, int64_t n) {
    const int64_t tiles = ceil_div(n, int64_t{max_px});
    for (int64_t i = 0; i < tiles; ++i) {
      const int64_t q0 = q + (n * i) / tiles;
      const int size = static_cast<int>(q + (n * (i + 1)) / tiles - q0);
      const int64_t out_at = t * pl.co_tile * out_plane + q0 * kBlk;
      a.y = y + out_at;
      a.z = z == nullptr ? nullptr : z + out_at;
      if (pl.plain_x) {
        dense_tile_any<T, true>(size, static_cast<int>(nb), pl, a, q0, ep);
      } else {
        dense_tile_any<T, false>(size, static_cast<int>(nb), pl, a, q0, ep);
      }
    }
  };
  if (!pl.plain_x) return run(q0, q1 - q0);
  const int64_t oh0 = q0 / p.out_w, oh1 = q1 / p.out_w;
  // Columns [ow_lo, ow_hi) read no padding: their tiles take dense_plain_inside's fast path; the
  // edge columns (one on each side for a padded stem) get tiles of their own, not a slow 12-pixel
  // one.
  const int64_t lo = pl.ow_lo, hi = std::max(pl.ow_hi, pl.ow_lo);
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    run(oh * p.out_w, lo);
    run(oh * p.out_w + lo, hi - lo);
    run(oh * p.out_w + hi, p.out_w - hi);
  }
}

// The packed weights of the co tile a thread runs after task's (plans with prefetch_next, when its
// run of tasks [.., end) goes on to the next co tile), or null.
inline const float* next_weights(const Nchw16cConvPlan& pl, const float* packed,
                                 const Nchw16cTask& task, int64_t end) {
  if (!pl.prefetch_next || nchw16c_task(pl, end - 1).co_tile <= task.co_tile) return nullptr;
  const int64_t taps = pl.p.k_h * pl.p.k_w;
  return packed + (task.co_tile + 1) * pl.co_tile * taps * pl.p.in_c * kBlk;
}

template <class T>
void nchw16c_conv_tasks(const Nchw16cConvPlan& pl, const float* packed, const Nchw16cConvIo& io,
                        const Epilogue& ep, int64_t begin, int64_t end) {
  const FlushDenormals ftz;
  const float *x = io.x, *bias = io.bias, *z = io.residual;
  float* y = io.y;
  const cpu::Conv2DParams& p = pl.p;
  for (int64_t task = begin; task < end; ++task) {
    if (pl.depthwise) {
      const int64_t c = task % pl.row_chunks, nb = task / pl.row_chunks;
      const auto [oh0, oh1] = nchw16c_row_range(pl, c);
      depthwise_task<T>(pl, x, packed, bias, z, ep, y, nb / pl.out_blocks, nb % pl.out_blocks, oh0,
                        oh1);
      continue;
    }
    // Consecutive tasks share a chunk of input pixels and differ in co tile, or (co_outer) share a
    // co tile's weights and differ in chunk: whichever is larger stays in cache.
    const Nchw16cTask tk = nchw16c_task(pl, task);
    const int64_t t = tk.co_tile, rest = tk.span;
    if (pl.dense) {
      const int64_t chunks = pl.plain_x ? pl.row_chunks : pl.chunks;
      const int64_t c = rest % chunks, n = rest / chunks;
      const auto [q0, q1] = nchw16c_chunk_range(pl, c);
      const int64_t in_image = (pl.plain_x ? p.in_c : pl.in_blocks * kBlk) * p.in_h * p.in_w;
      const int64_t out_image = pl.out_blocks * p.out_h * p.out_w * kBlk;
      dense_task<T>(pl, x + n * in_image, packed, bias, z ? z + n * out_image : nullptr, ep,
                    y + n * out_image, t, q0, q1);
      continue;
    }
    const int64_t c = rest % pl.chunks, n = rest / pl.chunks;
    const auto [q0, q1] = nchw16c_chunk_range(pl, c);
    const int64_t in_image = pl.in_blocks * p.in_h * p.in_w * kBlk;
    const int64_t out_image = pl.out_blocks * p.out_h * p.out_w * kBlk;
    const float* s = io.x_scale;
    if (s != nullptr && io.x_scale_per_image) s += n * pl.in_blocks * kBlk;
    pointwise_task<T>(pl, x + n * in_image, s, io.scratch, packed, bias,
                      z ? z + n * out_image : nullptr, ep, y + n * out_image, tk, q0, q1,
                      next_weights(pl, packed, tk, end));
  }
}

// --- a pointwise convolution into a depthwise one, a band of rows at a time -------------------

// Depthwise output rows [oh0, oh1) of image n: per band, the expansion rows the band reads into
// `band` ([pw out blocks][band_in_rows][in_w][16]), then the depthwise rows from there.
template <class T>
void expand_dw_rows(const Nchw16cExpandDwPlan& pl, const float* pw_packed, const float* dw_packed,
                    const Nchw16cExpandDwIo& io, const Epilogue& pw_ep, const Epilogue& dw_ep,
                    int64_t n, int64_t oh0, int64_t oh1) {
  const cpu::Conv2DParams& dp = pl.dw.p;
  const int64_t in_w = dp.in_w, blocks = pl.dw.out_blocks;
  Nchw16cConvPlan pw = pl.pw;
  pw.y_plane = pl.band_in_rows * in_w * kBlk;
  const float* x = io.x + n * pw.in_blocks * dp.in_h * in_w * kBlk;
  for (int64_t b0 = oh0; b0 < oh1; b0 += pl.band_rows) {
    const int64_t b1 = std::min(oh1, b0 + pl.band_rows);
    const int64_t lo = std::max<int64_t>(0, b0 * dp.stride_h - dp.pad_top);
    const int64_t hi =
        std::min(dp.in_h, (b1 - 1) * dp.stride_h - dp.pad_top + (dp.k_h - 1) * dp.dil_h + 1);
    if (hi > lo) {
      for (int64_t t = 0; t < pw.co_tiles; ++t) {
        pointwise_task<T>(pw, x + lo * in_w * kBlk, nullptr, nullptr, pw_packed, io.pw_bias,
                          nullptr, pw_ep, io.scratch, Nchw16cTask{t, 0, 0, 0}, 0, (hi - lo) * in_w,
                          nullptr);
      }
    }
    for (int64_t b = 0; b < blocks; ++b) {
      alignas(64) float block_b[kBlk];
      block_bias(io.dw_bias, dp.out_c, b * kBlk, 1, block_b);
      DwRow r{io.scratch + b * pw.y_plane,
              dw_packed + b * dp.k_h * dp.k_w * kBlk,
              block_b,
              0,
              0,
              0,
              lo};
      depthwise_rows<T>(pl.dw, r, io.residual, dw_ep, io.y, n * blocks + b, b0, b1);
    }
  }
}

template <class T>
void expand_dw_tasks(const Nchw16cExpandDwPlan& pl, const float* pw_packed, const float* dw_packed,
                     const Nchw16cExpandDwIo& io, const Epilogue& pw_ep, const Epilogue& dw_ep,
                     int64_t begin, int64_t end) {
  const FlushDenormals ftz;
  for (int64_t task = begin; task < end; ++task) {
    const int64_t c = task % pl.row_chunks, n = task / pl.row_chunks;
    const auto [oh0, oh1] = nchw16c_expand_dw_row_range(pl, c);
    expand_dw_rows<T>(pl, pw_packed, dw_packed, io, pw_ep, dw_ep, n, oh0, oh1);
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
