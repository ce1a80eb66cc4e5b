// One ISA per translation unit: compiled with -mavx2 -mfma.
#include <immintrin.h>

#include <cstdint>

namespace kiln::bench {

// 12 independent accumulator chains x 8 lanes x 2 flops per round.
double fma_chains_avx2(int64_t rounds) {
  __m256 acc[12];
#pragma GCC unroll 12
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
    // Unrolled so that the accumulators live in registers: a loop over a spilled array would
    // measure loads and stores, not FMAs.
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  double sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

}  // namespace kiln::bench
