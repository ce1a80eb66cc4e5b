#pragma once
// The INT8 traits for AVX-512 with VNNI: 16 int32 lanes per zmm, vpdpbusd as the dot product of
// 4 u8 x s8 pairs per lane. Included only by qkernels_vnni.cc, the one translation unit compiled
// with AVX-512 and VNNI flags. The float side of the epilogue is VecAvx512.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/x86/qkernels.h"
#include "kernels/x86/vec_avx512.h"

namespace kiln::kernels::x86 {

struct QVecVnni {
  using F = VecAvx512;
  using I = __m512i;
  static constexpr int kLanes = 16;
  static constexpr int kMr = kVnniBlocking.mr;
  static constexpr int kNv = kVnniBlocking.nr / kVnniBlocking.lanes;
  static constexpr int kWq = kVnniBlocking.wq;  // a weight quad is its 4 bytes
  static constexpr int kVecBytes = 64;
  static_assert(kLanes == F::kLanes);

  static I set1(int32_t v) { return _mm512_set1_epi32(v); }
  static I sub(I a, I b) { return _mm512_sub_epi32(a, b); }
  static I add(I a, I b) { return _mm512_add_epi32(a, b); }
  // Rounded half to even.
  static I round(F::V v) {
    return _mm512_cvt_roundps_epi32(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static I load(const void* p) { return _mm512_loadu_si512(p); }
  static void store(void* p, I v) { _mm512_storeu_si512(p, v); }
  static int32_t load32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }

  // --- the dot products ------------------------------------------------------------------------
  // Convolution: u8 patch quads in a vector, each row's s8 weight quad broadcast from memory.
  using P = I;
  static P prep(I x) { return x; }
  static I dot(I acc, P x, const uint8_t* w) {
    return _mm512_dpbusd_epi32(acc, x, _mm512_set1_epi32(load32(w)));
  }
  // A weight quad broadcast once, for loops that reuse it.
  using W = I;
  static W weight(const uint8_t* w) { return _mm512_set1_epi32(load32(w)); }
  static I dot_w(I acc, P x, W w) { return _mm512_dpbusd_epi32(acc, x, w); }
  // L neighbouring pixels (quads 4 bytes apart in a panel row) against a weight panel, the
  // output channels in the lanes: per quad q, the panel's kMr rows of quad q (32 bytes, row r in
  // lane r) loaded once as the s8 operand of every pixel, each pixel's quad (at x + q * x_step +
  // 4 l) broadcast. acc[l][r] = start[r] + sum over q. U quads in flight per pixel (L x U >= 4
  // chains) hide vpdpbusd's latency.
  static constexpr bool kPixelDot = true;
  static_assert(kMr == 8 && kWq == 4, "a panel quad step is one 8-lane vector");
  template <int L>
  static void pixel_dots(int64_t kq, const uint8_t* w, const uint8_t* x, int64_t x_step,
                         const int32_t* start, int32_t (*acc)[kMr]) {
    constexpr int U = L == 1 ? 4 : 2;
    __m256i c[U][L];
#pragma GCC unroll 4
    for (int l = 0; l < L; ++l) {
      c[0][l] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(start));
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) c[u][l] = _mm256_setzero_si256();
    }
    auto step = [&](int u, int64_t q) __attribute__((always_inline)) {
      const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + q * 32));
#pragma GCC unroll 4
      for (int l = 0; l < L; ++l) {
        c[u][l] =
            _mm256_dpbusd_epi32(c[u][l], _mm256_set1_epi32(load32(x + q * x_step + l * 4)), wq);
      }
    };
    int64_t q = 0;
    if constexpr (L == 1) {
      // Two quads a zmm (quad q in lanes 0-7, q + 1 in 8-15): half the dot products.
      __m512i z[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                      _mm512_setzero_si512()};
      for (; q + 8 <= kq; q += 8) {
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) {
          const int64_t p = q + 2 * u;
          const __m512i xv = _mm512_mask_set1_epi32(_mm512_set1_epi32(load32(x + p * x_step)),
                                                    0xFF00, load32(x + (p + 1) * x_step));
          z[u] = _mm512_dpbusd_epi32(z[u], xv, _mm512_loadu_si512(w + p * 32));
        }
      }
      const __m512i zs =
          _mm512_add_epi32(_mm512_add_epi32(z[0], z[1]), _mm512_add_epi32(z[2], z[3]));
      c[1][0] = _mm512_castsi512_si256(zs);
      c[2][0] = _mm512_extracti64x4_epi64(zs, 1);
    }
    for (; q + U <= kq; q += U) {
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u) step(u, q + u);
    }
    for (; q < kq; ++q) step(0, q);
#pragma GCC unroll 4
    for (int l = 0; l < L; ++l) {
      __m256i sum = c[0][l];
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) sum = _mm256_add_epi32(sum, c[u][l]);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc[l]), sum);
    }
  }

  // GEMM: a row's u8 quad broadcast, the s8 quads of kLanes columns of B from memory.
  static constexpr int kGemmVecBytes = 64;
  using GA = I;
  using GB = I;
  static GA gemm_a(uint32_t quad) { return _mm512_set1_epi32(static_cast<int32_t>(quad)); }
  static GB gemm_b(const uint8_t* b) { return load(b); }
  static I gemm_dot(I acc, GA a, GB b) { return _mm512_dpbusd_epi32(acc, a, b); }
  static I mullo(I a, I b) { return _mm512_mullo_epi32(a, b); }
  // Packs one weight quad w[0..3] (s8) the way dot() reads it.
  static void pack_quad(const int8_t* w, uint8_t* dst) { std::memcpy(dst, w, 4); }
  // Packs the quads of kLanes columns of B (b[j * 4 + t]: column j, depth t) as gemm_dot reads
  // them.
  static void pack_gemm_vec(const int8_t* b, uint8_t* dst) { std::memcpy(dst, b, 64); }

  // --- masks and lane ranges -------------------------------------------------------------------
  static __mmask16 lanes(int lo, int hi) { return F::lanes(lo, hi); }

  // --- the epilogue's loads and stores (lanes [lo, hi) of p[0, kLanes), p may point outside
  // the data where the lanes are off) -----------------------------------------------------------
  static F::V to_float(I x) { return _mm512_cvtepi32_ps(x); }
  static F::V load_f32(const float* p, int lo, int hi, F::V old) {
    if (lo == 0 && hi == kLanes) return _mm512_loadu_ps(p);
    return _mm512_mask_loadu_ps(old, lanes(lo, hi), p);
  }
  static void store_f32(float* p, F::V v, int lo, int hi) {
    if (lo == 0 && hi == kLanes) return _mm512_storeu_ps(p, v);
    _mm512_mask_storeu_ps(p, lanes(lo, hi), v);
  }
  // u8 lanes as int32.
  static I load_u8(const uint8_t* p, int lo, int hi, I old) {
    if (lo == 0 && hi == kLanes) {
      return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    }
    const __mmask16 m = lanes(lo, hi);
    const I v = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p));
    return _mm512_mask_mov_epi32(old, m, v);
  }
  // int32 lanes (already in 0..255) as bytes.
  // (vpmovdb straight to memory is slow on some cores, Zen 4 among them: narrowed in a register,
  // then stored.)
  static void store_u8(uint8_t* p, I v, int lo, int hi) {
    const __m128i b = _mm512_cvtepi32_epi8(v);
    if (lo == 0 && hi == kLanes) return _mm_storeu_si128(reinterpret_cast<__m128i*>(p), b);
    _mm_mask_storeu_epi8(p, lanes(lo, hi), b);
  }
  // N (1..4) vectors of int32 lanes as N * 16 consecutive bytes, each lane saturated to 0..255:
  // two packs and a permute for up to four vectors, where vpmovdb costs two uops a vector (and
  // needs the lanes clamped first).
  template <int N>
  static void store_u8_saturated(uint8_t* p, const I* v) {
    static_assert(N >= 1 && N <= 4);
    const I a = _mm512_packs_epi32(v[0], v[N > 1 ? 1 : 0]);  // per 128-bit lane: v0, v1 words
    const I b = N > 2 ? _mm512_packs_epi32(v[2], v[N > 3 ? 3 : 2]) : a;
    const I bytes = _mm512_packus_epi16(a, b);  // dword 4k + i: vector i's lanes 4k .. 4k + 3
    const I order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const I out = _mm512_permutexvar_epi32(order, bytes);
    // Plain stores of the used part: a masked 48-byte store took a quarter of a 64-channel 1x1
    // convolution's epilogue on Zen 4.
    if constexpr (N == 4) {
      _mm512_storeu_si512(p, out);
    } else if constexpr (N == 3) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_castsi512_si256(out));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 32), _mm512_extracti32x4_epi32(out, 2));
    } else if constexpr (N == 2) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_castsi512_si256(out));
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_castsi512_si128(out));
    }
  }
  // clamp(rne(v * inv) + zero, 0, 255) as int32 lanes; NaN -> zero. lo = -zero, hi = 255 - zero
  // clamp before the conversion (they are integers: clamping and rounding commute).
  static I requantize(F::V v, F::V inv, F::V lo, F::V hi, I zero) {
    const F::V q = _mm512_mul_ps(v, inv);
    const __mmask16 ordered = _mm512_cmp_ps_mask(q, q, _CMP_ORD_Q);
    const F::V c = _mm512_min_ps(_mm512_maskz_max_ps(ordered, q, lo), hi);
    return _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zero);
  }

  // QuantizeLinear's rounding, by division: clamp(rne(v / scale), lo, hi) + zero.
  static I quantize(F::V v, F::V scale, F::V lo, F::V hi, I zero) {
    const F::V q = _mm512_div_ps(v, scale);
    const __mmask16 ordered = _mm512_cmp_ps_mask(q, q, _CMP_ORD_Q);
    const F::V c = _mm512_min_ps(_mm512_maskz_max_ps(ordered, q, lo), hi);
    return _mm512_add_epi32(
        _mm512_cvt_roundps_epi32(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zero);
  }
  // int8 lanes as int32, and int32 lanes (in -128..127) as int8: the low byte either way.
  static I load_i8(const int8_t* p, int lo, int hi) {
    return _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lanes(lo, hi), p));
  }
  static void store_i8(int8_t* p, I v, int lo, int hi) {
    store_u8(reinterpret_cast<uint8_t*>(p), v, lo, hi);
  }

  // --- packing bytes ---------------------------------------------------------------------------
  // 16 bytes from p[lo, hi), `fill` elsewhere; the other addresses are never touched.
  static __m128i load16(const uint8_t* p, int lo, int hi, __m128i fill) {
    if (lo == 0 && hi == 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm_mask_loadu_epi8(fill, static_cast<__mmask16>(lanes(lo, hi)), p);
  }

  // --- depthwise: the quads of kLanes neighbouring pixels from one window ------------------------
  // perm picks, for 128-bit lane l, the 16 bytes from dword l * stride; shuf then builds, in each
  // lane, its 4 pixels' quads (see qkernels_dw_impl.h).
  static I window_quads(const uint8_t* p, I perm, I shuf) {
    return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(perm, _mm512_loadu_si512(p)), shuf);
  }
  static I perm_for_stride(int stride) {
    alignas(64) int32_t idx[16];
    for (int l = 0; l < 4; ++l) {
      for (int d = 0; d < 4; ++d) idx[l * 4 + d] = l * stride + d;
    }
    return _mm512_load_si512(idx);
  }
  static I broadcast_lane(__m128i x) { return _mm512_broadcast_i32x4(x); }
};

}  // namespace kiln::kernels::x86
