// F16C's conversions, 8 values an instruction. Only these functions are compiled for AVX and F16C
// (target attribute), so the rest of kiln keeps the baseline ISA; half_convert.cc calls them only
// when the CPU has both. The last n % 8 values go through the portable conversions.

#include "base/half_convert.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln {

#if defined(__x86_64__)

__attribute__((target("avx,f16c"))) void halves_to_floats_f16c(const uint16_t* src, float* dst,
                                                               int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  halves_to_floats_portable(src + i, dst + i, n - i);
}

__attribute__((target("avx,f16c"))) void floats_to_halves_f16c(const float* src, uint16_t* dst,
                                                               int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  floats_to_halves_portable(src + i, dst + i, n - i);
}

#else

void halves_to_floats_f16c(const uint16_t* src, float* dst, int64_t n) {
  halves_to_floats_portable(src, dst, n);
}
void floats_to_halves_f16c(const float* src, uint16_t* dst, int64_t n) {
  floats_to_halves_portable(src, dst, n);
}

#endif

}  // namespace kiln
