// conv.{gemm1x1,im2col,depthwise}.f32.{avx512,avx2} and their fused_conv twins against the
// reference Conv / kiln.FusedConv: channel, pixel and depth tails of the register tile and
// blocks, strides, dilations, symmetric and asymmetric padding, groups, depthwise with a
// multiplier, 1-D convolution, every activation with and without bias and residual, batches,
// threads, and the prepacked (engine) path. Skipped where the host lacks the ISA.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <limits>

#include "base/cpu_features.h"
#include "kernels/conv_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_conv_test {

// Sums of a few hundred products in float against the reference's double.
constexpr Tolerance kConvTol{1e-4, 5e-5};
// The epilogue's exp / erf / tanh approximations on top.
constexpr Tolerance kActTol{1e-4, 1e-4};

std::string name(const std::string& kind, const std::string& isa, bool fused = false) {
  return (fused ? "fused_conv." : "conv.") + kind + ".f32." + isa;
}

TEST(X86ConvTactic, Im2colOverChannelsKernelsStridesPadsDilations) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : channel_sweep(x86_channel_cases({.cin = 7, .cout = 17}), {2, 3})) {
      expect_matches_reference(name("im2col", isa), conv_case(g), kConvTol);
    }
  }
}

TEST(X86ConvTactic, Im2colOverPixelAndDepthBlocks) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom cases[] = {
      // Many column panels, rows split across panels, a depth above one block (40 * 9 = 360).
      {.batch = 2, .cin = 40, .cout = 70, .h = 11, .w = 37, .pad = 1},
      {.cin = 5, .cout = 20, .h = 23, .w = 3, .stride = 1, .pad = 2},
      {.cin = 3, .cout = 8, .h = 17, .w = 19, .kh = 7, .kw = 7, .stride = 2, .pad = 3},  // a stem
      {.cin = 2, .cout = 4, .h = 5, .w = 6, .kh = 5, .kw = 1, .pad = 2},
      {.cin = 16, .cout = 16, .h = 1, .w = 1, .pad = 1},
      // Strides past 2: a ViT-style patch embedding (kernel = stride, rows inside the input) and
      // a padded stride 3 whose rows start and end outside it.
      {.cin = 3, .cout = 24, .h = 32, .w = 48, .kh = 8, .kw = 8, .stride = 8},
      {.cin = 4, .cout = 10, .h = 13, .w = 14, .kh = 3, .kw = 3, .stride = 3, .pad = 1},
      // Kernel rows packed 8 taps at a time: ViT's 16 x 16 patches (rows of 13 pixels: one 8 x 8
      // transpose and 5 pixels alone; a depth of 768 in blocks), 12-tap rows (8 + 4 alone), and
      // panels inside a row whose first kernel rows lie in the padding above the input.
      {.cin = 3, .cout = 24, .h = 64, .w = 208, .kh = 16, .kw = 16, .stride = 16},
      {.cin = 2, .cout = 8, .h = 24, .w = 60, .kh = 12, .kw = 12, .stride = 12},
      {.cin = 2, .cout = 8, .h = 16, .w = 800, .kh = 8, .kw = 8, .stride = 8, .pad = 4},
  };
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : cases) {
      expect_matches_reference(name("im2col", isa), conv_case(g), kConvTol);
      expect_matches_reference(name("im2col", isa), conv_case(g, false), kConvTol);
    }
  }
}

TEST(X86ConvTactic, Gemm1x1OverChannelsPixelsStridesAndPads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t cin : {1, 3, 17, 300}) {
      for (int64_t cout : {1, 7, 33}) {
        for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {7, 7}, {13, 29}}) {
          for (int64_t stride : {1, 2}) {
            const ConvGeom g{.batch = 2,
                             .cin = cin,
                             .cout = cout,
                             .h = h,
                             .w = w,
                             .kh = 1,
                             .kw = 1,
                             .stride = stride};
            expect_matches_reference(name("gemm1x1", isa), conv_case(g), kConvTol);
          }
        }
      }
    }
    expect_matches_reference(
        name("gemm1x1", isa),
        conv_case({.cin = 12, .cout = 8, .group = 4, .h = 5, .w = 6, .kh = 1, .kw = 1}), kConvTol);
    expect_matches_reference(
        name("gemm1x1", isa),
        conv_case({.cin = 5, .cout = 9, .h = 6, .w = 7, .kh = 1, .kw = 1, .stride = 3, .pad = 1}),
        kConvTol);
    expect_matches_reference(name("gemm1x1", isa),
                             conv_case({.cin = 64, .cout = 80, .h = 16, .w = 40, .kh = 1, .kw = 1}),
                             kConvTol);
    // A shallow depth over more than one depth step and more pixels than one block packed over
    // the whole depth holds (ConvGemmPlan::depth_cols), with more rows than B is read in place.
    expect_matches_reference(
        name("gemm1x1", isa),
        conv_case({.cin = 300, .cout = 75, .h = 15, .w = 17, .kh = 1, .kw = 1}), kConvTol);
  }
}

TEST(X86ConvTactic, DepthwiseOverChannelsKernelsStridesPadsDilationsWidths) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : depthwise_sweep({{3, 1}, {7, 1}, {17, 1}, {4, 2}})) {
      expect_matches_reference(name("depthwise", isa), conv_case(g), kConvTol);
    }
    const ConvGeom g{.batch = 2, .cin = 5, .cout = 5, .group = 5, .h = 9, .w = 8, .pad = 1};
    expect_matches_reference(name("depthwise", isa), conv_case(g, false, false), kConvTol);
  }
}

// The depthwise kernel splits the input into stride_h x stride_w phase planes and runs over a
// "wide" output grid: strides 3 and (2, 1), windows whose tap count is neither 9 nor 25, planes
// from one pixel to several hundred vectors, channel multipliers.
TEST(X86ConvTactic, DepthwisePhasePlanesForEveryStrideAndWindow) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  struct Case {
    std::vector<int64_t> x, kernel, strides, pads, dilations;
    int64_t mult;
  };
  const Case cases[] = {
      {{1, 3, 11, 13}, {3, 3}, {3, 3}, {1, 1, 1, 1}, {1, 1}, 1},
      {{2, 2, 9, 10}, {3, 2}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
      {{1, 4, 8, 17}, {2, 3}, {1, 3}, {0, 2, 1, 0}, {2, 1}, 1},
      {{1, 2, 61, 45}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {{1, 3, 37, 50}, {5, 5}, {2, 2}, {2, 2, 2, 2}, {1, 1}, 1},
      {{1, 5, 1, 1}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 3},
      {{1, 2, 30, 33}, {7, 7}, {4, 4}, {3, 3, 3, 3}, {1, 1}, 1},
  };
  for (const std::string& isa : isas) {
    for (const Case& k : cases) {
      const int64_t c = k.x[1];
      OpCase d;
      d.op_type = "Conv";
      d.attrs = attrs({{"kernel_shape", Ints(k.kernel)},
                       {"strides", Ints(k.strides)},
                       {"pads", Ints(k.pads)},
                       {"dilations", Ints(k.dilations)},
                       {"group", c}});
      d.inputs = {in(random_f32(Dims(k.x), 21)),
                  constant(random_f32({c * k.mult, 1, k.kernel[0], k.kernel[1]}, 22)),
                  constant(random_f32({c * k.mult}, 23))};
      SCOPED_TRACE(fmt::format("x [{}] kernel [{}] strides [{}]", fmt::join(k.x, ","),
                               fmt::join(k.kernel, ","), fmt::join(k.strides, ",")));
      expect_matches_reference(name("depthwise", isa), d, kConvTol);
    }
  }
}

TEST(X86ConvTactic, AutoPadAsymmetricPadsAndOneDimensional) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      for (int64_t stride : {1, 2}) {
        OpCase c;
        c.op_type = "Conv";
        c.attrs = attrs({{"auto_pad", std::string(mode)}, {"strides", Ints{stride, stride}}});
        c.inputs = {in(random_f32({1, 3, 8, 7}, 3)), constant(random_f32({4, 3, 3, 2}, 4))};
        expect_matches_reference(name("im2col", isa), c, kConvTol);
      }
    }
    OpCase c;
    c.op_type = "Conv";
    c.attrs = attrs({{"pads", Ints{0, 2, 1, 0}}, {"strides", Ints{1, 2}}});
    c.inputs = {in(random_f32({1, 3, 6, 9}, 5)), constant(random_f32({2, 3, 3, 3}, 6)),
                constant(random_f32({2}, 7))};
    expect_matches_reference(name("im2col", isa), c, kConvTol);
    c.attrs = attrs({{"pads", Ints{0, 2, 1, 0}}, {"strides", Ints{1, 2}}, {"group", int64_t{3}}});
    c.inputs = {in(random_f32({1, 3, 6, 9}, 5)), constant(random_f32({3, 1, 3, 3}, 6))};
    expect_matches_reference(name("depthwise", isa), c, kConvTol);
    for (int64_t stride : {1, 2}) {
      OpCase d;
      d.op_type = "Conv";
      d.attrs = attrs({{"pads", Ints{1, 2}}, {"strides", Ints{stride}}, {"dilations", Ints{2}}});
      d.inputs = {in(random_f32({2, 5, 17}, 8)), constant(random_f32({3, 5, 3}, 9)),
                  constant(random_f32({3}, 10))};
      expect_matches_reference(name("im2col", isa), d, kConvTol);
      d.attrs.set("group", int64_t{5});
      d.inputs[1] = constant(random_f32({10, 1, 3}, 9));
      d.inputs[2] = constant(random_f32({10}, 10));
      expect_matches_reference(name("depthwise", isa), d, kConvTol);
      d.attrs = attrs({{"strides", Ints{stride}}});
      d.inputs[1] = constant(random_f32({4, 5, 1}, 9));
      d.inputs[2] = constant(random_f32({4}, 10));
      expect_matches_reference(name("gemm1x1", isa), d, kConvTol);
    }
  }
}

TEST(X86FusedConvTactic, EveryActivationWithAndWithoutBiasAndResidual) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const std::pair<const char*, ConvGeom> kinds[] = {
      {"im2col", {.batch = 2, .cin = 7, .cout = 17, .h = 6, .w = 9, .pad = 1}},
      {"gemm1x1", {.batch = 2, .cin = 20, .cout = 9, .h = 5, .w = 7, .kh = 1, .kw = 1}},
      {"depthwise", {.batch = 2, .cin = 6, .cout = 12, .group = 6, .h = 7, .w = 21, .pad = 1}},
  };
  for (const std::string& isa : isas) {
    for (const auto& [kind, g] : kinds) {
      for (const ActCase& act : fused_activations()) {
        for (bool bias : {false, true}) {
          for (bool residual : {false, true}) {
            SCOPED_TRACE(act.name + (bias ? " + bias" : "") + (residual ? " + residual" : ""));
            expect_matches_reference(name(kind, isa, true),
                                     fused_conv_case(g, bias, residual, act.name, act.params),
                                     kActTol);
          }
        }
      }
    }
  }
}

// The epilogue's activations past the ranges their approximations clamp to: a residual of
// specials (large, past exp's range, infinite, NaN) reaches the activation next to the 1x1
// convolution's O(1) sum.
TEST(X86FusedConvTactic, ActivationsAtTheExtremes) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {90.0f,
                            -90.0f,
                            87.5f,
                            -87.5f,
                            88.9f,
                            -104.5f,
                            120.0f,
                            -120.0f,
                            1e30f,
                            -1e30f,
                            inf,
                            -inf,
                            std::numeric_limits<float>::quiet_NaN()};
  const ConvGeom g{.cin = 4, .cout = 3, .h = 4, .w = 5, .kh = 1, .kw = 1};
  for (const std::string& isa : isas) {
    for (const ActCase& act : fused_activations()) {
      SCOPED_TRACE(act.name);
      OpCase c = fused_conv_case(g, true, true, act.name, act.params);
      float* z = c.inputs.back().tensor->data<float>();
      for (size_t i = 0; i < std::size(specials); ++i) z[i * 4 + 1] = specials[i];
      expect_matches_reference(name("gemm1x1", isa, true), c, kActTol);
    }
  }
}

// The exp-based activations on exact inputs, so that the tolerance is theirs alone: a 1x1
// convolution of one channel with weights 1 and no bias passes x through unchanged, over [-30, 30)
// (where the sigmoid spans 1e-13 to 1) and past the exponent's range. Sigmoid and SiLU: 1e-6
// relative is about 17 ulp, the epilogue's form is within 8; the kernels flush denormals, so a
// sigmoid below 1.2e-38 is 0 and SiLU up to 88 times that off. GELU: erf by Abramowitz and Stegun
// 7.1.26 is within 1.5e-7 absolute, times 0.5 |x|.
TEST(X86FusedConvTactic, ExpActivationsAreAccurate) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom g{.cin = 1, .cout = 3, .h = 50, .w = 61, .kh = 1, .kw = 1};
  const std::pair<const char*, Tolerance> acts[] = {
      {"Sigmoid", {1e-6, 1.1e-36}}, {"Silu", {1e-6, 1.1e-36}}, {"Gelu", {1e-6, 4e-7}}};
  for (const std::string& isa : isas) {
    for (const auto& [act, tol] : acts) {
      SCOPED_TRACE(act);
      OpCase c = fused_conv_case(g, false, false, act);
      float* x = c.inputs[0].tensor->data<float>();
      const int64_t n = g.h * g.w;
      for (int64_t i = 0; i < n; ++i) x[i] = -30.0f + 60.0f * static_cast<float>(i) / n;
      const float edges[] = {-88.2f, -88.4f, -87.0f, 88.5f, 89.0f, -104.0f};
      std::copy(std::begin(edges), std::end(edges), x);
      std::ranges::fill(c.inputs[1].tensor->span<float>(), 1.0f);
      expect_matches_reference(name("gemm1x1", isa, true), c, tol);
    }
  }
}

TEST(X86ConvTactic, PrepackedAndThreadedMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(
          name("im2col", isa),
          conv_case({.batch = 3, .cin = 9, .cout = 19, .h = 10, .w = 11, .pad = 1}), kConvTol,
          threads);
      expect_matches_reference_prepacked(
          name("im2col", isa), conv_case({.cin = 16, .cout = 70, .h = 3, .w = 3, .pad = 1}),
          kConvTol, threads);
      expect_matches_reference_prepacked(
          name("gemm1x1", isa),
          conv_case({.cin = 33, .cout = 40, .h = 14, .w = 15, .kh = 1, .kw = 1}), kConvTol,
          threads);
      expect_matches_reference_prepacked(name("depthwise", isa),
                                         conv_case({.batch = 2,
                                                    .cin = 5,
                                                    .cout = 5,
                                                    .group = 5,
                                                    .h = 9,
                                                    .w = 30,
                                                    .stride = 2,
                                                    .pad = 1}),
                                         kConvTol, threads);
      expect_matches_reference_prepacked(
          name("im2col", isa, true),
          fused_conv_case({.batch = 2, .cin = 8, .cout = 24, .h = 9, .w = 9, .pad = 1}, true, true,
                          "Relu"),
          kConvTol, threads);
      // 1024 channels of 196 pixels: threads split the channels and each packs every pixel over
      // the whole (shallow) depth, with a residual.
      expect_matches_reference_prepacked(
          name("gemm1x1", isa, true),
          fused_conv_case({.cin = 136, .cout = 1024, .h = 14, .w = 14, .kh = 1, .kw = 1}, true,
                          true, "Relu"),
          kConvTol, threads);
    }
  }
}

TEST(X86ConvTactic, RefusesWhatItCannotRun) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_rejected(name("gemm1x1", isa), conv_case({.cin = 3, .cout = 3}), "not 1x1");
    expect_rejected(name("im2col", isa), conv_case({.cin = 3, .cout = 3, .kh = 1, .kw = 1}),
                    "1x1 kernel");
    expect_rejected(name("im2col", isa), conv_case({.cin = 4, .cout = 4, .group = 4}), "depthwise");
    expect_rejected(name("depthwise", isa), conv_case({.cin = 4, .cout = 4, .group = 2}),
                    "not depthwise");
    expect_rejected(name("im2col", isa), conv_case({.cin = 3, .cout = 3}, true, false),
                    "not a constant");
    OpCase c;
    c.op_type = "Conv";
    c.inputs = {in(Tensor(DType::kF64, {1, 2, 4, 4})), constant(Tensor(DType::kF64, {2, 2, 3, 3}))};
    expect_rejected(name("im2col", isa), c, "float64");
    c.inputs = {in(random_f32({1, 2, 4, 4, 4}, 1)), constant(random_f32({2, 2, 3, 3, 3}, 2))};
    expect_rejected(name("im2col", isa), c, "rank 5");
  }
}

TEST(X86ConvTactic, DeclaresItsIsa) {
  for (const std::string isa : {"avx512", "avx2"}) {
    const tactics::Tactic* t = tactics::find_tactic(name("im2col", isa));
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->source(), "kiln");
    EXPECT_EQ(t->required_features(), isa == "avx512" ? kIsaAvx512 : kIsaAvx2);
  }
}

}  // namespace x86_conv_test
}  // namespace kiln::testing
