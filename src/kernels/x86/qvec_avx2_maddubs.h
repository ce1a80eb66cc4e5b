#pragma once
// The INT8 traits for AVX2 with vpmaddubsw: QVecAvx2's lanes, loads, stores and epilogue, with a
// dot product of 3 instructions per 32 products (vpmaddubsw, vpmaddwd by ones, vpaddd) where
// QVecAvx2 issues 4. vpmaddubsw saturates each pair's int16 sum, so the tactics run it only on
// weights whose pairs cannot reach the bound (qkernels.h, q*_maddubs_overflow): then it is exact
// too. The quads are raw bytes, as on VNNI. Included only by qkernels_avx2_maddubs.cc.

#include "kernels/x86/qvec_avx2.h"

namespace kiln::kernels::x86 {

struct QVecAvx2Maddubs : QVecAvx2 {
  static constexpr int kMr = kQAvx2MaddubsBlocking.mr;
  static constexpr int kNv = kQAvx2MaddubsBlocking.nr / kQAvx2MaddubsBlocking.lanes;
  static constexpr int kWq = kQAvx2MaddubsBlocking.wq;  // a weight quad is its 4 bytes

  // u8 x s8 pairs into int16 (exact under the pair bound), then the pairs' sums into int32.
  static I dot4(I acc, I u8, I s8) {
    const I pairs = _mm256_maddubs_epi16(u8, s8);
    return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }

  using P = I;
  static P prep(I x) { return x; }
  static I dot(I acc, P x, const uint8_t* w) { return dot4(acc, x, set1(load32(w))); }
  using W = I;
  static W weight(const uint8_t* w) { return set1(load32(w)); }
  static I dot_w(I acc, P x, W w) { return dot4(acc, x, w); }

  static constexpr int kGemmVecBytes = 32;  // the s8 quads of 8 columns
  using GA = I;
  using GB = I;
  static GA gemm_a(uint32_t quad) { return set1(static_cast<int32_t>(quad)); }
  static GB gemm_b(const uint8_t* b) { return load(b); }
  static I gemm_dot(I acc, GA a, GB b) { return dot4(acc, a, b); }
  static void pack_quad(const int8_t* w, uint8_t* dst) { std::memcpy(dst, w, 4); }
  static void pack_gemm_vec(const int8_t* b, uint8_t* dst) { std::memcpy(dst, b, 32); }
};

}  // namespace kiln::kernels::x86
