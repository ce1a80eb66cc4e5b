#pragma once
// How libgomp's threads wait after a parallel region: spin for GOMP_SPINCOUNT polls, then sleep.
// libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when it is loaded (before main), so a
// program that wants its own wait re-executes itself with it set.
//
// kiln's pool (openmp backend, parallel/thread_pool.h) and oneDNN's layers share libgomp's
// threads. libgomp's default spin (300 000 polls, 8.6 ms on the AMD EPYC host of 2026-11-27)
// burns a core between inferences; passive (no spin) makes every layer wake a sleeping thread
// (on 2 threads ResNet-50 FP32 8% slower, MobileNetV2 1.5-1.8x). kiln sets 10 000 polls (0.3 ms
// there), longer than the gap between two layers. With the threads backend (kiln's own workers), the
// OpenMP threads must not spin at all, or they hold the cores kiln's workers need next: passive.

#include <string>

namespace kiln::parallel {

// The spin kiln's openmp backend asks libgomp for, in polls (GOMP_SPINCOUNT).
inline constexpr const char* kOpenMpSpinCount = "10000";

// When neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT is set (or both are empty): sets the wait the
// pool's backend wants (above) and re-executes this program (/proc/self/exe) with the same
// arguments. Returns only when it did not re-execute: the user chose a wait (kept), or exec failed
// (the program then runs with libgomp's default).
void reexec_with_openmp_wait(char** argv);

// OMP_WAIT_POLICY as libgomp read it, lower-case; "" when unset.
std::string openmp_wait_policy();
// GOMP_SPINCOUNT as libgomp read it; "" when unset.
std::string openmp_spin_count();
// The two as one line: "GOMP_SPINCOUNT=10000", "OMP_WAIT_POLICY=passive", both, or "libgomp's
// default" when neither is set.
std::string describe_openmp_wait(const std::string& policy, const std::string& spin_count);

}  // namespace kiln::parallel
