// kiln's x86 float convolutions read nothing past their buffers and write nothing past Y: each
// buffer ends where an unmapped page begins. The depthwise kernel (input, weights, its per-thread
// scratch of phase planes): the wide-grid loads run past each plane's data into slack the plan
// sizes. The implicit-GEMM convolution (input, packed weights, bias, residual, its scratch of
// packed patch panels): masked tails, patch gathers at the image's edges, the GEMM tile's
// prefetches of the next column panel. The GEMM with constant B (a row-major A read in place by
// the register tile, a transposed one packed). Every geometry of the sweeps, on each ISA the host
// has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "base/cpu_features.h"
#include "kernels/conv_cases.h"
#include "kernels/guarded_floats.h"
#include "kernels/x86/kernels.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

namespace kx = kernels::x86;

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
  const std::vector<kx::Isa> isas = x86_kernel_isas();
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

// The implicit-GEMM convolution with a bias, a residual and ReLU (the epilogue reads them all)
// through guarded buffers equals the same through ordinary ones.
void run_gemm_guarded(kx::Isa isa, const ConvGeom& g) {
  ConvGemmRun r = make_conv_gemm_run(isa, conv2d_params(g), 1, 1.0f, 1.0f);
  r.run();
  GuardedFloats gx(r.x.size()), gpw(r.packed_w.size()), gb(r.bias.size()), gr(r.res.size()),
      gy(r.y.size()), gs(r.scratch.size());
  const auto copy = [](GuardedFloats& to, const std::vector<float>& from) {
    std::memcpy(to.data(), from.data(), from.size() * sizeof(float));
  };
  copy(gx, r.x);
  copy(gpw, r.packed_w);
  copy(gb, r.bias);
  copy(gr, r.res);
  kx::Epilogue ep = r.epilogue;
  ep.row_bias = gb.data();
  ep.addend = gr.data();
  kx::conv_gemm_run(r.plan, gx.data(), gpw.data(), ep, gy.data(), gs.data(), 0, r.plan.tasks);
  for (size_t i = 0; i < r.y.size(); ++i) ASSERT_EQ(gy.data()[i], r.y[i]) << "output " << i;
}

TEST(X86ConvGemm, ReadsAndWritesNothingPastItsBuffers) {
  const std::vector<kx::Isa> isas = x86_kernel_isas();
  if (isas.empty()) GTEST_SKIP() << "the host has neither AVX2 nor AVX-512";
  std::vector<ConvGeom> geoms = channel_sweep(x86_channel_cases({.cin = 7, .cout = 17}), {1, 3});
  // Flat 1x1 plans (one channel a contiguous row; whole_depth on 7x7), the 3-channel stride-2
  // stem, and planes of many column panels with a row and a column tail.
  geoms.push_back({.cin = 32, .cout = 16, .h = 13, .w = 11, .kh = 1, .kw = 1});
  geoms.push_back({.cin = 40, .cout = 20, .h = 7, .w = 7, .kh = 1, .kw = 1});
  geoms.push_back({.cin = 3, .cout = 32, .h = 30, .w = 30, .stride = 2, .pad = 1});
  geoms.push_back({.cin = 5, .cout = 9, .h = 33, .w = 35, .pad = 1});
  for (kx::Isa isa : isas) {
    for (const ConvGeom& g : geoms) {
      SCOPED_TRACE(::testing::Message()
                   << (isa == kx::Isa::kAvx512 ? "avx512" : "avx2") << " c" << g.cin << "->"
                   << g.cout << " g" << g.group << " " << g.h << "x" << g.w << " k" << g.kh << " s"
                   << g.stride << " p" << g.pad << " d" << g.dil);
      run_gemm_guarded(isa, g);
    }
  }
}

// C = A x B through guarded buffers, A row-major (read in place) or transposed (packed), against a
// double-precision product: tails in rows, columns and depth, and depths past one depth block.
void run_gemm_product_guarded(kx::Isa isa, int64_t m, int64_t n, int64_t k, bool trans_a) {
  Tensor ta = random_f32({m, k}, 1), tb = random_f32({k, n}, 2);
  const std::span<const float> a = ta.span<float>(), b = tb.span<float>();
  GuardedFloats ga(a.size()), gpb(kx::gemm_packed_b_floats(isa, k, n)),
      gc(static_cast<size_t>(m * n));
  std::memcpy(ga.data(), a.data(), a.size() * sizeof(float));
  kx::gemm_pack_b(isa, b.data(), n, 1, k, n, gpb.data());
  // a holds A (m x k, row-major) or its transpose (k x m).
  const int64_t a_rs = trans_a ? 1 : k, a_cs = trans_a ? m : 1;
  for (int threads : {1, 2}) {
    const kx::GemmPlan plan = kx::plan_gemm(isa, m, n, k, a_rs, a_cs, n, threads);
    // A row-major A (a one-row transposed A is one too) is read in place: no packing scratch.
    EXPECT_EQ(kx::gemm_scratch_floats(plan) == 0, !trans_a || m == 1);
    GuardedFloats gs(std::max<size_t>(kx::gemm_scratch_floats(plan), 1));
    kx::gemm_run(plan, ga.data(), gpb.data(), kx::Epilogue{}, gc.data(), gs.data(), 0, plan.tasks);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t p = 0; p < k; ++p) {
          want += static_cast<double>(a[static_cast<size_t>(i * a_rs + p * a_cs)]) *
                  b[static_cast<size_t>(p * n + j)];
        }
        ASSERT_NEAR(gc.data()[i * n + j], want, 1e-4 * (1 + std::abs(want)))
            << "C(" << i << ", " << j << ") threads " << threads;
      }
    }
  }
}

TEST(X86Gemm, ReadsAndWritesNothingPastItsBuffers) {
  const std::vector<kx::Isa> isas = x86_kernel_isas();
  if (isas.empty()) GTEST_SKIP() << "the host has neither AVX2 nor AVX-512";
  struct Mnk {
    int64_t m, n, k;
  };
  for (kx::Isa isa : isas) {
    for (const Mnk s : {Mnk{1, 1, 1}, Mnk{5, 7, 3}, Mnk{13, 33, 64}, Mnk{197, 37, 70},
                        Mnk{23, 19, 300}, Mnk{9, 100, 513}}) {
      for (bool trans_a : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << (isa == kx::Isa::kAvx512 ? "avx512" : "avx2") << " " << s.m << "x" << s.n
                     << "x" << s.k << (trans_a ? " A transposed" : ""));
        run_gemm_product_guarded(isa, s.m, s.n, s.k, trans_a);
      }
    }
  }
}

}  // namespace
}  // namespace kiln::testing
