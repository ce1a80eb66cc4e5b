#pragma once
// The INT8 convolution on channels-last tensors (qkernels.h, QConvNhwcPlan). AVX-512 VNNI only:
// included by qkernels_vnni.cc after qkernels_gemm_impl.h, whose epilogue pieces
// (qkernels_common.h) it shares.
//
// An indirect convolution: a register tile is M (up to kQNhwcPixels) output pixels x NV (up to 4)
// vectors of 16 output channels. Per tap, each pixel's source is the address of its input pixel's
// channels, or of a row of x_zero where the tap reads padding; per channel quad, the NV weight
// vectors are loaded once and each pixel's 4 input bytes broadcast against them. No patch panel
// and no copy of the input: an NHWC pixel's channels are already the quads the dot product takes.

#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "base/int_math.h"
#include "kernels/x86/qkernels_common.h"

namespace kiln::kernels::x86 {
namespace {

constexpr int64_t kNhwcVectors = kQNhwcChannels / 16;  // weight vectors a quad of a block
constexpr int64_t kNhwcQuadBytes = kQNhwcChannels * 4;

void qnhwc_pack_weights_impl(const cpu::Conv2DParams& p, const int8_t* w, uint8_t* packed) {
  const int64_t taps = p.k_h * p.k_w, cq = p.in_c / 4;
  const int64_t blocks = ceil_div(p.out_c, kQNhwcChannels);
  uint8_t* d = packed;
  for (int64_t ob = 0; ob < blocks; ++ob) {
    for (int64_t tap = 0; tap < taps; ++tap) {
      for (int64_t q = 0; q < cq; ++q, d += kNhwcQuadBytes) {
        for (int64_t j = 0; j < kQNhwcChannels; ++j) {
          const int64_t oc = ob * kQNhwcChannels + j;
          for (int64_t t = 0; t < 4; ++t) {
            const int64_t at = (oc * p.in_c + q * 4 + t) * taps + tap;
            d[j * 4 + t] = oc < p.out_c ? static_cast<uint8_t>(w[at]) : uint8_t{0};
          }
        }
      }
    }
  }
  auto* sums = reinterpret_cast<int32_t*>(d);
  for (int64_t oc = 0; oc < blocks * kQNhwcChannels; ++oc) {
    int32_t s = 0;
    for (int64_t i = 0; oc < p.out_c && i < p.in_c * taps; ++i) s += w[oc * p.in_c * taps + i];
    sums[oc] = s;
  }
}

// Where a tile's pixels read (the first M of them): per pixel, its image's first byte and the
// input row and column its window starts at (before padding), and, where the window misses the
// padding, `at`, its first tap (null otherwise). When no pixel's window reaches the padding
// (`interior`), a tap's source is that address plus the tap's offset, the same for all pixels,
// found once a tile by the cursor instead of per tap, pixel and channel block in the dots with
// bounds checks. With 16 or 32 quads a tap (ResNet's 64- and 128-channel layers) that address
// arithmetic was a third of the dot products' time.
struct NhwcTile {
  const uint8_t* img[kQNhwcPixels];
  int64_t ih0[kQNhwcPixels], iw0[kQNhwcPixels];
  const uint8_t* at[kQNhwcPixels];
  bool interior;
};

// One tap that never reads padding (1x1, no pads; any stride): every tile is interior and has one
// tap.
inline bool nhwc_pointwise(const cpu::Conv2DParams& p) {
  return p.k_h == 1 && p.k_w == 1 && p.pad_top == 0 && p.pad_left == 0 &&
         (p.out_h - 1) * p.stride_h < p.in_h && (p.out_w - 1) * p.stride_w < p.in_w;
}

// A block's channels as the epilogue takes them: scale and bias through QOut (scaled() and
// bias()), the lanes of the last vector, and the block's first channel.
template <class Q>
struct NhwcCols {
  typename Q::F::V scale[kNhwcVectors], bias[kNhwcVectors];
  int nv = 0, last_lanes = 0;
  int64_t c0 = 0;
};

template <class Q>
NhwcCols<Q> nhwc_cols(const QOut<Q>& o, const cpu::Conv2DParams& p, int64_t ob) {
  using F = typename Q::F;
  NhwcCols<Q> c;
  c.c0 = ob * kQNhwcChannels;
  const int64_t n = min64(kQNhwcChannels, p.out_c - c.c0);
  c.nv = static_cast<int>(ceil_div(n, 16));
  c.last_lanes = static_cast<int>(n - (c.nv - 1) * 16);
  const QEpilogue& e = *o.e;
  const typename F::V in_scale = F::set1(e.in_scale);
  for (int v = 0; v < c.nv; ++v) {
    const int lanes = v == c.nv - 1 ? c.last_lanes : 16;
    const int64_t at = c.c0 + v * 16;
    c.scale[v] = o.scaled(F::mul(in_scale, Q::load_f32(e.w_scale + at, 0, lanes, F::zero())));
    c.bias[v] = o.bias(e.bias != nullptr ? o.scaled(Q::load_f32(e.bias + at, 0, lanes, F::zero()))
                                         : F::zero());
  }
  return c;
}

// acc[m][v] += the dot products of M pixels' cq quads (src[m]) with the weights' quads at w.
template <int M, int NV>
__attribute__((always_inline)) inline void qnhwc_quads(const uint8_t* const* src, int64_t cq,
                                                       const uint8_t* w, __m512i (&acc)[M][NV]) {
#pragma GCC unroll 2
  for (int64_t q = 0; q < cq; ++q, w += kNhwcQuadBytes) {
    __m512i b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(w + v * 64);
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) {
      int32_t quad;
      std::memcpy(&quad, src[m] + q * 4, 4);
      const __m512i a = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[m][v] = _mm512_dpbusd_epi32(acc[m][v], a, b[v]);
    }
  }
}

// The dot products of a tile: acc[m][v] = start[v] + the sums over taps and quads. The direct
// uint8 epilogue (QOut::direct_u8) of whole vectors follows in registers, each pixel's NV vectors
// stored by one saturating pack (true); any other epilogue gets the sums in out (false). Its own
// function so that the 24 accumulators get the registers to themselves.
template <class Q, int M, int NV, bool kPointwise>
__attribute__((noinline)) bool qnhwc_dots(const cpu::Conv2DParams& p, const NhwcTile& t,
                                          const uint8_t* pad, const uint8_t* w,
                                          const int32_t* start, const QOut<Q>& o,
                                          const NhwcCols<Q>& c, int64_t at, __m512i* out) {
  using F = typename Q::F;
  __m512i acc[M][NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const __m512i s = _mm512_loadu_si512(start + v * 16);
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m) acc[m][v] = s;
  }
  const int64_t cq = p.in_c / 4, row = p.in_w * p.in_c;
  if constexpr (kPointwise) {
    qnhwc_quads<M, NV>(t.at, cq, w, acc);
  } else if (t.interior) {
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      for (int64_t kw = 0; kw < p.k_w; ++kw, w += cq * kNhwcQuadBytes) {
        const int64_t off = kh * p.dil_h * row + kw * p.dil_w * p.in_c;
        const uint8_t* src[M];
#pragma GCC unroll 8
        for (int m = 0; m < M; ++m) src[m] = t.at[m] + off;
        qnhwc_quads<M, NV>(src, cq, w, acc);
      }
    }
  } else {
    for (int64_t kh = 0; kh < p.k_h; ++kh) {
      for (int64_t kw = 0; kw < p.k_w; ++kw, w += cq * kNhwcQuadBytes) {
        const uint8_t* src[M];
#pragma GCC unroll 8
        for (int m = 0; m < M; ++m) {
          const int64_t ih = t.ih0[m] + kh * p.dil_h, iw = t.iw0[m] + kw * p.dil_w;
          const bool inside = static_cast<uint64_t>(ih) < static_cast<uint64_t>(p.in_h) &&
                              static_cast<uint64_t>(iw) < static_cast<uint64_t>(p.in_w);
          src[m] = inside ? t.img[m] + ih * row + iw * p.in_c : pad;
        }
        qnhwc_quads<M, NV>(src, cq, w, acc);
      }
    }
  }
  if (o.direct_u8 && c.last_lanes == 16) {
    const uint8_t* z = o.e->z_u8;
    auto* y = static_cast<uint8_t*>(o.y);
#pragma GCC unroll 8
    for (int m = 0; m < M; ++m, at += p.out_c) {
      __m512i q[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        typename F::V f = F::fmadd(Q::to_float(acc[m][v]), c.scale[v], c.bias[v]);
        if (z != nullptr) {
          const __m512i zv = Q::load_u8(z + at + v * 16, 0, 16, Q::set1(0));
          f = F::fmadd(Q::to_float(zv), o.direct_z_scale, f);
        }
        q[v] = direct_u8_round(o, f);
      }
      Q::template store_u8_saturated<NV>(y + at, q);
    }
    return true;
  }
#pragma GCC unroll 8
  for (int m = 0; m < M; ++m) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) _mm512_store_si512(out + m * NV + v, acc[m][v]);
  }
  return false;
}

// The general epilogue of a tile's pixel (Y's element `at` is its channel c0), through q_finish.
template <class Q, int NV>
__attribute__((always_inline)) inline void qnhwc_finish_pixel(const QOut<Q>& o,
                                                              const NhwcCols<Q>& c,
                                                              const __m512i* acc, int64_t at) {
  q_finish<Q, NV>(
      o, acc, [&](auto&& fn) __attribute__((always_inline)) {
        for (int v = 0; v < NV; ++v) {
          const QSeg seg{0, v == NV - 1 ? c.last_lanes : 16, v * 16};
          fn(v, c.scale[v], c.bias[v], seg, at);
        }
      });
}

template <class Q, int M, int NV, bool kPointwise>
void qnhwc_tile(const cpu::Conv2DParams& p, const NhwcTile& t, const uint8_t* pad, const uint8_t* w,
                const int32_t* start, const QOut<Q>& o, const NhwcCols<Q>& c, int64_t pix) {
  alignas(64) __m512i done[M * NV];
  if (qnhwc_dots<Q, M, NV, kPointwise>(p, t, pad, w, start, o, c, pix * p.out_c + c.c0, done)) {
    return;
  }
  for (int m = 0; m < M; ++m) {
    qnhwc_finish_pixel<Q, NV>(o, c, done + m * NV, (pix + m) * p.out_c + c.c0);
  }
}

template <class Q>
using QNhwcTileFn = void (*)(const cpu::Conv2DParams&, const NhwcTile&, const uint8_t*,
                             const uint8_t*, const int32_t*, const QOut<Q>&, const NhwcCols<Q>&,
                             int64_t);

// Entry (m - 1) * kNhwcVectors + (nv - 1), per kind (any window, pointwise).
template <class Q, bool kPointwise, int... I>
constexpr auto make_qnhwc_table(std::integer_sequence<int, I...>) {
  return std::array<QNhwcTileFn<Q>, sizeof...(I)>{
      &qnhwc_tile<Q, I / kNhwcVectors + 1, I % kNhwcVectors + 1, kPointwise>...};
}

template <class Q, bool kPointwise>
inline constexpr auto kQNhwcTiles = make_qnhwc_table<Q, kPointwise>(
    std::make_integer_sequence<int, static_cast<int>(kQNhwcPixels* kNhwcVectors)>{});

// Output pixel coordinates walked tile by tile: one division where a walk starts, none after.
class NhwcCursor {
 public:
  NhwcCursor(const cpu::Conv2DParams& p, const uint8_t* x, int64_t pix)
      : p_(p),
        x_(x),
        image_(p.in_h * p.in_w * p.in_c),
        h_last_((p.k_h - 1) * p.dil_h),
        w_last_((p.k_w - 1) * p.dil_w) {
    const int64_t plane = p.out_h * p.out_w;
    n_ = pix / plane;
    oh_ = pix % plane / p.out_w;
    ow_ = pix % p.out_w;
  }
  // Where the next m pixels read; the cursor moves past them. Each window's first tap is found
  // from the row and column in registers: a second loop over ih0 and iw0, vectorized, read them
  // back from the stack right after their scalar stores, a store-forwarding stall that took half
  // of qnhwc_tasks' own time (4% of INT8 ResNet-50's).
  NhwcTile next(int64_t m) {
    NhwcTile t{};
    t.interior = true;
    for (int64_t i = 0; i < m; ++i) {
      t.img[i] = x_ + n_ * image_;
      const int64_t ih = t.ih0[i] = oh_ * p_.stride_h - p_.pad_top;
      const int64_t iw = t.iw0[i] = ow_ * p_.stride_w - p_.pad_left;
      const bool inside = ih >= 0 && ih + h_last_ < p_.in_h && iw >= 0 && iw + w_last_ < p_.in_w;
      t.interior = t.interior && inside;
      t.at[i] = inside ? t.img[i] + (ih * p_.in_w + iw) * p_.in_c : nullptr;
      if (++ow_ == p_.out_w) {
        ow_ = 0;
        if (++oh_ == p_.out_h) oh_ = 0, ++n_;
      }
    }
    return t;
  }

 private:
  const cpu::Conv2DParams& p_;
  const uint8_t* x_;
  int64_t image_, h_last_, w_last_;  // the window's last tap, from its first
  int64_t n_ = 0, oh_ = 0, ow_ = 0;
};

// Tasks [begin, end): each a range of output pixels (flat over images, rows and columns) for a
// range of output channel blocks (QConvNhwcPlan::ob_inner says which loop is inside).
template <class Q>
void qnhwc_tasks(const QConvNhwcPlan& pl, const uint8_t* x, const uint8_t* packed,
                 const QEpilogue& ep, void* y, uint8_t* scratch, int64_t begin, int64_t end) {
  const cpu::Conv2DParams& p = pl.p;
  const FlushDenormals ftz;
  const QOut<Q> o(ep, y);
  const int64_t block_bytes = p.k_h * p.k_w * (p.in_c / 4) * kNhwcQuadBytes;
  const auto* sums = reinterpret_cast<const int32_t*>(packed + pl.oc_blocks * block_bytes);
  // The scratch (qconv_nhwc_scratch_bytes): each block's epilogue constants, the accumulators'
  // start per channel, the row of x_zero that padding reads.
  auto* cols = reinterpret_cast<NhwcCols<Q>*>(scratch);
  static_assert(sizeof(NhwcCols<Q>) <= kQNhwcColsBytes && alignof(NhwcCols<Q>) <= 64);
  auto* start = reinterpret_cast<int32_t*>(scratch + pl.oc_blocks * kQNhwcColsBytes);
  uint8_t* pad = scratch + pl.oc_blocks * (kQNhwcColsBytes + kQNhwcChannels * 4);
  for (int64_t ob = 0; ob < pl.oc_blocks; ++ob) cols[ob] = nhwc_cols(o, p, ob);
  for (int64_t c = 0; c < pl.oc_blocks * kQNhwcChannels; ++c) {
    start[c] = zero_point_start(ep.in_zero, sums[c]);
  }
  std::memset(pad, ep.in_zero, static_cast<size_t>(p.in_c));
  const auto& tiles = nhwc_pointwise(p) ? kQNhwcTiles<Q, true> : kQNhwcTiles<Q, false>;
  auto run = [&](const NhwcTile& t, int64_t m, int64_t ob, int64_t pix) {
    const NhwcCols<Q>& c = cols[ob];
    tiles[(m - 1) * kNhwcVectors + (c.nv - 1)](p, t, pad, packed + ob * block_bytes, start + c.c0,
                                               o, c, pix);
  };
  for (int64_t task = begin; task < end; ++task) {
    const int64_t pb = task / pl.ob_tasks, ob0 = task % pl.ob_tasks * pl.ob_per_task;
    const int64_t ob1 = ob0 + pl.ob_per_task;
    const int64_t p0 = min64(pb * pl.px_per_block, pl.pixels);
    const int64_t p1 = min64(p0 + pl.px_per_block, pl.pixels);
    if (pl.ob_inner) {
      NhwcCursor at(p, x, p0);
      for (int64_t pix = p0; pix < p1; pix += kQNhwcPixels) {
        const int64_t m = min64(kQNhwcPixels, p1 - pix);
        const NhwcTile t = at.next(m);
        for (int64_t ob = ob0; ob < ob1; ++ob) run(t, m, ob, pix);
      }
    } else {
      for (int64_t ob = ob0; ob < ob1; ++ob) {
        NhwcCursor at(p, x, p0);
        for (int64_t pix = p0; pix < p1; pix += kQNhwcPixels) {
          const int64_t m = min64(kQNhwcPixels, p1 - pix);
          run(at.next(m), m, ob, pix);
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln::kernels::x86
