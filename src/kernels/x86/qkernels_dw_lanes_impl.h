#pragma once
// The INT8 depthwise convolution with 16 channels in the int32 lanes of a zmm (qkernels.h,
// QDepthwiseLanesPlan). AVX-512 VNNI only: included by qkernels_vnni.cc after qkernels_dw_impl.h,
// whose dw_finish (the plane kernel's epilogue over a row of int32 sums) finishes the general case.
//
// A task (image b, channels c0..c0+15, output rows oh0..oh1) runs over the thread's scratch:
//   1. per padded input row of the band: 16 pixels of 16 channel rows loaded and byte-transposed
//      into T (pixel-major, 16 bytes a pixel, x_zero in the padding), then T's tap quads into the
//      band's quad rows: quad p holds, per channel (an int32 lane), T[p], T[p + dw], T[p + 2 dw],
//      T[p + 3 dw];
//   2. per output row, blocks of 8 pixels: per kernel row and quad of taps, one vpdpbusd of the
//      quad at ow * sw + 4 q dw with the 16 channels' 4 weights;
//   3. the epilogue: in the lanes (uint8 out, no residual) then byte-transposed into the planes,
//      or the sums transposed to [channel][pixel] and finished by dw_finish.

#include <immintrin.h>

#include <cstring>

#include "base/int_math.h"
#include "kernels/x86/qkernels_dw_impl.h"

namespace kiln::kernels::x86 {
namespace {

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

// Weights [c, 1, kh, kw] per group of 16 channels: for each kernel row and quad of taps, 16
// quads (channel c in bytes 4c..4c+3, taps past k_w and channels past out_c zero), then the 16
// channels' int32 weight sums.
inline void qdw_lanes_pack_weights_impl(const cpu::Conv2DParams& p, const int8_t* w,
                                        uint8_t* packed) {
  const int64_t taps = p.k_h * p.k_w, quads_w = ceil_div(p.k_w, 4);
  auto* d = reinterpret_cast<int8_t*>(packed);
  for (int64_t g = 0; g < ceil_div(p.out_c, kQDwLanesChannels); ++g) {
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      for (int64_t q = 0; q < quads_w; ++q) {
        for (int64_t c = 0; c < kQDwLanesChannels; ++c) {
          for (int64_t j = 0; j < 4; ++j, ++d) {
            const int64_t oc = g * kQDwLanesChannels + c, kw = q * 4 + j;
            *d = oc < p.out_c && kw < p.k_w ? w[oc * taps + kh * p.k_w + kw] : int8_t{0};
          }
        }
      }
    }
    auto* sums = reinterpret_cast<int32_t*>(d);
    for (int64_t c = 0; c < kQDwLanesChannels; ++c) {
      const int64_t oc = g * kQDwLanesChannels + c;
      int32_t sum = 0;
      for (int64_t t = 0; oc < p.out_c && t < taps; ++t) sum += w[oc * taps + t];
      sums[c] = sum;
    }
    d += kQDwLanesChannels * 4;
  }
}

// Padded row pr (input row pr - pad_top) of channels x_c[0..nc) as tap quads into `quads` (wq
// vectors), through the byte-transposed row `t` (wt pixels of 16 bytes).
inline void dwl_fill_row(const QDepthwiseLanesPlan& pl, const uint8_t* const* x_c, int64_t nc,
                         uint8_t x_zero, int64_t pr, __m128i* t, __m512i* quads) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t ih = pr - p.pad_top;
  if (ih < 0 || ih >= p.in_h) {
    const __m512i pad = _mm512_set1_epi8(static_cast<char>(x_zero));
    for (int64_t i = 0; i < pl.wq; ++i) _mm512_store_si512(quads + i, pad);
    return;
  }
  const __m128i pad = _mm_set1_epi8(static_cast<char>(x_zero));
  const int64_t data_end = min64(pl.wt, p.pad_left + p.in_w);
  for (int64_t i = 0; i < min64(p.pad_left, pl.wt); ++i) _mm_store_si128(t + i, pad);
  for (int64_t i = std::max(data_end, p.pad_left); i < pl.wt; ++i) _mm_store_si128(t + i, pad);
  for (int64_t j = 0; p.pad_left + j < data_end; j += kQDwLanesChannels) {
    const int64_t n = min64(kQDwLanesChannels, p.in_w - j);
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    __m128i v[16];
    for (int64_t c = 0; c < kQDwLanesChannels; ++c) {
      v[c] = c < nc ? _mm_maskz_loadu_epi8(mask, x_c[c] + ih * p.in_w + j) : pad;
    }
    transpose16x16_u8(v);
    for (int64_t i = 0; i < n && p.pad_left + j + i < pl.wt; ++i) t[p.pad_left + j + i] = v[i];
  }
  const int64_t dw = p.dil_w;
  for (int64_t i = 0; i < pl.wq; i += pl.quad_step) {
    const __m128i a = _mm_unpacklo_epi8(t[i], t[i + dw]), b = _mm_unpackhi_epi8(t[i], t[i + dw]);
    const __m128i c = _mm_unpacklo_epi8(t[i + 2 * dw], t[i + 3 * dw]);
    const __m128i d = _mm_unpackhi_epi8(t[i + 2 * dw], t[i + 3 * dw]);
    auto* q = reinterpret_cast<__m128i*>(quads + i);
    _mm_store_si128(q, _mm_unpacklo_epi16(a, c));  // channels 0-3
    _mm_store_si128(q + 1, _mm_unpackhi_epi16(a, c));
    _mm_store_si128(q + 2, _mm_unpacklo_epi16(b, d));
    _mm_store_si128(q + 3, _mm_unpackhi_epi16(b, d));
  }
}

// Output row oh0 + r of the band: blocks of 8 pixels, each pixel's 16 sums handed to
// sink(band pixel, sums); the last block runs past out_w (into pixels the next row, computed
// after, hands over again, or past the band: the caller's slack).
template <class Sink>
inline void dwl_row(const QDepthwiseLanesPlan& pl, const __m512i* quads, const uint8_t* w,
                    __m512i start, int64_t r, Sink&& sink) {
  const cpu::Conv2DParams& p = pl.p;
  const int64_t sw = p.stride_w, qstep = 4 * p.dil_w;
  const __m512i* base = quads + r * p.stride_h * pl.wq;
  for (int64_t ow = 0; ow < p.out_w; ow += kQDwLanesBlock) {
    __m512i acc[kQDwLanesBlock];
#pragma GCC unroll 8
    for (int u = 0; u < kQDwLanesBlock; ++u) acc[u] = start;
    const uint8_t* wk = w;
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      const __m512i* row = base + kh * p.dil_h * pl.wq + ow * sw;
      for (int64_t q = 0; q < pl.quads_w; ++q, wk += 64) {
        const __m512i wv = _mm512_loadu_si512(wk);  // prepacked weights may sit at any offset
        const __m512i* at = row + q * qstep;
#pragma GCC unroll 8
        for (int u = 0; u < kQDwLanesBlock; ++u) {
          acc[u] = _mm512_dpbusd_epi32(acc[u], _mm512_load_si512(at + u * sw), wv);
        }
      }
    }
#pragma GCC unroll 8
    for (int u = 0; u < kQDwLanesBlock; ++u) sink(r * p.out_w + ow + u, acc[u]);
  }
}

// The general epilogue: the band's sums [pixel][16] transposed to rows per channel (as floats'
// bits: the shuffles move lanes whole), each finished by the plane kernel's dw_finish as one row of
// `pixels`.
template <class Q>
void dwl_finish_planes(const QOut<Q>& o, const QEpilogue& ep, const __m512i* sums, int32_t* chan,
                       int64_t pitch, int64_t pixels, int64_t nc, int64_t c0, int64_t y_base,
                       int64_t plane_out) {
  using F = typename Q::F;
  constexpr int64_t kL = Q::kLanes;
  for (int64_t j = 0; j < pixels; j += kQDwLanesChannels) {
    __m512 v[16];
    for (int64_t i = 0; i < kQDwLanesChannels; ++i) v[i] = _mm512_castsi512_ps(sums[j + i]);
    transpose16x16(v);
    for (int64_t c = 0; c < nc; ++c) {
      _mm512_store_si512(chan + c * pitch + j, _mm512_castps_si512(v[c]));
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
  for (int64_t j = 0; j < pixels; j += kQDwLanesChannels) {
    const int64_t n = min64(kQDwLanesChannels, pixels - j);
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1);
    __m128i v[16];
    for (int64_t i = 0; i < kQDwLanesChannels; ++i) {
      v[i] = _mm_load_si128(reinterpret_cast<const __m128i*>(bytes + (j + i) * kQDwLanesChannels));
    }
    transpose16x16_u8(v);
    for (int64_t c = 0; c < nc; ++c) _mm_mask_storeu_epi8(y + c * plane_out + j, mask, v[c]);
  }
}

template <class Q>
void qdw_lanes_tasks(const QDepthwiseLanesPlan& pl, const uint8_t* x, const uint8_t* packed,
                     const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  static_assert(Q::kLanes == kQDwLanesChannels,
                "a channel's sums are finished in vectors of 16 pixels");
  const FlushDenormals ftz;
  const QOut<Q> o(ep, y);
  const cpu::Conv2DParams& p = pl.p;
  const int64_t plane_in = p.in_h * p.in_w, plane_out = p.out_h * p.out_w;
  const int64_t group_bytes = qdepthwise_lanes_group_bytes(p);
  const QDwLanesScratch layout = qdepthwise_lanes_scratch(pl);
  const int64_t pitch = layout.pitch;
  auto* quads = reinterpret_cast<__m512i*>(scratch);
  auto* t = reinterpret_cast<__m128i*>(quads + layout.row);
  __m512i* sums = quads + layout.sums;
  auto* chan = reinterpret_cast<int32_t*>(quads + layout.chan);
  const auto x_zero = static_cast<uint8_t>(ep.in_zero);
  const bool lanes_epilogue = o.direct_u8 && ep.z_u8 == nullptr;
  for (int64_t task = begin; task < end; ++task) {
    const int64_t band = task % pl.bands, g = task / pl.bands % pl.groups;
    const int64_t b = task / pl.bands / pl.groups;
    const int64_t c0 = g * kQDwLanesChannels, nc = min64(kQDwLanesChannels, p.out_c - c0);
    const int64_t oh0 = band * pl.band_rows, rows = min64(pl.band_rows, p.out_h - oh0);
    const int64_t pixels = rows * p.out_w;
    const uint8_t* x_c[kQDwLanesChannels];
    for (int64_t c = 0; c < nc; ++c) x_c[c] = x + (b * p.in_c + c0 + c) * plane_in;
    for (int64_t r = 0; r < qdepthwise_lanes_in_rows(p, rows); ++r) {
      dwl_fill_row(pl, x_c, nc, x_zero, oh0 * p.stride_h + r, t, quads + r * pl.wq);
    }
    const uint8_t* w = packed + g * group_bytes;
    const __m512i wsum = _mm512_loadu_si512(w + group_bytes - 64);
    const __m512i start = _mm512_mullo_epi32(wsum, _mm512_set1_epi32(-ep.in_zero));
    const int64_t y_base = (b * p.out_c + c0) * plane_out + oh0 * p.out_w;
    if (!lanes_epilogue) {
      for (int64_t r = 0; r < rows; ++r) {
        dwl_row(pl, quads, w, start, r, [&](int64_t px, __m512i v) { sums[px] = v; });
      }
      dwl_finish_planes<Q>(o, ep, sums, chan, pitch, pixels, nc, c0, y_base, plane_out);
      continue;
    }
    // uint8 out, no residual: the epilogue in the lanes (per-channel scale and bias vectors).
    alignas(64) float scale_c[kQDwLanesChannels] = {}, bias_c[kQDwLanesChannels] = {};
    for (int64_t c = 0; c < nc; ++c) {
      scale_c[c] = o.scaled(ep.in_scale * ep.w_scale[c0 + c]);
      bias_c[c] = o.bias(ep.bias, c0 + c);
    }
    const __m512 scale = _mm512_load_ps(scale_c), bias = _mm512_load_ps(bias_c);
    auto* bytes = reinterpret_cast<uint8_t*>(sums);
    for (int64_t r = 0; r < rows; ++r) {
      dwl_row(pl, quads, w, start, r, [&](int64_t px, __m512i v) {
        const __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(v), scale, bias);
        _mm_store_si128(reinterpret_cast<__m128i*>(bytes + px * kQDwLanesChannels),
                        _mm512_cvtepi32_epi8(direct_u8_quantize(o, f)));
      });
    }
    dwl_store_planes(bytes, pixels, nc, static_cast<uint8_t*>(y) + y_base, plane_out);
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
