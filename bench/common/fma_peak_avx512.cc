// One ISA per translation unit: compiled with -mavx512f.
#include <immintrin.h>

#include <cstdint>

namespace kiln::bench {

// 24 independent accumulator chains x 16 lanes x 2 flops per round.
double fma_chains_avx512(int64_t rounds) {
  __m512 acc[24];
#pragma GCC unroll 24
  for (int i = 0; i < 24; ++i) acc[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
    // Unrolled so that the accumulators live in registers: a loop over a spilled array would
    // measure loads and stores, not FMAs.
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 s = acc[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, acc[i]);
  // Returned so that the loop is not dead code. Summed from memory: GCC 12's
  // _mm512_reduce_add_ps warns about its own _mm256_undefined_pd.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  double sum = 0;
  for (float v : lanes) sum += v;
  return sum;
}

}  // namespace kiln::bench
