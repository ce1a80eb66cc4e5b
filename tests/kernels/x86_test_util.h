#pragma once
// Helpers for the x86 tactic and kernel tests (x86_conv_test.cc, x86_gemm_test.cc, the guard and
// in-place tests): which ISAs this host (and KILN_MAX_ISA) allows, running a tactic through the
// engine's prepacked path or on a pool of threads, and a direct run of the convolution kernel.

#include <string>
#include <vector>

#include "kernels/tactic_test_util.h"
#include "kernels/x86/kernels.h"

namespace kiln::testing {

// "avx512" and/or "avx2": the suffixes of the x86 tactics host_cpu_features() can run.
std::vector<std::string> x86_isas();

// The same as kernels::x86::Isa values, for tests that call the kernels directly.
std::vector<kernels::x86::Isa> x86_kernel_isas();

// "avx512" (with VNNI) and/or "avx2": the suffixes of the x86 INT8 tactics the host can run.
std::vector<std::string> x86_qisas();
// x86_qisas() and "amx" where the host (within KILN_MAX_ISA) has AMX-INT8: the implicit-GEMM
// convolution's ISAs.
std::vector<std::string> x86_qconv_isas();

// A convolution through kernels::x86::conv_gemm_run with a bias, a residual and ReLU, for the tests
// that call the kernel directly: deterministic inputs (x cos, w w_scale * sin, a bias ramp, the
// residual res_scale * sin), the weights packed, the plan's scratch.
struct ConvGemmRun {
  kernels::x86::ConvGemmPlan plan;
  std::vector<float> x, packed_w, bias, res, y, scratch;
  kernels::x86::Epilogue epilogue;  // bias and res, ReLU
  void run() {
    kernels::x86::conv_gemm_run(plan, x.data(), packed_w.data(), epilogue, y.data(), scratch.data(),
                                0, plan.tasks);
  }
};
ConvGemmRun make_conv_gemm_run(kernels::x86::Isa isa, const kernels::cpu::Conv2DParams& p,
                               int threads, float w_scale, float res_scale);

// The host (under KILN_MAX_ISA) runs the AVX-512 VNNI INT8 kernels.
bool host_has_vnni();
#define KILN_REQUIRE_VNNI()                                                                 \
  do {                                                                                      \
    if (!host_has_vnni()) GTEST_SKIP() << "the host (or KILN_MAX_ISA) has no AVX-512 VNNI"; \
  } while (0)

// Skips the test (GTEST_SKIP in the caller) when empty.
#define KILN_REQUIRE_X86_ISA(isas)                                                                 \
  do {                                                                                             \
    if ((isas).empty()) GTEST_SKIP() << "the host (or KILN_MAX_ISA) has neither AVX2 nor AVX-512"; \
  } while (0)

// How expect_matches_reference_prepacked runs the layer.
struct PrepackedRun {
  int threads = 1;  // the kernel's pool (1: no pool)
  // An FP16 layer (LayerSpec::fp16_weights): prepack() must store nothing, its weights are stored
  // once, as binary16.
  bool fp16_weights = false;
  // The case the reference runs, when it differs from the layer's (an FP16 layer's: B rounded).
  const OpCase* reference = nullptr;
};

// As expect_matches_reference, but the kernel is made from the tactic's prepack() result (the
// engine's path) and runs as `run` says.
void expect_matches_reference_prepacked(const std::string& tactic, const OpCase& c, Tolerance tol,
                                        const PrepackedRun& run);
inline void expect_matches_reference_prepacked(const std::string& tactic, const OpCase& c,
                                               Tolerance tol, int threads) {
  expect_matches_reference_prepacked(tactic, c, tol, PrepackedRun{.threads = threads});
}

}  // namespace kiln::testing
