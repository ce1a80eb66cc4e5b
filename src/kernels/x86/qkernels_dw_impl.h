#pragma once
// The INT8 depthwise convolution behind qkernels.h over an INT8 traits type Q. Per output plane
// the input plane is copied into a scratch plane padded with x_zero. For L = kLanes output pixels
// of one row and one kernel row, the taps are taken 4 at a time (a quad): output pixel ow needs
// the bytes at column ow * sw + (4q + j) * dw, j < 4. One load of a 64-byte window (AVX2: 32)
// at the vector's first pixel, a dword permutation giving each 128-bit lane the 16 bytes from
// its first pixel's column (lane l: pixels 4l..4l+3, from dword l * sw), and one byte shuffle
// (byte j of dword i: i * sw + j * dw) put each pixel's 4 input bytes in its int32 lane; one dot
// product with the quad's 4 weights (zero past k_w) accumulates them. A 3x3 kernel costs 3 dot
// products per 16 output pixels. The taps must fit the lane's 16 bytes: 3 sw + (min(k_w, 4) - 1)
// dw <= 15 and sw <= 4, else (large strides or dilations) the bytes are gathered one by one.

#include "kernels/x86/qkernels_conv_impl.h"

namespace kiln::kernels::x86 {
namespace {

// Weights [out_c, 1, kh, kw]: per channel, kh x quads_w quads (taps past kw zero), then the int32
// weight sums.
template <class Q>
void qdw_pack_weights_impl(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  const int64_t qw = qceil(p.k_w, 4);
  uint8_t* d = packed;
  for (int64_t oc = 0; oc < p.out_c; ++oc) {
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      for (int64_t q = 0; q < qw; ++q, d += Q::kWq) {
        int8_t quad[4] = {0, 0, 0, 0};
        for (int64_t j = 0; j < 4 && q * 4 + j < p.k_w; ++j) {
          quad[j] = w[(oc * p.k_h + kh) * p.k_w + q * 4 + j];
        }
        Q::pack_quad(quad, d);
      }
    }
  }
  auto* sums = reinterpret_cast<int32_t*>(packed + qround64(d - packed));
  for (int64_t oc = 0; oc < p.out_c; ++oc) {
    int32_t s = 0;
    for (int64_t i = 0; i < p.k_h * p.k_w; ++i) s += w[oc * p.k_h * p.k_w + i];
    sums[oc] = s;
  }
}

// The input plane's rows into the padded plane [hp x wp], whose x_zero padding and slack the
// caller wrote once (every channel's plane has the same).
inline void qpad_plane(const QDepthwisePlan& pl, const uint8_t* src, uint8_t* plane) {
  const cpu::Conv2DParams& p = pl.p;
  for (int64_t ih = 0; ih < p.in_h; ++ih) {
    std::memcpy(plane + (ih + p.pad_top) * pl.wp + p.pad_left, src + ih * p.in_w,
                static_cast<size_t>(p.in_w));
  }
}

// The byte shuffle of quad q: byte j of dword i is i * sw + j * dw (taps past k_w repeat j = 0).
template <class Q>
typename Q::I dw_shuffle(const cpu::Conv2DParams& p, int64_t q) {
  alignas(16) uint8_t b[16];
  const int64_t taps = min64(4, p.k_w - q * 4);
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      b[i * 4 + j] = static_cast<uint8_t>(i * p.stride_w + (j < taps ? j * p.dil_w : 0));
    }
  }
  return Q::broadcast_lane(_mm_load_si128(reinterpret_cast<const __m128i*>(b)));
}

// The quads of L pixels gathered byte by byte (geometries the window does not cover).
template <class Q>
typename Q::I dw_gather(const cpu::Conv2DParams& p, const uint8_t* at, int64_t q) {
  alignas(64) uint8_t b[Q::kLanes * 4];
  const int64_t taps = min64(4, p.k_w - q * 4);
  for (int64_t i = 0; i < Q::kLanes; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      b[i * 4 + j] = at[i * p.stride_w + (j < taps ? j * p.dil_w : 0)];
    }
  }
  return Q::load(b);
}

// Up to 4 vectors of L output pixels of row oh from column ow, over every kernel row and quad.
template <class Q, int U>
void dw_block(const QDepthwisePlan& pl, const uint8_t* plane, const uint8_t* wk, int64_t oh,
              int64_t ow, typename Q::I start, typename Q::I perm, const typename Q::I* shuf,
              typename Q::I* acc) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t sw = p.stride_w;
  // Local accumulators, copied out at the end: through `acc` (which the uint8_t loads may alias)
  // every update would go to memory.
  typename Q::I sum[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) sum[u] = start;
  for (int64_t kh = 0; kh < p.k_h; ++kh) {
    const uint8_t* row = plane + (oh * p.stride_h + kh * p.dil_h) * pl.wp + ow * sw;
    for (int64_t q = 0; q < pl.quads_w; ++q, wk += Q::kWq) {
      const uint8_t* base = row + q * 4 * p.dil_w;
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) {
        const uint8_t* at = base + u * Q::kLanes * sw;
        const typename Q::I v =
            pl.shuffle ? Q::window_quads(at, perm, shuf[q]) : dw_gather<Q>(p, at, q);
        sum[u] = Q::dot(sum[u], Q::prep(v), wk);
      }
    }
  }
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) acc[u] = sum[u];
}

// 3x3 kernels on the byte window (one quad per kernel row, weights broadcast once): U vectors of
// output row oh from `row` (input row oh * sh, at the vectors' first column), `dh` bytes between
// kernel rows. kPair: also output row oh + 1 (unit row stride and dilation), whose kernel rows are
// the next three input rows: 4 windows per vector give 6 dot products.
template <class Q, int U, bool kPair>
void dw3x3_block(const uint8_t* row, int64_t dh, int64_t step, typename Q::I start,
                 typename Q::I perm, typename Q::I shuf, const typename Q::W* w,
                 typename Q::I* acc0, typename Q::I* acc1) {
  typename Q::I s0[U], s1[U];
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) s0[u] = s1[u] = start;
  constexpr int kRows = kPair ? 4 : 3;
#pragma GCC unroll 4
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      const typename Q::P v = Q::prep(Q::window_quads(row + r * dh + u * step, perm, shuf));
      if (r < 3) s0[u] = Q::dot_w(s0[u], v, w[r]);
      if (kPair && r > 0) s1[u] = Q::dot_w(s1[u], v, w[r - 1]);
    }
  }
#pragma GCC unroll 4
  for (int u = 0; u < U; ++u) {
    acc0[u] = s0[u];
    if (kPair) acc1[u] = s1[u];
  }
}

// One output plane of a 3x3 kernel the byte window covers.
// Finishes the u output vectors of one row from column ow (kL lanes each, the last cut at out_w;
// row_base: Y's element of the row's column 0).
template <class Q, int N>
inline __attribute__((always_inline)) void dw_finish(const QOut<Q>& o, const typename Q::I* acc,
                                                     int u, int64_t ow, int64_t out_w,
                                                     typename Q::F::V scale, typename Q::F::V bias,
                                                     int64_t row_base) {
  constexpr int64_t kL = Q::kLanes;
  q_finish<Q, N>(
      o, acc, [&](auto&& fn) __attribute__((always_inline)) {
        for (int i = 0; i < u && ow + i * kL < out_w; ++i) {
          const int64_t col = ow + i * kL;
          fn(i, scale, bias, QSeg{0, static_cast<int>(min64(kL, out_w - col)), 0}, row_base + col);
        }
      });
}

template <class Q>
void dw3x3_plane(const QDepthwisePlan& pl, const uint8_t* plane, const uint8_t* wk,
                 typename Q::I start, typename Q::I perm, typename Q::I shuf, const QOut<Q>& o,
                 typename Q::F::V scale, typename Q::F::V bias, int64_t base) {
  using I = typename Q::I;
  constexpr int64_t kL = Q::kLanes;
  // AVX2 has 16 registers: two rows of 4 vectors would spill.
  constexpr int kMaxU = kL == 16 ? 4 : 2;
  const cpu::Conv2DParams& p = pl.p;
  const typename Q::W w[3] = {Q::weight(wk), Q::weight(wk + Q::kWq), Q::weight(wk + 2 * Q::kWq)};
  const int64_t step = kL * p.stride_w, dh = p.dil_h * pl.wp;
  const bool pairs = p.stride_h == 1 && p.dil_h == 1;
  for (int64_t oh = 0; oh < p.out_h;) {
    const bool pair = pairs && oh + 1 < p.out_h;
    const uint8_t* row = plane + oh * p.stride_h * pl.wp;
    for (int64_t ow = 0; ow < p.out_w;) {
      const int64_t left = p.out_w - ow;
      const int u = left > 2 * kL && kMaxU == 4 ? 4 : left > kL ? 2 : 1;
      const uint8_t* at = row + ow * p.stride_w;
      I acc0[4], acc1[4];
      if (pair) {
        if (u == 4) dw3x3_block<Q, kMaxU, true>(at, dh, step, start, perm, shuf, w, acc0, acc1);
        if (u == 2) dw3x3_block<Q, 2, true>(at, dh, step, start, perm, shuf, w, acc0, acc1);
        if (u == 1) dw3x3_block<Q, 1, true>(at, dh, step, start, perm, shuf, w, acc0, acc1);
      } else {
        if (u == 4) dw3x3_block<Q, kMaxU, false>(at, dh, step, start, perm, shuf, w, acc0, acc1);
        if (u == 2) dw3x3_block<Q, 2, false>(at, dh, step, start, perm, shuf, w, acc0, acc1);
        if (u == 1) dw3x3_block<Q, 1, false>(at, dh, step, start, perm, shuf, w, acc0, acc1);
      }
      dw_finish<Q, kMaxU>(o, acc0, u, ow, p.out_w, scale, bias, base + oh * p.out_w);
      if (pair)
        dw_finish<Q, kMaxU>(o, acc1, u, ow, p.out_w, scale, bias, base + (oh + 1) * p.out_w);
      ow = min64(p.out_w, ow + u * kL);
    }
    oh += pair ? 2 : 1;
  }
}

template <class Q>
void qdepthwise_tasks(const QDepthwisePlan& pl, const uint8_t* x, const uint8_t* packed,
                      const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  using I = typename Q::I;
  using F = typename Q::F;
  constexpr int64_t kL = Q::kLanes;
  const FlushDenormals ftz;
  const QOut<Q> o(ep, y);
  const cpu::Conv2DParams& p = pl.p;
  const int64_t mult = p.out_c / p.in_c, plane_out = p.out_h * p.out_w;
  const int64_t w_chan = p.k_h * pl.quads_w * Q::kWq;
  const auto* wsum = reinterpret_cast<const int32_t*>(packed + qround64(p.out_c * w_chan));
  const size_t plane_bytes = qdepthwise_scratch_bytes(pl);
  const I perm = Q::perm_for_stride(static_cast<int>(min64(p.stride_w, 4)));
  I shuf[8];  // quads_w <= 8 (kernels up to 32 wide) when shuffling
  for (int64_t q = 0; q < min64(pl.quads_w, 8); ++q) shuf[q] = dw_shuffle<Q>(p, q);
  const bool fast3x3 = pl.shuffle && p.k_h == 3 && p.k_w == 3;
  int64_t padded = -1;
  // The padding (x_zero) and slack, the same for every channel's plane: written once.
  std::memset(scratch, static_cast<uint8_t>(ep.in_zero), plane_bytes);
  for (int64_t t = begin; t < end; ++t) {
    const int64_t oc = t % p.out_c, b = t / p.out_c;
    const int64_t channel = b * p.in_c + oc / mult;
    if (channel != padded) {  // a multiplier reuses the padded plane
      qpad_plane(pl, x + channel * p.in_h * p.in_w, scratch);
      padded = channel;
    }
    const I start = Q::set1(zero_point_start(ep.in_zero, wsum[oc]));
    const typename F::V scale = F::set1(o.scaled(ep.in_scale * ep.w_scale[oc]));
    const typename F::V bias = F::set1(o.bias(ep.bias, oc));
    const uint8_t* wk = packed + oc * w_chan;
    const int64_t base = (b * p.out_c + oc) * plane_out;
    if (fast3x3) {
      dw3x3_plane<Q>(pl, scratch, wk, start, perm, shuf[0], o, scale, bias, base);
      continue;
    }
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      for (int64_t ow = 0; ow < p.out_w;) {
        const int64_t left = p.out_w - ow;
        const int u = left > 2 * kL ? 4 : left > kL ? 2 : 1;
        I acc[4];
        if (u == 4) {
          dw_block<Q, 4>(pl, scratch, wk, oh, ow, start, perm, shuf, acc);
        } else if (u == 2) {
          dw_block<Q, 2>(pl, scratch, wk, oh, ow, start, perm, shuf, acc);
        } else {
          dw_block<Q, 1>(pl, scratch, wk, oh, ow, start, perm, shuf, acc);
        }
        dw_finish<Q, 4>(o, acc, u, ow, p.out_w, scale, bias, base + oh * p.out_w);
        ow = min64(p.out_w, ow + u * kL);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
