#pragma once
// The INT8 traits for AVX2: 8 int32 lanes per ymm and an exact u8 x s8 dot product of 4 pairs per
// lane without VNNI. The u8 operand is split into its even and odd bytes as 16-bit lanes; the s8
// operand is sign-extended to 16 bits when packed (weights, B) as two int16 pairs per quad,
// (w0, w2) and (w1, w3); two vpmaddwd then give w0 x0 + w2 x2 and w1 x1 + w3 x3 exactly (each
// product is at most 255 * 128 in magnitude). vpmaddubsw is not used: its 16-bit pair sums
// saturate. Included only by qkernels_avx2.cc.

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/x86/qkernels.h"
#include "kernels/x86/vec_avx2.h"

namespace kiln::kernels::x86 {

struct QVecAvx2 {
  using F = VecAvx2;
  using I = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kMr = kQAvx2Blocking.mr;
  static constexpr int kNv = kQAvx2Blocking.nr / kQAvx2Blocking.lanes;
  static constexpr int kWq = kQAvx2Blocking.wq;  // (w0, w2), (w1, w3) as int16 pairs
  static constexpr int kVecBytes = 32;
  static_assert(kLanes == F::kLanes);
  // No pixel_dot (qvec_vnni.h): the 8-lane tail of a panel is cheap enough on the 4-row tile.
  static constexpr bool kPixelDot = false;

  static I set1(int32_t v) { return _mm256_set1_epi32(v); }
  static I sub(I a, I b) { return _mm256_sub_epi32(a, b); }
  static I add(I a, I b) { return _mm256_add_epi32(a, b); }
  // Rounded half to even: the default MXCSR rounding, which the kernels never change.
  static I round(F::V v) { return _mm256_cvtps_epi32(v); }
  static I load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
  static void store(void* p, I v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
  static int32_t load32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static I madd_sum(I acc, I a_lo, I b_lo, I a_hi, I b_hi) {
    return _mm256_add_epi32(
        acc, _mm256_add_epi32(_mm256_madd_epi16(a_lo, b_lo), _mm256_madd_epi16(a_hi, b_hi)));
  }

  // --- the dot products ------------------------------------------------------------------------
  struct P {
    I lo, hi;  // bytes 0, 2 and 1, 3 of each lane as 16-bit values
  };
  static P prep(I x) {
    return {_mm256_and_si256(x, _mm256_set1_epi16(0x00FF)), _mm256_srli_epi16(x, 8)};
  }
  static I dot(I acc, P x, const uint8_t* w) {
    return madd_sum(acc, x.lo, _mm256_set1_epi32(load32(w)), x.hi,
                    _mm256_set1_epi32(load32(w + 4)));
  }
  struct W {
    I w02, w13;
  };
  static W weight(const uint8_t* w) {
    return {_mm256_set1_epi32(load32(w)), _mm256_set1_epi32(load32(w + 4))};
  }
  static I dot_w(I acc, P x, W w) { return madd_sum(acc, x.lo, w.w02, x.hi, w.w13); }
  static constexpr int kGemmVecBytes = 64;  // the (b0, b2) pairs of 8 columns, then (b1, b3)
  struct GA {
    I lo, hi;
  };
  static GA gemm_a(uint32_t quad) {
    return {_mm256_set1_epi32(static_cast<int32_t>(quad & 0x00FF00FFu)),
            _mm256_set1_epi32(static_cast<int32_t>((quad >> 8) & 0x00FF00FFu))};
  }
  using GB = GA;
  static GB gemm_b(const uint8_t* b) { return {load(b), load(b + 32)}; }
  static I gemm_dot(I acc, GA a, GB b) { return madd_sum(acc, a.lo, b.lo, a.hi, b.hi); }
  static I mullo(I a, I b) { return _mm256_mullo_epi32(a, b); }
  static void pack_quad(const int8_t* w, uint8_t* dst) {
    const int16_t v[4] = {w[0], w[2], w[1], w[3]};
    std::memcpy(dst, v, 8);
  }
  static void pack_gemm_vec(const int8_t* b, uint8_t* dst) {
    int16_t lo[16], hi[16];
    for (int j = 0; j < 8; ++j) {
      lo[2 * j] = b[j * 4];
      lo[2 * j + 1] = b[j * 4 + 2];
      hi[2 * j] = b[j * 4 + 1];
      hi[2 * j + 1] = b[j * 4 + 3];
    }
    std::memcpy(dst, lo, 32);
    std::memcpy(dst + 32, hi, 32);
  }

  // --- the epilogue's loads and stores ---------------------------------------------------------
  static I lane_mask(int lo, int hi) {
    const I idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(hi), idx),
                            _mm256_cmpgt_epi32(idx, _mm256_set1_epi32(lo - 1)));
  }
  static F::V to_float(I x) { return _mm256_cvtepi32_ps(x); }
  static F::V load_f32(const float* p, int lo, int hi, F::V old) {
    if (lo == 0 && hi == kLanes) return _mm256_loadu_ps(p);
    const I m = lane_mask(lo, hi);
    return _mm256_blendv_ps(old, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static void store_f32(float* p, F::V v, int lo, int hi) {
    if (lo == 0 && hi == kLanes) return _mm256_storeu_ps(p, v);
    _mm256_maskstore_ps(p, lane_mask(lo, hi), v);
  }
  static I load_u8(const uint8_t* p, int lo, int hi, I old) {
    if (lo == 0 && hi == kLanes) {
      return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    }
    alignas(32) int32_t v[8];
    store(v, old);
    for (int l = lo; l < hi; ++l) v[l] = p[l];
    return load(v);
  }
  // Lanes [lo, hi) of v (each in [0, 255]) as bytes.
  static void store_u8(uint8_t* p, I v, int lo, int hi) {
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    store_lane_bytes(p, _mm_packus_epi16(w, w), lo, hi);
  }
  // N (1..4) vectors of int32 lanes as N * 8 consecutive bytes, each lane saturated to 0..255
  // (signed packs first: vpackusdw's words past 32767 would read as negative to vpackuswb).
  template <int N>
  static void store_u8_saturated(uint8_t* p, const I* v) {
    static_assert(N >= 1 && N <= 4);
    const I a = _mm256_packs_epi32(v[0], v[N > 1 ? 1 : 0]);  // per 128-bit lane: v0, v1 words
    const I b = N > 2 ? _mm256_packs_epi32(v[2], v[N > 3 ? 3 : 2]) : a;
    const I bytes = _mm256_packus_epi16(a, b);  // dword 4k + i: vector i's lanes 4k .. 4k + 3
    const I out = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    if constexpr (N == 4) {
      store(p, out);
    } else if constexpr (N == 3) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(out));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p + 16), _mm256_extracti128_si256(out, 1));
    } else if constexpr (N == 2) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(out));
    } else {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(p), _mm256_castsi256_si128(out));
    }
  }
  static I requantize(F::V v, F::V inv, F::V lo, F::V hi, I zero) {
    const F::V q = _mm256_mul_ps(v, inv);
    const F::V ordered = _mm256_cmp_ps(q, q, _CMP_ORD_Q);
    const F::V c = _mm256_min_ps(_mm256_max_ps(_mm256_and_ps(q, ordered), lo), hi);
    // The default MXCSR rounding (nearest, ties to even); the kernels never change it.
    return _mm256_add_epi32(_mm256_cvtps_epi32(c), zero);
  }

  static I quantize(F::V v, F::V scale, F::V lo, F::V hi, I zero) {
    const F::V q = _mm256_div_ps(v, scale);
    const F::V ordered = _mm256_cmp_ps(q, q, _CMP_ORD_Q);
    const F::V c = _mm256_min_ps(_mm256_max_ps(_mm256_and_ps(q, ordered), lo), hi);
    return _mm256_add_epi32(_mm256_cvtps_epi32(c), zero);
  }
  static I load_i8(const int8_t* p, int lo, int hi) {
    if (lo == 0 && hi == kLanes) {
      return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    }
    alignas(32) int32_t v[8] = {};
    for (int l = lo; l < hi; ++l) v[l] = p[l];
    return load(v);
  }
  static void store_i8(int8_t* p, I v, int lo, int hi) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    store_lane_bytes(reinterpret_cast<uint8_t*>(p), _mm_packs_epi16(w, w), lo, hi);
  }
  // Bytes [lo, hi) of the low 8 of `bytes` (the 8 lanes packed) to p + lo. A part vector (a
  // 7-wide plane's rows, a 14-wide one's second vector) is written 4, 2 and 1 bytes at a time:
  // byte by byte from a copy on the stack, such stores were a fifth of an INT8 depthwise layer on
  // 7x7.
  static void store_lane_bytes(uint8_t* p, __m128i bytes, int lo, int hi) {
    if (lo == 0 && hi == kLanes) return _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bytes);
    auto rest = static_cast<uint64_t>(_mm_cvtsi128_si64(bytes)) >> (8 * lo);
    p += lo;
    const int n = hi - lo;
    if ((n & 4) != 0) {
      const auto four = static_cast<uint32_t>(rest);
      std::memcpy(p, &four, 4);
      p += 4;
      rest >>= 32;
    }
    if ((n & 2) != 0) {
      const auto two = static_cast<uint16_t>(rest);
      std::memcpy(p, &two, 2);
      p += 2;
      rest >>= 16;
    }
    if ((n & 1) != 0) *p = static_cast<uint8_t>(rest);
  }

  // --- packing bytes ---------------------------------------------------------------------------
  static __m128i load16(const uint8_t* p, int lo, int hi, __m128i fill) {
    if (lo == 0 && hi == 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    alignas(16) uint8_t t[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(t), fill);
    for (int l = lo; l < hi; ++l) t[l] = p[l];
    return _mm_load_si128(reinterpret_cast<const __m128i*>(t));
  }

  // --- depthwise -------------------------------------------------------------------------------
  static I window_quads(const uint8_t* p, I perm, I shuf) {
    return _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(load(p), perm), shuf);
  }
  static I perm_for_stride(int stride) {
    alignas(32) int32_t idx[8];
    for (int l = 0; l < 2; ++l) {
      for (int d = 0; d < 4; ++d) idx[l * 4 + d] = l * stride + d;
    }
    return load(idx);
  }
  static I broadcast_lane(__m128i x) { return _mm256_broadcastsi128_si256(x); }
};

}  // namespace kiln::kernels::x86
