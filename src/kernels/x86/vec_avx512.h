#pragma once
// The vector-traits layer for AVX-512 (16 float lanes, 32 zmm registers). Included only by
// kernels_avx512.cc, the one translation unit compiled with AVX-512 flags.

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/kernels.h"

namespace kiln::kernels::x86 {

struct VecAvx512 {
  using V = __m512;
  using Mask = __mmask16;  // a comparison result, for select()
  static constexpr int kLanes = 16;
  static_assert(kAvx512Blocking.lanes == kLanes);
  static constexpr int kMr = kAvx512Blocking.mr;
  static constexpr int kNv = kAvx512Blocking.nr / kAvx512Blocking.lanes;

  // One column of B against an A panel, the panel's kMr = 8 rows in the lanes of one 8-float
  // vector: acc[r] = sum over p of a[p * 8 + r] * b[p * b_step], in four chains (for a tile's
  // last few columns; see kernels_impl.h's pixel_columns).
  static constexpr bool kPixelDot = true;
  static_assert(kMr == 8, "an A panel step is one 8-float vector");
  static void pixel_dot(int64_t kc, const float* a, const float* b, int64_t b_step, float* acc) {
    __m256 c[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
    int64_t p = 0;
    for (; p + 4 <= kc; p += 4) {
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) {
        c[u] = _mm256_fmadd_ps(_mm256_loadu_ps(a + (p + u) * 8),
                               _mm256_set1_ps(b[(p + u) * b_step]), c[u]);
      }
    }
    for (; p < kc; ++p) {
      c[0] = _mm256_fmadd_ps(_mm256_loadu_ps(a + p * 8), _mm256_set1_ps(b[p * b_step]), c[0]);
    }
    _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_add_ps(c[0], c[1]), _mm256_add_ps(c[2], c[3])));
  }

  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm512_storeu_ps(p, v); }
  // 16 binary16 values widened to float32 (exact).
  static V load_half(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __mmask16 lanes(int lo, int hi) {  // lanes [lo, hi), 0 <= lo <= hi <= 16
    const uint32_t all = (1u << hi) - 1u;
    return static_cast<__mmask16>(all & ~((1u << lo) - 1u));
  }
  // Lanes [lo, hi) from p[lo..hi), zero elsewhere; the other addresses are never touched (masked
  // lanes do not fault), so p may point before or past the data.
  static V load_range(const float* p, int lo, int hi) {
    return _mm512_maskz_loadu_ps(lanes(lo, hi), p);
  }
  static V load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(lanes(0, n), p); }
  static void store_n(float* p, V v, int n) { _mm512_mask_storeu_ps(p, lanes(0, n), v); }
  // Lanes 0, 2, 4, ... of the 32 floats a then b.
  static V even(V a, V b) {
    const __m512i idx = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_permutex2var_ps(a, idx, b);
  }
  // Lanes 1, 3, 5, ... of the 32 floats a then b.
  static V odd(V a, V b) {
    const __m512i idx = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    return _mm512_permutex2var_ps(a, idx, b);
  }
  // The lanes whose bit is set in `mask`, moved down to lanes 0, 1, ... in order (the rest: zero;
  // callers ignore them).
  // The register form: the one with a memory destination is microcoded on AMD Zen 4.
  static V compress(V v, uint32_t mask) {
    return _mm512_maskz_compress_ps(static_cast<__mmask16>(mask), v);
  }
  // Lanes D .. D + 15 of the 32 floats lo then hi: a window D floats on from lo's, out of two
  // loaded vectors (valignd) instead of a third, unaligned load.
  static constexpr bool kAlignr = true;
  template <int D>
  static V alignr(V hi, V lo) {
    return _mm512_castsi512_ps(
        _mm512_alignr_epi32(_mm512_castps_si512(hi), _mm512_castps_si512(lo), D));
  }

  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V div(V a, V b) { return _mm512_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  // max/min return the second operand when either is NaN (the x86 rule): max(lo, x) keeps a NaN x.
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static float reduce_max(V a) { return _mm512_reduce_max_ps(a); }
  static float reduce_add(V a) { return _mm512_reduce_add_ps(a); }
  static V min(V a, V b) { return _mm512_min_ps(a, b); }
  static V abs(V a) { return _mm512_abs_ps(a); }
  static V xor_sign(V mag, V sign_src) {  // |mag| with the sign of sign_src (mag >= 0)
    const __m512i sign =
        _mm512_and_si512(_mm512_castps_si512(sign_src), _mm512_set1_epi32(INT32_MIN));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(mag), sign));
  }
  static Mask lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static Mask is_nan(V a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
  static V select(Mask m, V if_true, V if_false) {
    return _mm512_mask_blend_ps(m, if_false, if_true);
  }
  static V round(V a) {
    return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // The float whose exponent field holds a's low 8 bits (bits 0-7 of a's mantissa), its mantissa
  // 0: 2^(k - 127) for k in [1, 254], +0 for k = 0.
  static V exponent_from_low_bits(V a) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(a), 23));
  }
  // exp_parts takes 2^n in sixteenths from a table (pow2_sixteenths).
  static constexpr bool kExpTable16 = true;
  // 2^(m / 16 - 127) for the integer m in [16, 4079] held in a's low 12 mantissa bits: the exponent
  // field is m >> 4 and the mantissa that of 2^((m mod 16) / 16), from a 16-entry table (vpermd
  // reads each lane's low 4 bits as its index).
  static V pow2_sixteenths(V a) {
    const __m512i mant = _mm512_setr_epi32(
        0x000000, 0x05aac3, 0x0b95c2, 0x11c3d3, 0x1837f0, 0x1ef532, 0x25fed7, 0x2d583f, 0x3504f3,
        0x3d08a4, 0x45672a, 0x4e248c, 0x5744fd, 0x60ccdf, 0x6ac0c7, 0x75257d);
    const __m512i bits = _mm512_castps_si512(a);
    const __m512i e = _mm512_and_si512(_mm512_slli_epi32(bits, 19), _mm512_set1_epi32(0x7f800000));
    return _mm512_castsi512_ps(_mm512_or_si512(e, _mm512_permutexvar_epi32(bits, mant)));
  }
  // 1 / d within about 1 ulp: vrcp14ps (relative error 2^-14) and one Newton step.
  static V recip(V d) {
    const V r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
  }
  static V zero_where(Mask m, V a) { return _mm512_mask_mov_ps(a, m, _mm512_setzero_ps()); }
  // p * 2^n for integral n in [-150, 128], rounded as one multiply (overflow to inf, underflow
  // to a denormal or 0): one vscalefps.
  static V ldexp(V p, V n) { return _mm512_scalef_ps(p, n); }
};

}  // namespace kiln::kernels::x86
