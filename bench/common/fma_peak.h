#pragma once
// The machine's measured floating-point peak: independent chains of packed FMAs, long enough to
// hide their latency, so the result is what the FMA ports can issue (2 x 512-bit per core on this
// CPU). Kernel GFLOP/s are reported as a fraction of this number, measured in the same run.

#include <cstdint>

namespace kiln::bench {

// GFLOP/s of one thread issuing `iterations` rounds of FMAs at the widest width the CPU has
// (AVX-512 when available, else AVX2+FMA); 0 when neither is available.
double fma_peak_gflops_one_thread(int64_t iterations);

// The peak of `threads` threads running fma_peak_gflops_one_thread at once (sum of their rates).
double fma_peak_gflops(int threads, int64_t iterations = 200'000'000);

}  // namespace kiln::bench
