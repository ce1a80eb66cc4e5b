// kiln's x86 implicit-GEMM convolution with its residual in Y's own buffer (the engine's arena
// gives a FusedConv's output the residual's bytes when the residual dies there): the same result
// as with the residual in a buffer of its own, on every path of the plan (flat over the whole
// depth, flat in depth steps, B read in place, patches in depth steps, stride 2, pixel tails), on
// plans made for 1 and 2 threads, on each ISA the host has.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/conv_cases.h"
#include "kernels/x86/kernels.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

namespace kx = kernels::x86;

void expect_in_place_matches(kx::Isa isa, const ConvGeom& g, int threads) {
  ConvGemmRun r = make_conv_gemm_run(isa, conv2d_params(g), threads, 0.1f, 3.0f);
  r.run();
  const std::vector<float>& y = r.y;
  std::vector<float> y_in_place = r.res;
  r.epilogue.addend = y_in_place.data();
  kx::conv_gemm_run(r.plan, r.x.data(), r.packed_w.data(), r.epilogue, y_in_place.data(),
                    r.scratch.data(), 0, r.plan.tasks);
  int bad = 0;
  for (size_t i = 0; i < y.size() && bad < 5; ++i) {
    if (std::abs(y_in_place[i] - y[i]) > 1e-5f * (1.0f + std::abs(y[i]))) {
      ADD_FAILURE() << "y[" << i << "] in place " << y_in_place[i] << ", separate " << y[i];
      ++bad;
    }
  }
}

TEST(X86ConvInPlace, ResidualInTheOutputBufferMatchesASeparateOne) {
  const ConvGeom geoms[] = {
      // flat: whole depth (shallow, in column blocks), depth steps, B read in place, 7x7 tails
      {.cin = 136, .cout = 40, .h = 14, .w = 14, .kh = 1, .kw = 1},
      {.cin = 600, .cout = 96, .h = 12, .w = 23, .kh = 1, .kw = 1},
      {.cin = 32, .cout = 16, .h = 20, .w = 21, .kh = 1, .kw = 1},
      {.cin = 300, .cout = 75, .h = 7, .w = 7, .kh = 1, .kw = 1},
      // patches: depth steps (20 x 9 = 180 deep), stride 2, a batch and groups
      {.cin = 20, .cout = 24, .h = 11, .w = 13, .pad = 1},
      {.cin = 64, .cout = 40, .h = 15, .w = 15, .kh = 1, .kw = 1, .stride = 2},
      {.batch = 2, .cin = 8, .cout = 12, .group = 2, .h = 9, .w = 9, .pad = 1},
  };
  for (kx::Isa isa : x86_kernel_isas()) {
    for (const ConvGeom& g : geoms) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(::testing::Message()
                     << (isa == kx::Isa::kAvx512 ? "avx512 " : "avx2 ") << g.cin << "->" << g.cout
                     << " k" << g.kh << " s" << g.stride << " " << g.h << "x" << g.w << " plan for "
                     << threads << " thread(s)");
        expect_in_place_matches(isa, g, threads);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::testing
