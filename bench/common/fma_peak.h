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

// The INT8 peak: independent chains of vpdpbusd (AVX-512 VNNI: 64 u8 x s8 multiply-adds into
// int32 per instruction), in GOP/s (a multiply-add counts 2); 0 without VNNI (or under a
// KILN_MAX_ISA cap below it). INT8 kernels report their GOP/s as a fraction of this.
double vnni_peak_gops_one_thread(int64_t iterations);
double vnni_peak_gops(int threads, int64_t iterations = 400'000'000);

// The AMX-INT8 peak: independent chains of tdpbsud (16384 u8 x s8 multiply-adds into int32 per
// instruction), in GOP/s; 0 without AMX-INT8 (or under a KILN_MAX_ISA cap below it). The AMX
// tactics report their GOP/s as a fraction of this.
double amx_peak_gops_one_thread(int64_t iterations);
double amx_peak_gops(int threads, int64_t iterations = 4'000'000'000);

}  // namespace kiln::bench
