#pragma once
// Winograd F(m x m, 3 x 3) between nChw16c tensors (kernels.h) over a vector-traits type T, for
// stride 1 and (m = 2) stride 2. Included after kernels_nchw16c_impl.h, whose pointwise register
// tiles run the alpha^2 products over the channels, by each ISA's translation unit; anonymous
// namespace as there.
//
// A task transforms its block of input tiles once, 16 channels a vector: V[xi][cb][tile][16] =
// B^T d B, one plane of blocked "pixels" (the tiles) per xi. Then, one register tile's width of
// output blocks at a time, each plane is a 1x1 convolution with that xi's transformed weights into
// M[xi][block][tile][16], and A^T M A gives the m x m output pixels, finished (bias, residual,
// activation) in registers and stored once. The transforms' coefficients are template arguments:
// zeros vanish and +-1 become adds.

#include <algorithm>
#include <utility>

#include "kernels/x86/kernels_nchw16c_impl.h"
#include "kernels/x86/winograd_matrices.h"

namespace kiln::kernels::x86 {
namespace {

template <int C>
constexpr int first_nonzero(const float (&row)[C]) {
  for (int c = 0; c < C; ++c) {
    if (row[c] != 0.0f) return c;
  }
  return 0;
}

template <class T, float K>
inline __attribute__((always_inline)) typename T::V wino_first(typename T::V x) {
  if constexpr (K == 1.0f) return x;
  if constexpr (K == -1.0f) return T::sub(T::zero(), x);
  return T::mul(T::set1(K), x);
}

template <class T, float K>
inline __attribute__((always_inline)) typename T::V wino_term(typename T::V acc, typename T::V x) {
  if constexpr (K == 0.0f) return acc;
  if constexpr (K == 1.0f) return T::add(acc, x);
  if constexpr (K == -1.0f) return T::sub(acc, x);
  return T::fmadd(T::set1(K), x, acc);
}

// Row R of Mat times in[0 .. C).
template <class T, const auto& Mat, int R, int... Cs>
inline __attribute__((always_inline)) typename T::V wino_row(const typename T::V* in,
                                                             std::integer_sequence<int, Cs...>) {
  constexpr int f = first_nonzero(Mat[R]);
  typename T::V acc = wino_first<T, Mat[R][f]>(in[f]);
  ((acc = wino_term<T, (Cs == f ? 0.0f : Mat[R][Cs])>(acc, in[Cs])), ...);
  return acc;
}

// out[0 .. Rows) = Mat [Rows x Cols] times in[0 .. Cols).
template <class T, const auto& Mat, int Rows, int Cols>
inline __attribute__((always_inline)) void wino_apply(const typename T::V* in, typename T::V* out) {
  [&]<int... Rs>(std::integer_sequence<int, Rs...>) {
    ((out[Rs] = wino_row<T, Mat, Rs>(in, std::make_integer_sequence<int, Cols>())), ...);
  }
  (std::make_integer_sequence<int, Rows>());
}

alignas(64) constexpr float kWinoZeros[4 * kBlk] = {};

// Where a tile's alpha x alpha input pixels are: src[i] + cb * step[i] is pixel i's channel block
// cb, or (in the padding) a zero block with step 0.
template <int A>
struct WinoTileInput {
  const float* src[A * A];
  int64_t step[A * A];
};

template <int A>
void locate_tile(const cpu::Conv2DParams& p, const float* x, int64_t in_plane, int64_t iy0,
                 int64_t ix0, WinoTileInput<A>& in) {
  for (int r = 0; r < A; ++r) {
    for (int c = 0; c < A; ++c) {
      const int64_t iy = iy0 + r, ix = ix0 + c;
      const bool inside = iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
      in.src[r * A + c] = inside ? x + (iy * p.in_w + ix) * kBlk : kWinoZeros;
      in.step[r * A + c] = inside ? in_plane : 0;
    }
  }
}

// B^T d B of channel block cb of one tile into v[xi * v_xi] (xi = row * A + column).
template <class T, int M, int S>
inline void wino_input_tile(const WinoTileInput<winograd::Transforms<M, S>::kAlpha>& in, int64_t cb,
                            float* v, int64_t v_xi) {
  using V = typename T::V;
  using W = winograd::Transforms<M, S>;
  constexpr int A = W::kAlpha;
#pragma GCC unroll 2
  for (int j = 0; j < kNv<T>; ++j) {
    V tmp[A][A];  // B^T d
#pragma GCC unroll 6
    for (int c = 0; c < A; ++c) {
      V col[A], t[A];
#pragma GCC unroll 6
      for (int r = 0; r < A; ++r) {
        const int i = r * A + c;
        col[r] = T::loadu(in.src[i] + cb * in.step[i] + j * T::kLanes);
      }
      wino_apply<T, W::kBt, A, A>(col, t);
#pragma GCC unroll 6
      for (int k = 0; k < A; ++k) tmp[k][c] = t[k];
    }
#pragma GCC unroll 6
    for (int k = 0; k < A; ++k) {
      V t[A];
      wino_apply<T, W::kBt, A, A>(tmp[k], t);
#pragma GCC unroll 6
      for (int c = 0; c < A; ++c) T::storeu(v + (k * A + c) * v_xi + j * T::kLanes, t[c]);
    }
  }
}

// A^T M A of one tile and output block (M at mb, planes m_xi apart) plus bias (16 floats) and
// the residual z, activated, stored: rows x cols of the m x m pixels fall inside Y. y and z are
// the tile's first output pixel; out_w pixels to the next row.
template <class T, int M, int S>
inline void wino_output_tile(const float* mb, int64_t m_xi, const float* bias, const float* z,
                             float* y, int64_t out_w, int rows, int cols, const Epilogue& ep) {
  using V = typename T::V;
  using W = winograd::Transforms<M, S>;
  constexpr int A = W::kAlpha;
#pragma GCC unroll 2
  for (int j = 0; j < kNv<T>; ++j) {
    V tmp[M][A];  // A^T M
#pragma GCC unroll 6
    for (int c = 0; c < A; ++c) {
      V col[A], t[M];
#pragma GCC unroll 6
      for (int k = 0; k < A; ++k) col[k] = T::loadu(mb + (k * A + c) * m_xi + j * T::kLanes);
      wino_apply<T, W::kAt, M, A>(col, t);
#pragma GCC unroll 4
      for (int r = 0; r < M; ++r) tmp[r][c] = t[r];
    }
    V out[M * M];
    const V b = T::loadu(bias + j * T::kLanes);
#pragma GCC unroll 4
    for (int r = 0; r < M; ++r) {
      wino_apply<T, W::kAt, M, A>(tmp[r], out + r * M);
#pragma GCC unroll 4
      for (int c = 0; c < M; ++c) {
        out[r * M + c] = T::add(out[r * M + c], b);
        if (z != nullptr && r < rows && c < cols) {
          out[r * M + c] =
              T::add(out[r * M + c], T::loadu(z + (r * out_w + c) * kBlk + j * T::kLanes));
        }
      }
    }
    activate_n<T, M * M>(ep, out);
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        T::storeu(y + (r * out_w + c) * kBlk + j * T::kLanes, out[r * M + c]);
      }
    }
  }
}

// Tiles [t0, t0 + nt) of image n: their transformed input into v, [xi][cb][tile][16]. Channel
// blocks outside, a group of tiles inside: each of the alpha^2 planes is then written in runs of
// consecutive tiles, and the group reads one input plane. (Tile by tile over all blocks, a stack
// of ten 256-channel 14x14 layers took 0.49 instead of 0.46 ms a layer.)
template <class T, int M, int S>
void wino_transform_input(const WinogradPlan& pl, const float* x, int64_t t0, int64_t nt,
                          float* v) {
  constexpr int A = winograd::Transforms<M, S>::kAlpha;
  constexpr int kGroup = 8;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t in_plane = p.in_h * p.in_w * kBlk;
  const int64_t v_xi = pl.v_plane;
  WinoTileInput<A> in[kGroup];
  for (int64_t g = 0; g < nt; g += kGroup) {
    const int n = static_cast<int>(std::min<int64_t>(kGroup, nt - g));
    for (int i = 0; i < n; ++i) {
      const int64_t ty = (t0 + g + i) / pl.tiles_w, tx = (t0 + g + i) % pl.tiles_w;
      locate_tile<A>(p, x, in_plane, ty * M * S - p.pad_top, tx * M * S - p.pad_left, in[i]);
    }
    for (int64_t cb = 0; cb < pl.in_blocks; ++cb) {
      for (int i = 0; i < n; ++i) {
        wino_input_tile<T, M, S>(in[i], cb, v + (cb * pl.tile_block + g + i) * kBlk, v_xi);
      }
    }
  }
}

// While tap xi's products run in chunks of tiles, the next tap's weights for the same output
// blocks are brought into L2 (NextWeights). In the network they come from memory (ResNet-50's
// 14x14 layers read 9.4 MB), and the hardware prefetchers restart at every 4 KiB page of these
// short runs. A stack of ten 256-channel 14x14 layers (94 MB of weights): 0.57 -> 0.49 ms a layer;
// T0 instead of T1 (into L1) or the tap after next: no better.

// Output blocks [ob0, ob0 + nb) of tiles [t0, t0 + nt): the products per xi into mbuf
// ([xi][block][tile][16]), then the inverse transform into Y.
template <class T, int M, int S>
void wino_co_tile(const WinogradPlan& pl, const float* packed, const float* v, float* mbuf,
                  const WinogradIo& io, const Epilogue& ep, int64_t n, int64_t t0, int64_t nt,
                  int64_t ob0, int64_t nb) {
  constexpr int A = winograd::Transforms<M, S>::kAlpha;
  const cpu::Conv2DParams& p = pl.p;
  const int64_t tb = pl.tile_block;
  const int64_t v_xi = pl.v_plane, m_xi = pl.m_plane;
  const int64_t w_xi = pl.out_blocks * p.in_c * kBlk;
  const bool half_last = p.out_c - (ob0 + nb - 1) * kBlk <= kBlk / 2;
  const int max_px = max_tile_pixels<T>(static_cast<int>(nb));
  const Epilogue none;
  for (int xi = 0; xi < A * A; ++xi) {
    PwArgs a{nullptr,       tb * kBlk,  kBlk,    p.in_c,  packed + xi * w_xi + ob0 * p.in_c * kBlk,
             p.in_c * kBlk, kWinoZeros, nullptr, nullptr, tb * kBlk};
    // A block per chunk of max_px tiles, from the first, as the prefetch was measured.
    const NextWeights ahead(xi + 1 < A * A ? a.w + w_xi : nullptr, nb, p.in_c, 0, 1,
                            std::min(nt, nb * max_px));
    for (int64_t t = 0; t < nt; t += max_px) {
      a.x = v + xi * v_xi + t * kBlk;
      a.y = mbuf + xi * m_xi + t * kBlk;
      ahead.set(t, t + max_px, a);
      pointwise_tile_any<T, true>(static_cast<int>(std::min<int64_t>(max_px, nt - t)),
                                  static_cast<int>(nb), half_last, a, none);
    }
  }
  const int64_t out_plane = p.out_h * p.out_w * kBlk;
  for (int64_t b = 0; b < nb; ++b) {
    alignas(64) float bias[kBlk];
    block_bias(io.bias, p.out_c, (ob0 + b) * kBlk, 1, bias);
    const int64_t plane = (n * pl.out_blocks + ob0 + b) * out_plane;
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t oy = (t0 + t) / pl.tiles_w * M, ox = (t0 + t) % pl.tiles_w * M;
      const int rows = static_cast<int>(std::min<int64_t>(M, p.out_h - oy));
      const int cols = static_cast<int>(std::min<int64_t>(M, p.out_w - ox));
      const int64_t at = plane + (oy * p.out_w + ox) * kBlk;
      wino_output_tile<T, M, S>(mbuf + (b * tb + t) * kBlk, m_xi, bias,
                                io.residual ? io.residual + at : nullptr, io.y + at, p.out_w, rows,
                                cols, ep);
    }
  }
}

template <class T, int M, int S>
void winograd_tasks_m(const WinogradPlan& pl, const float* packed, const WinogradIo& io,
                      const Epilogue& ep, int64_t begin, int64_t end) {
  constexpr int A = winograd::Transforms<M, S>::kAlpha;
  const FlushDenormals ftz;
  const cpu::Conv2DParams& p = pl.p;
  float* v = io.scratch;
  float* mbuf = v + A * A * pl.v_plane;
  for (int64_t task = begin; task < end; ++task) {
    const int64_t g = task % pl.co_groups, rest = task / pl.co_groups;
    const int64_t n = rest / pl.tile_blocks;
    const auto [t0, t1] = winograd_tile_range(pl, rest % pl.tile_blocks);
    const int64_t nt = t1 - t0;
    wino_transform_input<T, M, S>(pl, io.x + n * pl.in_blocks * p.in_h * p.in_w * kBlk, t0, nt, v);
    const int64_t ob_end = std::min(pl.out_blocks, (g + 1) * pl.co_group);
    for (int64_t ob0 = g * pl.co_group; ob0 < ob_end; ob0 += pl.co_tile) {
      wino_co_tile<T, M, S>(pl, packed, v, mbuf, io, ep, n, t0, nt, ob0,
                            std::min(pl.co_tile, ob_end - ob0));
    }
  }
}

template <class T>
void winograd_tasks(const WinogradPlan& pl, const float* packed, const WinogradIo& io,
                    const Epilogue& ep, int64_t begin, int64_t end) {
  if (pl.stride == 2) return winograd_tasks_m<T, 2, 2>(pl, packed, io, ep, begin, end);
  if (pl.m == 2) return winograd_tasks_m<T, 2, 1>(pl, packed, io, ep, begin, end);
  if (pl.m == 3) return winograd_tasks_m<T, 3, 1>(pl, packed, io, ep, begin, end);
  winograd_tasks_m<T, 4, 1>(pl, packed, io, ep, begin, end);
}

}  // namespace
}  // namespace kiln::kernels::x86
