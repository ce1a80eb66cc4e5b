// conv.winograd.f{2,3,4}x3.nchw16c.f32.{avx512,avx2} and the stride-2 f2x3s2 against
// kiln.ConvNchw16c's reference: channel tails of the block and of the register tile, planes that
// are not a whole number of tiles (and smaller than one), odd and even input sides at stride 2,
// pads of 0 to 2 and asymmetric ones, batches; every activation with and without bias and residual;
// the prepacked (engine) path on threads, with plans that split tiles and ones that split output
// channels; and what the tactics refuse.
#include <gtest/gtest.h>

#include <span>

#include "kernels/conv_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

// F(4x4, 3x3)'s transforms multiply by up to 8 and 1/24 before the channel sums: its rounding
// error is some 1e-5 of the outputs' magnitude (random inputs in [-1, 1], up to 300 channels give
// outputs of tens), against the direct kernels' 1e-7.
constexpr Tolerance kWinogradTol{2e-3, 2e-4};
// The stride-2 transforms' coefficients are 0 and +-1: the direct kernels' tolerance.
constexpr Tolerance kStride2Tol{1e-4, 1e-4};

std::vector<std::string> winograd_tactics(const std::string& isa) {
  return {"conv.winograd.f4x3.nchw16c.f32." + isa, "conv.winograd.f3x3.nchw16c.f32." + isa,
          "conv.winograd.f2x3.nchw16c.f32." + isa};
}

std::vector<std::string> stride2_tactics(const std::string& isa) {
  return {"conv.winograd.f2x3s2.nchw16c.f32." + isa};
}

using TacticsFor = std::vector<std::string> (*)(const std::string& isa);

// Each geometry, then a 9x23 plane (at `stride`) with two asymmetric pads.
void expect_geoms_match(const std::vector<std::string>& isas, TacticsFor tactics,
                        std::span<const ConvGeom> geoms, int64_t stride, Tolerance tol) {
  for (const std::string& isa : isas) {
    for (const std::string& tactic : tactics(isa)) {
      for (const ConvGeom& g : geoms) {
        SCOPED_TRACE(::testing::Message() << tactic << " " << g.batch << "x" << g.cin << "->"
                                          << g.cout << " " << g.h << "x" << g.w << " p" << g.pad);
        expect_matches_reference(tactic, nchw16c_case(g), tol);
      }
      OpCase c = nchw16c_case({.cin = 20, .cout = 36, .h = 9, .w = 23, .stride = stride});
      c.attrs.set("pads", Ints{0, 2, 1, 0});
      expect_matches_reference(tactic, c, tol);
      c.attrs.set("pads", Ints{2, 0, 0, 1});
      expect_matches_reference(tactic, c, tol);
    }
  }
}

void expect_every_activation_matches(const std::vector<std::string>& isas, TacticsFor tactics,
                                     const ConvGeom& g, Tolerance tol) {
  for (const std::string& isa : isas) {
    for (const std::string& tactic : tactics(isa)) {
      for (const ActCase& act : fused_activations()) {
        for (bool bias : {false, true}) {
          for (bool residual : {false, true}) {
            SCOPED_TRACE(::testing::Message() << tactic << " " << act.name << " bias " << bias
                                              << " residual " << residual);
            expect_matches_reference(tactic, nchw16c_case(g, bias, residual, act), tol);
          }
        }
      }
    }
  }
}

// With bias, residual and ReLU, on 1 to 3 threads.
void expect_prepacked_match_on_threads(const std::vector<std::string>& isas, TacticsFor tactics,
                                       std::span<const ConvGeom> geoms, Tolerance tol) {
  for (const std::string& isa : isas) {
    for (const std::string& tactic : tactics(isa)) {
      for (const ConvGeom& g : geoms) {
        for (int threads : {1, 2, 3}) {
          SCOPED_TRACE(::testing::Message() << tactic << " " << g.cin << "->" << g.cout << " "
                                            << g.h << "x" << g.w << " threads " << threads);
          expect_matches_reference_prepacked(tactic, nchw16c_case(g, true, true, {"Relu", {}}), tol,
                                             threads);
        }
      }
    }
  }
}

TEST(X86ConvWinograd, OverChannelsPlanesAndPads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      {.batch = 2, .cin = 3, .cout = 7, .h = 5, .w = 7, .pad = 1},
      {.cin = 16, .cout = 16, .h = 4, .w = 4, .pad = 1},
      {.cin = 17, .cout = 33, .h = 7, .w = 7, .pad = 1},
      {.cin = 16, .cout = 130, .h = 6, .w = 13, .pad = 1},
      {.cin = 40, .cout = 70, .h = 9, .w = 9, .pad = 1},
      {.cin = 8, .cout = 24, .h = 1, .w = 1, .pad = 1},
      {.cin = 24, .cout = 48, .h = 11, .w = 12},
      {.cin = 5, .cout = 20, .h = 2, .w = 3, .pad = 2},
      {.batch = 2, .cin = 64, .cout = 64, .h = 14, .w = 14, .pad = 1},
      {.cin = 300, .cout = 40, .h = 10, .w = 5, .pad = 1},
  };
  expect_geoms_match(isas, winograd_tactics, geoms, 1, kWinogradTol);
}

TEST(X86ConvWinograd, EveryActivationWithAndWithoutBiasAndResidual) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  expect_every_activation_matches(isas, winograd_tactics,
                                  {.batch = 2, .cin = 24, .cout = 40, .h = 6, .w = 11, .pad = 1},
                                  kWinogradTol);
}

// 2 and 3 threads: a 28x28 plane splits its tiles, 256 channels on a 7x7 plane (F(4x4)'s 9.4 MB
// of weights, larger than the transformed input and kSharedWeightBytes) split the output channels.
TEST(X86ConvWinograd, PrepackedWeightsOnThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {{.cin = 32, .cout = 48, .h = 28, .w = 28, .pad = 1},
                            {.cin = 256, .cout = 256, .h = 7, .w = 7, .pad = 1},
                            {.batch = 2, .cin = 64, .cout = 40, .h = 13, .w = 9, .pad = 1}};
  expect_prepacked_match_on_threads(isas, winograd_tactics, geoms, kWinogradTol);
}

kernels::cpu::Conv2DParams square_3x3(int64_t c, int64_t hw) {
  kernels::cpu::Conv2DParams p;
  p.batch = 1;
  p.in_c = p.out_c = c;
  p.in_h = p.in_w = p.out_h = p.out_w = hw;
  p.k_h = p.k_w = 3;
  p.pad_top = p.pad_left = 1;
  return p;
}

// The plan's split on two threads: a 56x56 plane of 64 channels (transformed input larger than the
// weights) into tile blocks that share all output channels; 512 channels on 7x7 (weights larger)
// into output-channel groups over all the tiles, so the weights stream once. 128 channels on 28x28
// have weights larger than the transformed input, but small enough (2.4 MB) for every thread to
// read them and transform only its own tiles.
TEST(X86ConvWinograd, PlansSplitTilesOrOutputChannels) {
  namespace kx = kernels::x86;
  for (kx::Isa isa : x86_kernel_isas()) {
    const kx::WinogradPlan big_plane = kx::plan_winograd(isa, square_3x3(64, 56), 4, 2);
    EXPECT_EQ(big_plane.tiles, 14 * 14);
    EXPECT_EQ(big_plane.co_groups, 1);
    EXPECT_GE(big_plane.tile_blocks, 4);
    const kx::WinogradPlan deep = kx::plan_winograd(isa, square_3x3(512, 7), 4, 2);
    EXPECT_EQ(deep.tiles, 4);
    EXPECT_EQ(deep.tile_blocks, 1);
    EXPECT_GE(deep.co_groups, 4);
    EXPECT_EQ(deep.tasks, deep.co_groups);
    const kx::WinogradPlan shared = kx::plan_winograd(isa, square_3x3(128, 28), 4, 2);
    EXPECT_EQ(shared.co_groups, 1);
    EXPECT_GE(shared.tile_blocks, 2);
    const kx::WinogradPlan streamed = kx::plan_winograd(isa, square_3x3(256, 14), 4, 2);
    EXPECT_EQ(streamed.tile_blocks, 1);
    EXPECT_GE(streamed.co_groups, 2);
  }
}

// Tile blocks (ResNet-50's 3x3 layers at m = 2 and 4, 2 and 3 threads) cover the tiles in order,
// within tile_block and at most px_tile tiles apart, as many as a multiple of the threads when
// there are several: 49 tiles had been cut 15 + 15 and 15 + 4 between two threads.
TEST(X86ConvWinograd, TileBlocksAreEven) {
  namespace kx = kernels::x86;
  for (kx::Isa isa : x86_kernel_isas()) {
    for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 56}, {128, 28}, {256, 14}, {512, 7}}) {
      for (int m : {2, 3, 4}) {
        for (int threads : {2, 3}) {
          SCOPED_TRACE(::testing::Message() << c << "@" << hw << " m" << m << " " << threads
                                            << " threads, isa " << static_cast<int>(isa));
          const kx::WinogradPlan pl = kx::plan_winograd(isa, square_3x3(c, hw), m, threads);
          if (pl.tile_blocks > 1) {
            EXPECT_EQ(pl.tile_blocks % threads, 0);
          }
          int64_t at = 0, least = pl.tiles, most = 0;
          for (int64_t b = 0; b < pl.tile_blocks; ++b) {
            const auto [t0, t1] = kx::winograd_tile_range(pl, b);
            EXPECT_EQ(t0, at);
            EXPECT_LE(t1 - t0, pl.tile_block);
            least = std::min(least, t1 - t0);
            most = std::max(most, t1 - t0);
            at = t1;
          }
          EXPECT_EQ(at, pl.tiles);
          EXPECT_LE(most - least, pl.px_tile);
        }
      }
    }
  }
}

TEST(X86ConvWinogradStride2, OverChannelsPlanesAndPads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      {.batch = 2, .cin = 3, .cout = 7, .h = 5, .w = 7, .stride = 2, .pad = 1},
      {.cin = 16, .cout = 16, .h = 4, .w = 4, .stride = 2, .pad = 1},
      {.cin = 17, .cout = 33, .h = 7, .w = 8, .stride = 2, .pad = 1},
      {.cin = 16, .cout = 130, .h = 12, .w = 13, .stride = 2, .pad = 1},
      {.cin = 40, .cout = 70, .h = 9, .w = 9, .stride = 2, .pad = 1},
      {.cin = 8, .cout = 24, .h = 1, .w = 1, .stride = 2, .pad = 1},
      {.cin = 8, .cout = 24, .h = 3, .w = 3, .stride = 2},
      {.cin = 24, .cout = 48, .h = 11, .w = 12, .stride = 2},
      {.cin = 5, .cout = 20, .h = 2, .w = 3, .stride = 2, .pad = 2},
      {.batch = 2, .cin = 64, .cout = 64, .h = 28, .w = 28, .stride = 2, .pad = 1},
      {.cin = 300, .cout = 40, .h = 10, .w = 5, .stride = 2, .pad = 1},
  };
  expect_geoms_match(isas, stride2_tactics, geoms, 2, kStride2Tol);
}

TEST(X86ConvWinogradStride2, EveryActivationWithAndWithoutBiasAndResidual) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  expect_every_activation_matches(
      isas, stride2_tactics,
      {.batch = 2, .cin = 24, .cout = 40, .h = 12, .w = 21, .stride = 2, .pad = 1}, kStride2Tol);
}

// ResNet-50's stride-2 layers (128 channels 56 -> 28, 256 channels 28 -> 14: 6.6 MB of
// weights, split by output channels) and a batch of odd planes.
TEST(X86ConvWinogradStride2, PrepackedWeightsOnThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      {.cin = 128, .cout = 128, .h = 56, .w = 56, .stride = 2, .pad = 1},
      {.cin = 256, .cout = 256, .h = 28, .w = 28, .stride = 2, .pad = 1},
      {.batch = 2, .cin = 64, .cout = 40, .h = 13, .w = 9, .stride = 2, .pad = 1}};
  expect_prepacked_match_on_threads(isas, stride2_tactics, geoms, kStride2Tol);
}

TEST(X86ConvWinogradStride2, RefusesWhatIsNotAStrideTwoThreeByThree) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const std::string& tactic : stride2_tactics(isa)) {
      const std::string why = "with stride 2 runs 3x3 kernels of group 1 with stride 2 and";
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .pad = 1}), why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .h = 9, .w = 9, .stride = 3}),
                      why);
      expect_rejected(tactic,
                      nchw16c_case({.cin = 16, .cout = 16, .h = 9, .w = 9, .stride = 2, .dil = 2}),
                      why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .group = 16, .stride = 2}), why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .kh = 1, .kw = 1, .stride = 2}),
                      why);
      OpCase mixed = nchw16c_case({.cin = 16, .cout = 16, .h = 9, .w = 9, .stride = 2});
      mixed.attrs.set("strides", Ints{2, 1});
      expect_rejected(tactic, mixed, why);
      const ConvGeom dense{.cin = 3, .cout = 16, .h = 5, .w = 5, .stride = 2, .pad = 1};
      expect_rejected(tactic, plain_x_nchw16c_case(dense), "blocked inputs only");
    }
  }
}

TEST(X86ConvWinograd, RefusesWhatIsNotAStrideOneThreeByThree) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const std::string& tactic : winograd_tactics(isa)) {
      const std::string why = "runs 3x3 kernels of group 1 with stride 1 and dilation 1";
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .stride = 2, .pad = 1}), why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .h = 9, .w = 9, .dil = 2}), why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .kh = 5, .kw = 5, .pad = 2}),
                      why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .kh = 1, .kw = 1}), why);
      expect_rejected(tactic, nchw16c_case({.cin = 16, .cout = 16, .group = 16, .pad = 1}), why);
      const ConvGeom dense{.cin = 3, .cout = 16, .h = 5, .w = 5, .pad = 1};
      expect_rejected(tactic, plain_x_nchw16c_case(dense), "blocked inputs only");
      const ConvGeom blocked{.cin = 16, .cout = 16, .h = 5, .w = 5, .pad = 1};
      expect_rejected(tactic, with_channel_scale(nchw16c_case(blocked), blocked, false),
                      "into unpadded 1x1 convolutions only");
    }
  }
}

}  // namespace
}  // namespace kiln::testing
