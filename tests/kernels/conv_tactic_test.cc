// conv.direct.f32 and conv.1x1_gemm.f32 against the reference Conv.
#include <gtest/gtest.h>

#include <chrono>

#include "kernels/conv_cases.h"
#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace {

constexpr const char* kDirect = "conv.direct.f32";
constexpr const char* kPointwise = "conv.1x1_gemm.f32";

// Channel/group combinations: plain, tails of the 4-channel blocks, grouped, depthwise (with a
// channel multiplier too).
const ConvGeom kChannelCases[] = {
    {.cin = 1, .cout = 1},
    {.cin = 3, .cout = 5},
    {.cin = 5, .cout = 17},
    {.cin = 17, .cout = 3},
    {.cin = 33, .cout = 33},
    {.cin = 6, .cout = 9, .group = 3},
    {.cin = 8, .cout = 8, .group = 2},
    {.cin = 5, .cout = 5, .group = 5},
    {.cin = 17, .cout = 17, .group = 17},
    {.cin = 3, .cout = 6, .group = 3},
};

TEST(ConvTactic, DirectMatchesReferenceOverChannelsKernelsStridesPadsDilations) {
  for (const ConvGeom& g : channel_sweep(kChannelCases, {1, 3}, conv_fits)) {
    expect_matches_reference(kDirect, conv_case(g), kSumTol);
  }
}

TEST(ConvTactic, DirectMatchesReferenceOverWidths) {
  for (int64_t w : {1, 7, 13, 31}) {
    for (int64_t stride : {1, 2, 3}) {
      for (const ConvGeom& base :
           {ConvGeom{.cin = 3, .cout = 5}, ConvGeom{.cin = 17, .cout = 17, .group = 17}}) {
        ConvGeom g = base;
        g.h = 4;
        g.w = w;
        g.stride = stride;
        g.pad = 1;
        if (conv_fits(g)) expect_matches_reference(kDirect, conv_case(g), kSumTol);
      }
    }
  }
}

TEST(ConvTactic, DirectHandlesRectangularKernelsLargePadsAndBatches) {
  ConvGeom g{.batch = 2, .cin = 4, .cout = 6, .h = 7, .w = 9, .kh = 2, .kw = 5};
  g.pad = 2;
  expect_matches_reference(kDirect, conv_case(g), kSumTol);
  g = ConvGeom{.cin = 3, .cout = 4, .h = 11, .w = 10, .kh = 7, .kw = 7, .stride = 2, .pad = 3};
  expect_matches_reference(kDirect, conv_case(g), kSumTol);  // a ResNet stem in miniature
  g = ConvGeom{.cin = 2, .cout = 4, .h = 5, .w = 6, .kh = 5, .kw = 1, .stride = 1, .pad = 2};
  expect_matches_reference(kDirect, conv_case(g), kSumTol);
}

TEST(ConvTactic, DirectWithoutBiasAndWithRuntimeWeights) {
  const ConvGeom g{.cin = 5, .cout = 7, .h = 6, .w = 9, .stride = 1, .pad = 1};
  expect_matches_reference(kDirect, conv_case(g, /*bias=*/false), kSumTol);
  expect_matches_reference(kDirect, conv_case(g, /*bias=*/true, /*const_w=*/false), kSumTol);
  expect_matches_reference(kPointwise,
                           conv_case(ConvGeom{.cin = 5, .cout = 7, .kh = 1, .kw = 1}, false, false),
                           kSumTol);
}

TEST(ConvTactic, DirectResolvesAutoPadAndAsymmetricPads) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
    for (int64_t stride : {1, 2}) {
      OpCase c;
      c.op_type = "Conv";
      c.attrs = attrs({{"auto_pad", std::string(mode)}, {"strides", Ints{stride, stride}}});
      c.inputs = {in(random_f32({1, 3, 8, 7}, 3)), constant(random_f32({4, 3, 3, 2}, 4))};
      expect_matches_reference(kDirect, c, kSumTol);
    }
  }
  OpCase c;
  c.op_type = "Conv";
  c.attrs = attrs({{"pads", Ints{0, 2, 1, 0}}, {"strides", Ints{1, 2}}});
  c.inputs = {in(random_f32({1, 3, 6, 9}, 5)), constant(random_f32({2, 3, 3, 3}, 6)),
              constant(random_f32({2}, 7))};
  expect_matches_reference(kDirect, c, kSumTol);
}

TEST(ConvTactic, DirectRunsOneDimensionalConvolution) {
  for (int64_t stride : {1, 2}) {
    OpCase c;
    c.op_type = "Conv";
    c.attrs = attrs({{"pads", Ints{1, 2}}, {"strides", Ints{stride}}, {"dilations", Ints{2}}});
    c.inputs = {in(random_f32({2, 5, 17}, 8)), constant(random_f32({3, 5, 3}, 9)),
                constant(random_f32({3}, 10))};
    expect_matches_reference(kDirect, c, kSumTol);
  }
}

TEST(ConvTactic, PointwiseMatchesReference) {
  for (int64_t cin : {1, 3, 17, 33}) {
    for (int64_t cout : {1, 5, 33}) {
      for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {7, 7}, {13, 5}}) {
        const ConvGeom g{.batch = 2, .cin = cin, .cout = cout, .h = h, .w = w, .kh = 1, .kw = 1};
        expect_matches_reference(kPointwise, conv_case(g), kSumTol);
      }
    }
  }
  // Grouped 1x1, more pixels than one GEMM column block (256), a K above one depth block (256).
  expect_matches_reference(
      kPointwise, conv_case({.cin = 9, .cout = 5, .h = 20, .w = 15, .kh = 1, .kw = 1}), kSumTol);
  expect_matches_reference(
      kPointwise, conv_case({.cin = 12, .cout = 8, .group = 4, .kh = 1, .kw = 1}), kSumTol);
  expect_matches_reference(kPointwise,
                           conv_case({.cin = 300, .cout = 6, .h = 3, .w = 3, .kh = 1, .kw = 1}),
                           Tolerance{1e-5, 5e-5});
}

TEST(ConvTactic, PointwiseRefusesOtherConvolutions) {
  expect_rejected(kPointwise, conv_case({.cin = 3, .cout = 3}), "not 1x1");
  expect_rejected(kPointwise, conv_case({.cin = 3, .cout = 3, .kh = 1, .kw = 1, .stride = 2}),
                  "strides");
  expect_rejected(kPointwise, conv_case({.cin = 3, .cout = 3, .kh = 1, .kw = 1, .pad = 1}), "pads");
}

TEST(ConvTactic, RefusesOtherDtypesAndRanks) {
  OpCase c;
  c.op_type = "Conv";
  c.inputs = {in(Tensor(DType::kF64, {1, 2, 4, 4})), constant(Tensor(DType::kF64, {2, 2, 3, 3}))};
  expect_rejected(kDirect, c, "float64");
  c.inputs = {in(random_f32({1, 2, 4, 4, 4}, 1)), constant(random_f32({2, 2, 3, 3, 3}, 2))};
  expect_rejected(kDirect, c, "rank 5");
}

// Not a test of speed (no assertion): prints the direct kernel's time against the reference on a
// ResNet stage-1 3x3 convolution. Run with --gtest_also_run_disabled_tests.
TEST(ConvTactic, DISABLED_SpeedAgainstReference) {
  const ConvGeom g{.cin = 64, .cout = 64, .h = 56, .w = 56, .pad = 1};
  const OpCase c = conv_case(g);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  ASSERT_TRUE(run_op(c).is_ok());
  auto t1 = Clock::now();
  auto got = run_tactic(kDirect, c);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  const double ref_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
  const double direct_ms = got->run_ms;
  const double gflop = 2.0 * 64 * 64 * 9 * 56 * 56 / 1e9;
  std::printf("reference %.1f ms, %s %.2f ms per run (%.1f GFLOP/s)\n", ref_ms, kDirect, direct_ms,
              gflop / (direct_ms / 1e3));
}

}  // namespace
}  // namespace kiln::testing
