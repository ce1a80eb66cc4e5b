#pragma once
// The vector-traits layer for AVX2 + FMA (8 float lanes, 16 ymm registers). Included only by
// kernels_avx2.cc, the one translation unit compiled with AVX2 flags.

#include <immintrin.h>

#include <array>
#include <cstdint>

#include "kernels/x86/kernels.h"

namespace kiln::kernels::x86 {

struct VecAvx2 {
  using V = __m256;
  using Mask = __m256;  // all-ones lanes where a comparison held
  static constexpr int kLanes = 8;
  static_assert(kAvx2Blocking.lanes == kLanes);
  static constexpr int kMr = kAvx2Blocking.mr;
  static constexpr int kNv = kAvx2Blocking.nr / kAvx2Blocking.lanes;

  // No pixel_dot (vec_avx512.h): the A panel's 6 rows are not one vector.
  static constexpr bool kPixelDot = false;
  static constexpr bool kAlignr = false;  // no single cross-lane shift (VecAvx512::alignr)

  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void storeu(float* p, V v) { _mm256_storeu_ps(p, v); }
  // 8 binary16 values widened to float32 (exact; F16C, which kernels_avx2.cc is built with).
  static V load_half(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static __m256i lanes(int lo, int hi) {
    const __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i ge_lo = _mm256_cmpgt_epi32(i, _mm256_set1_epi32(lo - 1));
    const __m256i lt_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(hi), i);
    return _mm256_and_si256(ge_lo, lt_hi);
  }
  // Lanes [lo, hi) from p[lo..hi), zero elsewhere; masked addresses are never touched.
  static V load_range(const float* p, int lo, int hi) {
    return _mm256_maskload_ps(p, lanes(lo, hi));
  }
  static V load_n(const float* p, int n) { return _mm256_maskload_ps(p, lanes(0, n)); }
  static void store_n(float* p, V v, int n) { _mm256_maskstore_ps(p, lanes(0, n), v); }
  // Lanes 0, 2, 4, ... of the 16 floats a then b.
  static V even(V a, V b) {
    const __m256 s = _mm256_shuffle_ps(a, b, 0x88);  // a0 a2 b0 b2 a4 a6 b4 b6
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8));
  }
  // Lanes 1, 3, 5, ... of the 16 floats a then b.
  static V odd(V a, V b) {
    const __m256 s = _mm256_shuffle_ps(a, b, 0xDD);  // a1 a3 b1 b3 a5 a7 b5 b7
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8));
  }
  // The lanes whose bit is set in `mask` (8 bits), moved down to lanes 0, 1, ... in order (the rest
  // are copies, for the caller to ignore): AVX2 has no compress, so a table gives each mask's
  // permutation, 3 bits a lane.
  static V compress(V v, uint32_t mask) {
    static constexpr auto kPerm = [] {
      std::array<uint32_t, 256> t{};
      for (uint32_t m = 0; m < 256; ++m) {
        uint32_t lane = 0;
        for (uint32_t i = 0; i < 8; ++i) {
          if ((m >> i & 1u) != 0) t[m] |= i << (3 * lane++);
        }
      }
      return t;
    }();
    const __m256i idx = _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int32_t>(kPerm[mask])),
                                          _mm256_setr_epi32(0, 3, 6, 9, 12, 15, 18, 21));
    return _mm256_permutevar8x32_ps(v, idx);
  }

  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V div(V a, V b) { return _mm256_div_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static float reduce_max(V a) {
    const __m128 h = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 q = _mm_max_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_max_ss(q, _mm_movehdup_ps(q)));
  }
  static float reduce_add(V a) {
    const __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    const __m128 q = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(q, _mm_movehdup_ps(q)));
  }
  static V min(V a, V b) { return _mm256_min_ps(a, b); }
  static V abs(V a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static V xor_sign(V mag, V sign_src) {
    return _mm256_or_ps(mag, _mm256_and_ps(sign_src, _mm256_set1_ps(-0.0f)));
  }
  static Mask lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static Mask is_nan(V a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
  static V select(Mask m, V if_true, V if_false) { return _mm256_blendv_ps(if_false, if_true, m); }
  static V round(V a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static V pow2i(V n) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
  }
  // The float whose exponent field holds a's low 8 bits (bits 0-7 of a's mantissa), its mantissa
  // 0: 2^(k - 127) for k in [1, 254], +0 for k = 0.
  static V exponent_from_low_bits(V a) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(a), 23));
  }
  // exp_parts computes 2^n for whole n (an 8-entry table would need a longer polynomial).
  static constexpr bool kExpTable16 = false;
  // 1 / d within about 2 ulp: vrcpps (relative error 1.5 * 2^-12) and one Newton step.
  static V recip(V d) {
    const V r = _mm256_rcp_ps(d);
    return _mm256_mul_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(2.0f)));
  }
  static V zero_where(Mask m, V a) { return _mm256_andnot_ps(m, a); }
  // p * 2^n for integral n in [-150, 128]: 2^n as two factors so that neither leaves the normal
  // range of pow2i.
  static V ldexp(V p, V n) {
    const V n1 = round(_mm256_mul_ps(n, _mm256_set1_ps(0.5f)));
    return _mm256_mul_ps(_mm256_mul_ps(p, pow2i(n1)), pow2i(_mm256_sub_ps(n, n1)));
  }
};

}  // namespace kiln::kernels::x86
