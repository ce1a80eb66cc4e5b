// kiln's x86 depthwise kernel reads nothing past its buffers (input, weights, its per-thread
// scratch of phase planes) and writes nothing past Y: each buffer ends where an unmapped page
// begins. The wide-grid loads run past each plane's data into slack the plan sizes; this checks
// the sizing on every geometry of the depthwise sweep, on each ISA the host has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/conv_cases.h"
#include "kernels/guarded_floats.h"
#include "kernels/x86/kernels.h"

namespace kiln::testing {
namespace {

namespace kx = kernels::x86;

std::vector<kx::Isa> host_isas() {
  const CpuFeatureSet host = host_cpu_features();
  std::vector<kx::Isa> out;
  if ((host & kIsaAvx512) == kIsaAvx512) out.push_back(kx::Isa::kAvx512);
  if ((host & kIsaAvx2) == kIsaAvx2) out.push_back(kx::Isa::kAvx2);
  return out;
}

// Y through guarded buffers equals Y through ordinary ones (and nothing crashed).
void run_guarded(kx::Isa isa, const ConvGeom& g) {
  const kernels::cpu::Conv2DParams p = conv2d_params(g);
  const kx::DepthwisePlan plan = kx::plan_depthwise(isa, p);
  const size_t nx = static_cast<size_t>(p.batch * p.in_c * p.in_h * p.in_w);
  const size_t nw = static_cast<size_t>(p.out_c * p.k_h * p.k_w);
  const size_t ny = static_cast<size_t>(p.batch * p.out_c * p.out_h * p.out_w);
  const size_t ns = kx::depthwise_scratch_floats(plan);
  std::vector<float> x(nx), w(nw), y(ny), scratch(ns);
  for (size_t i = 0; i < nx; ++i) x[i] = std::cos(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < nw; ++i) w[i] = std::sin(0.7f * static_cast<float>(i));
  kx::Epilogue ep;
  kx::depthwise_run(plan, x.data(), w.data(), ep, y.data(), scratch.data(), 0, plan.tasks);

  GuardedFloats gx(nx), gw(nw), gy(ny), gs(ns);
  std::memcpy(gx.data(), x.data(), nx * sizeof(float));
  std::memcpy(gw.data(), w.data(), nw * sizeof(float));
  kx::depthwise_run(plan, gx.data(), gw.data(), ep, gy.data(), gs.data(), 0, plan.tasks);
  for (size_t i = 0; i < ny; ++i) ASSERT_EQ(gy.data()[i], y[i]) << "output " << i;
}

TEST(X86Depthwise, ReadsAndWritesNothingPastItsBuffers) {
  const std::vector<kx::Isa> isas = host_isas();
  if (isas.empty()) GTEST_SKIP() << "the host has neither AVX2 nor AVX-512";
  std::vector<ConvGeom> geoms = depthwise_sweep({{3, 1}, {2, 2}});
  for (int64_t stride : {1, 2, 3}) {
    geoms.push_back({.cin = 4, .cout = 4, .group = 4, .h = 7, .w = 7, .stride = stride, .pad = 1});
    geoms.push_back(
        {.cin = 2, .cout = 2, .group = 2, .h = 56, .w = 56, .stride = stride, .pad = 1});
  }
  for (kx::Isa isa : isas) {
    for (const ConvGeom& g : geoms) {
      SCOPED_TRACE(::testing::Message()
                   << (isa == kx::Isa::kAvx512 ? "avx512" : "avx2") << " c" << g.cin << "x"
                   << g.cout / g.cin << " " << g.h << "x" << g.w << " k" << g.kh << " s" << g.stride
                   << " p" << g.pad << " d" << g.dil);
      run_guarded(isa, g);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
