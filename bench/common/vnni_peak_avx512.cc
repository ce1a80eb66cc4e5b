// One ISA per translation unit: compiled with -mavx512f -mavx512vnni.
#include <immintrin.h>

#include <cstdint>

namespace kiln::bench {

// 24 independent vpdpbusd chains (24 x 16 lanes x 4 multiply-adds = 3072 ops per round), in
// assembly: GCC 12 keeps an array of vpdpbusd accumulators in memory in a loop like
// fma_peak_avx512.cc's (it ties the accumulator operand and copies it), which halves the rate
// measured on Zen 4. Returns the remaining count (0) so that the call is not dead code.
int64_t vnni_chains_avx512(int64_t rounds) {
  int64_t r = rounds;
  if (r <= 0) return 0;
  asm volatile(
      "vpternlogd $0xff, %%zmm30, %%zmm30, %%zmm30\n\t"
      "vpternlogd $0xff, %%zmm31, %%zmm31, %%zmm31\n\t"
      "1:\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm0\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm1\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm2\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm3\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm4\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm5\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm6\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm7\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm8\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm9\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm10\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm11\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm12\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm13\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm14\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm15\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm16\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm17\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm18\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm19\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm20\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm21\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm22\n\t"
      "vpdpbusd %%zmm30, %%zmm31, %%zmm23\n\t"
      "dec %0\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : "+r"(r)
      :
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
        "xmm21", "xmm22", "xmm23", "xmm30", "xmm31", "cc");
  return r;
}

}  // namespace kiln::bench
