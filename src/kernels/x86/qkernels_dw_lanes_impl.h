#pragma once
// The INT8 depthwise convolution with 16 channels in the lanes of a zmm (qkernels.h,
// QDepthwiseLanesPlan). AVX-512 only: included by qkernels_vnni.cc after qkernels_dw_impl.h, whose
// dw_finish (the plane kernel's epilogue over a row of int32 sums) finishes each channel's band.
//
// A task (image b, channels c0..c0+15, output rows oh0..oh1) runs in three steps over the thread's
// scratch:
//   1. its padded input rows as [row][pixel][16 channels] floats holding x - x_zero (the padding
//      0): 16 pixels of 16 channel rows widened to floats, transposed in registers;
//   2. per output row, blocks of 8 pixels, one FMA per tap and block pixel into [pixel][16];
//   3. those sums transposed back to [channel][pixel] as int32 (exact: see qkernels.h), and each
//      channel's band of pixels, contiguous in Y's plane, finished like one long row.

#include <immintrin.h>

#include <cstring>

#include "base/int_math.h"
#include "kernels/x86/qkernels_dw_impl.h"

namespace kiln::kernels::x86 {
namespace {

constexpr int64_t kDwlC = 16;     // channels per task
constexpr int64_t kDwlBlock = 8;  // output pixels per register block

// r[i] lane j -> r[j] lane i.
inline __attribute__((always_inline)) void transpose16x16(__m512 r[16]) {
  __m512 u[16];
  for (int b = 0; b < 16; b += 4) {
    const __m512 t0 = _mm512_unpacklo_ps(r[b], r[b + 1]), t1 = _mm512_unpackhi_ps(r[b], r[b + 1]);
    const __m512 s0 = _mm512_unpacklo_ps(r[b + 2], r[b + 3]);
    const __m512 s1 = _mm512_unpackhi_ps(r[b + 2], r[b + 3]);
    u[b] = _mm512_shuffle_ps(t0, s0, 0x44);  // column 4L of rows b..b+3, 128-bit lane L
    u[b + 1] = _mm512_shuffle_ps(t0, s0, 0xEE);
    u[b + 2] = _mm512_shuffle_ps(t1, s1, 0x44);
    u[b + 3] = _mm512_shuffle_ps(t1, s1, 0xEE);
  }
  __m512 v[16];
  for (int k = 0; k < 4; ++k) {
    v[k] = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88);
    v[4 + k] = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xDD);
    v[8 + k] = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
    v[12 + k] = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xDD);
  }
  for (int k = 0; k < 4; ++k) {
    r[k] = _mm512_shuffle_f32x4(v[k], v[8 + k], 0x88);
    r[8 + k] = _mm512_shuffle_f32x4(v[k], v[8 + k], 0xDD);
    r[4 + k] = _mm512_shuffle_f32x4(v[4 + k], v[12 + k], 0x88);
    r[12 + k] = _mm512_shuffle_f32x4(v[4 + k], v[12 + k], 0xDD);
  }
}

// The same for bytes: r[i] byte j -> r[j] byte i (four rounds of interleaves).
inline __attribute__((always_inline)) void transpose16x16_u8(__m128i r[16]) {
  __m128i t[16], u[16];
  for (int b = 0; b < 16; b += 4) {
    t[b] = _mm_unpacklo_epi8(r[b], r[b + 1]);  // columns 0-7 of rows b, b+1 as 16-bit pairs
    t[b + 1] = _mm_unpackhi_epi8(r[b], r[b + 1]);
    t[b + 2] = _mm_unpacklo_epi8(r[b + 2], r[b + 3]);
    t[b + 3] = _mm_unpackhi_epi8(r[b + 2], r[b + 3]);
    u[b] = _mm_unpacklo_epi16(t[b], t[b + 2]);  // columns 0-3 of rows b..b+3 as dwords
    u[b + 1] = _mm_unpackhi_epi16(t[b], t[b + 2]);
    u[b + 2] = _mm_unpacklo_epi16(t[b + 1], t[b + 3]);
    u[b + 3] = _mm_unpackhi_epi16(t[b + 1], t[b + 3]);
  }
  for (int h = 0; h < 16; h += 8) {  // rows h..h+7: columns 2m, 2m + 1 as qwords
    for (int m = 0; m < 4; ++m) {
      t[h + 2 * m] = _mm_unpacklo_epi32(u[h + m], u[h + 4 + m]);
      t[h + 2 * m + 1] = _mm_unpackhi_epi32(u[h + m], u[h + 4 + m]);
    }
  }
  for (int k = 0; k < 8; ++k) {
    r[2 * k] = _mm_unpacklo_epi64(t[k], t[8 + k]);
    r[2 * k + 1] = _mm_unpackhi_epi64(t[k], t[8 + k]);
  }
}

// Weights [c, 1, kh, kw] as [group][tap][16] floats, channels past out_c zero.
inline void qdw_lanes_pack_weights_impl(const cpu::Conv2DParams& p, const int8_t* w,
                                        uint8_t* packed) {
  const int64_t taps = p.k_h * p.k_w;
  auto* d = reinterpret_cast<float*>(packed);
  for (int64_t g = 0; g < ceil_div(p.out_c, kDwlC); ++g) {
    for (int64_t t = 0; t < taps; ++t) {
      for (int64_t c = 0; c < kDwlC; ++c, ++d) {
        const int64_t oc = g * kDwlC + c;
        *d = oc < p.out_c ? static_cast<float>(w[oc * taps + t]) : 0.0f;
      }
    }
  }
}

// Padded row pr (input row pr - pad_top) of channels x_c[0..nc) into `dst` (wp pixels x 16).
inline void dwl_fill_row(const QDepthwiseLanesPlan& pl, const uint8_t* const* x_c, int64_t nc,
                         __m512 x_zero, int64_t pr, float* dst) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t ih = pr - p.pad_top;
  if (ih < 0 || ih >= p.in_h) {
    std::memset(dst, 0, static_cast<size_t>(pl.wp * kDwlC) * sizeof(float));
    return;
  }
  const __m512 zero = _mm512_setzero_ps();
  for (int64_t i = 0; i < p.pad_left; ++i) _mm512_store_ps(dst + i * kDwlC, zero);
  for (int64_t i = p.pad_left + p.in_w; i < pl.wp; ++i) _mm512_store_ps(dst + i * kDwlC, zero);
  for (int64_t j = 0; j < p.in_w; j += kDwlC) {
    const int64_t n = min64(kDwlC, p.in_w - j);
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    __m128i v[16];
    for (int64_t c = 0; c < kDwlC; ++c) {
      v[c] = c < nc ? _mm_maskz_loadu_epi8(mask, x_c[c] + ih * p.in_w + j) : _mm_setzero_si128();
    }
    transpose16x16_u8(v);
    float* d = dst + (p.pad_left + j) * kDwlC;
    for (int64_t i = 0; i < n; ++i) {
      const __m512 f = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(v[i]));
      _mm512_store_ps(d + i * kDwlC, _mm512_sub_ps(f, x_zero));
    }
  }
}

// Output row oh0 + r of the band: blocks of 8 pixels, each pixel's 16 sums handed to
// sink(band pixel, sums); the last block runs past out_w (into pixels the next row, computed
// after, hands over again, or past the band: the caller's slack).
template <class Sink>
inline void dwl_row(const QDepthwiseLanesPlan& pl, const float* in, const float* w, int64_t r,
                    Sink&& sink) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t row_floats = pl.wp * kDwlC, sw = p.stride_w * kDwlC;
  const float* base = in + r * p.stride_h * row_floats;
  for (int64_t ow = 0; ow < p.out_w; ow += kDwlBlock) {
    __m512 acc[kDwlBlock];
#pragma GCC unroll 8
    for (int u = 0; u < kDwlBlock; ++u) acc[u] = _mm512_setzero_ps();
    const float* wk = w;
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      const float* row = base + kh * p.dil_h * row_floats + ow * sw;
      for (int64_t kw = 0; kw < p.k_w; ++kw, wk += kDwlC) {
        const __m512 wv = _mm512_loadu_ps(wk);  // prepacked weights may sit at any offset
        const float* at = row + kw * p.dil_w * kDwlC;
#pragma GCC unroll 8
        for (int u = 0; u < kDwlBlock; ++u) {
          acc[u] = _mm512_fmadd_ps(_mm512_load_ps(at + u * sw), wv, acc[u]);
        }
      }
    }
#pragma GCC unroll 8
    for (int u = 0; u < kDwlBlock; ++u) sink(r * p.out_w + ow + u, acc[u]);
  }
}

// The general epilogue: the band's sums [pixel][16] transposed to int32 rows per channel, each
// finished by the plane kernel's dw_finish as one row of `pixels`.
template <class Q>
void dwl_finish_planes(const QOut<Q>& o, const QEpilogue& ep, const float* sums, int32_t* chan,
                       int64_t pitch, int64_t pixels, int64_t nc, int64_t c0, int64_t y_base,
                       int64_t plane_out) {
  using F = typename Q::F;
  constexpr int64_t kL = Q::kLanes;
  for (int64_t j = 0; j < pixels; j += kDwlC) {
    __m512 v[16];
    for (int64_t i = 0; i < kDwlC; ++i) v[i] = _mm512_load_ps(sums + (j + i) * kDwlC);
    transpose16x16(v);
    for (int64_t c = 0; c < nc; ++c) {
      _mm512_store_si512(chan + c * pitch + j, _mm512_cvtps_epi32(v[c]));
    }
  }
  for (int64_t c = 0; c < nc; ++c) {
    const int64_t oc = c0 + c;
    const typename F::V scale = F::set1(o.scaled(ep.in_scale * ep.w_scale[oc]));
    const typename F::V bias = F::set1(o.bias(ep.bias, oc));
    const int32_t* a = chan + c * pitch;
    for (int64_t j = 0; j < pixels; j += 4 * kL) {
      const int u = static_cast<int>(min64(4, ceil_div(pixels - j, kL)));
      typename Q::I acc[4];
      for (int i = 0; i < u; ++i) acc[i] = Q::load(a + j + i * kL);
      dw_finish<Q, 4>(o, acc, u, j, pixels, scale, bias, y_base + c * plane_out);
    }
  }
}

// The band's uint8 results [pixel][16 channels] transposed into each channel's plane.
inline void dwl_store_planes(const uint8_t* bytes, int64_t pixels, int64_t nc, uint8_t* y,
                             int64_t plane_out) {
  for (int64_t j = 0; j < pixels; j += kDwlC) {
    const int64_t n = min64(kDwlC, pixels - j);
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    __m128i v[16];
    for (int64_t i = 0; i < kDwlC; ++i) {
      v[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(bytes + (j + i) * kDwlC));
    }
    transpose16x16_u8(v);
    for (int64_t c = 0; c < nc; ++c) _mm_mask_storeu_epi8(y + c * plane_out + j, mask, v[c]);
  }
}

template <class Q>
void qdw_lanes_tasks(const QDepthwiseLanesPlan& pl, const uint8_t* x, const uint8_t* packed,
                     const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  static_assert(Q::kLanes == kDwlC, "a channel's sums are finished in vectors of 16 pixels");
  const FlushDenormals ftz;
  const QOut<Q> o(ep, y);
  const cpu::Conv2DParams& p = pl.p;
  const int64_t taps = p.k_h * p.k_w, plane_in = p.in_h * p.in_w, plane_out = p.out_h * p.out_w;
  const int64_t band_pixels = pl.band_rows * p.out_w, pitch = round_up(band_pixels, kDwlC);
  auto* in = reinterpret_cast<float*>(scratch);
  float* sums = in + pl.in_rows * pl.wp * kDwlC;
  auto* chan = reinterpret_cast<int32_t*>(sums + (pitch + kDwlC) * kDwlC);
  const __m512 x_zero = _mm512_set1_ps(static_cast<float>(ep.in_zero));
  const bool lanes_epilogue = o.direct_u8 && ep.z_u8 == nullptr;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t band = t % pl.bands, g = t / pl.bands % pl.groups, b = t / pl.bands / pl.groups;
    const int64_t c0 = g * kDwlC, nc = min64(kDwlC, p.out_c - c0);
    const int64_t oh0 = band * pl.band_rows, rows = min64(pl.band_rows, p.out_h - oh0);
    const int64_t pixels = rows * p.out_w;
    const uint8_t* x_c[kDwlC];
    for (int64_t c = 0; c < nc; ++c) x_c[c] = x + (b * p.in_c + c0 + c) * plane_in;
    const int64_t in_rows = (rows - 1) * p.stride_h + (p.k_h - 1) * p.dil_h + 1;
    for (int64_t r = 0; r < in_rows; ++r) {
      dwl_fill_row(pl, x_c, nc, x_zero, oh0 * p.stride_h + r, in + r * pl.wp * kDwlC);
    }
    const auto* w = reinterpret_cast<const float*>(packed) + g * taps * kDwlC;
    const int64_t y_base = (b * p.out_c + c0) * plane_out + oh0 * p.out_w;
    if (!lanes_epilogue) {
      for (int64_t r = 0; r < rows; ++r) {
        dwl_row(pl, in, w, r, [&](int64_t px, __m512 v) { _mm512_store_ps(sums + px * kDwlC, v); });
      }
      dwl_finish_planes<Q>(o, ep, sums, chan, pitch, pixels, nc, c0, y_base, plane_out);
      continue;
    }
    // uint8 out, no residual: the epilogue in the lanes (per-channel scale and bias vectors).
    alignas(64) float scale_c[kDwlC] = {}, bias_c[kDwlC] = {};
    for (int64_t c = 0; c < nc; ++c) {
      scale_c[c] = o.scaled(ep.in_scale * ep.w_scale[c0 + c]);
      bias_c[c] = o.bias(ep.bias, c0 + c);
    }
    const __m512 scale = _mm512_load_ps(scale_c), bias = _mm512_load_ps(bias_c);
    auto* bytes = reinterpret_cast<uint8_t*>(sums);
    for (int64_t r = 0; r < rows; ++r) {
      dwl_row(pl, in, w, r, [&](int64_t px, __m512 v) {
        const typename Q::I q = direct_u8_quantize(o, _mm512_fmadd_ps(v, scale, bias));
        _mm_store_si128(reinterpret_cast<__m128i*>(bytes + px * kDwlC), _mm512_cvtepi32_epi8(q));
      });
    }
    dwl_store_planes(bytes, pixels, nc, static_cast<uint8_t*>(y) + y_base, plane_out);
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
