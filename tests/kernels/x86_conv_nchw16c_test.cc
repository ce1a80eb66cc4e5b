// conv.nchw16c.f32.{avx512,avx2} against kiln.ConvNchw16c's reference (the NCHW reference between
// reorders): pointwise over channel tails of the 16-lane block and of the register tile (1 to 4
// blocks), pixel tails, strides; dense over windows, strides, pads and dilations; depthwise over
// windows, strides, pads (asymmetric too), dilations and widths narrower than the window; every
// activation with and without bias and residual, batches, threads, the prepacked (engine) path, a
// channel scale on X (input S), and what the tactic refuses.
#include <gtest/gtest.h>

#include "kernels/conv_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

constexpr Tolerance kBlockedTol{1e-4, 5e-5};
constexpr Tolerance kBlockedActTol{1e-4, 1e-4};

std::string nchw16c_tactic(const std::string& isa) { return "conv.nchw16c.f32." + isa; }

ConvGeom blocked_pointwise(int64_t cin, int64_t cout, int64_t h, int64_t w, int64_t stride,
                           int64_t batch = 1) {
  return {
      .batch = batch, .cin = cin, .cout = cout, .h = h, .w = w, .kh = 1, .kw = 1, .stride = stride};
}

TEST(X86ConvNchw16c, PointwiseOverChannelAndPixelTailsAndStrides) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    // 1 to 9 blocks of output channels: every tile width and a narrower last tile.
    for (int64_t cin : {1, 3, 16, 17, 40, 300}) {
      for (int64_t cout : {1, 7, 16, 24, 25, 33, 70, 130}) {
        for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {7, 7}, {13, 29}}) {
          for (int64_t stride : {1, 2}) {
            SCOPED_TRACE(::testing::Message() << isa << " " << cin << "->" << cout << " " << h
                                              << "x" << w << " s" << stride);
            expect_matches_reference(nchw16c_tactic(isa),
                                     nchw16c_case(blocked_pointwise(cin, cout, h, w, stride, 2)),
                                     kBlockedTol);
          }
        }
      }
    }
    expect_matches_reference(nchw16c_tactic(isa),
                             nchw16c_case(blocked_pointwise(8, 24, 9, 10, 3), false), kBlockedTol);
  }
}

TEST(X86ConvNchw16c, DepthwiseOverWindowsStridesPadsDilationsAndWidths) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : depthwise_sweep({{1, 1}, {16, 1}, {17, 1}, {40, 1}})) {
      SCOPED_TRACE(::testing::Message() << isa << " c" << g.cin << " k" << g.kh << " s" << g.stride
                                        << " p" << g.pad << " d" << g.dil << " w" << g.w);
      expect_matches_reference(nchw16c_tactic(isa), nchw16c_case(g), kBlockedTol);
    }
  }
}

// The window-row kernel (3 taps wide at column stride 1 or 2, 5 taps at stride 1) and the stride-2
// 5-tap rows it leaves to the per-pixel kernel: rows of every width up to 20, which cut into every
// group size of both ISAs (AVX-512 8, 4, 2, 1 pixels; AVX2 4, 2, 1 for 3 taps, 8, 4, 2, 1 for 5,
// one vector of a block at a time in the groups of 8 and 4), with pads that put whole groups in the
// padding, a window of 3 rows by 5 columns, and row stride 2; the residual and ReLU6 of MobileNet's
// blocks in the epilogue.
TEST(X86ConvNchw16c, DepthwiseWindowRowsOfEveryGroupSize) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t kw : {3, 5}) {
      for (int64_t stride : {1, 2}) {
        for (int64_t pad : {0, 1, 3}) {
          for (int64_t w = 1; w <= 20; ++w) {
            if (w + 2 * pad < kw) continue;
            SCOPED_TRACE(::testing::Message()
                         << isa << " k" << kw << " s" << stride << " p" << pad << " w" << w);
            const ConvGeom g{.cin = 24,
                             .cout = 24,
                             .group = 24,
                             .h = 4,
                             .w = w,
                             .kh = 3,
                             .kw = kw,
                             .stride = stride,
                             .pad = pad};
            expect_matches_reference(nchw16c_tactic(isa),
                                     nchw16c_case(g, true, true, {"Clip", {0.0f, 6.0f}}),
                                     kBlockedActTol);
          }
        }
      }
    }
  }
}

TEST(X86ConvNchw16c, DepthwiseWithAsymmetricPadsAndRectangularWindows) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    OpCase c = nchw16c_case(
        {.cin = 20, .cout = 20, .group = 20, .h = 9, .w = 23, .kh = 3, .kw = 5, .stride = 2});
    c.attrs.set("pads", Ints{0, 2, 1, 0});
    expect_matches_reference(nchw16c_tactic(isa), c, kBlockedTol);
    c.attrs.set("pads", Ints{2, 0, 0, 3});
    c.attrs.set("strides", Ints{1, 3});
    expect_matches_reference(nchw16c_tactic(isa), c, kBlockedTol);
  }
}

TEST(X86ConvNchw16c, EveryActivationWithAndWithoutBiasAndResidual) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      blocked_pointwise(24, 40, 5, 9, 1, 2),
      {.batch = 2, .cin = 24, .cout = 24, .group = 24, .h = 6, .w = 19, .stride = 1, .pad = 1}};
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : geoms) {
      for (const ActCase& act : fused_activations()) {
        for (bool bias : {false, true}) {
          for (bool residual : {false, true}) {
            SCOPED_TRACE(::testing::Message() << isa << " " << act.name << " g" << g.group
                                              << " bias " << bias << " residual " << residual);
            expect_matches_reference(nchw16c_tactic(isa), nchw16c_case(g, bias, residual, act),
                                     kBlockedActTol);
          }
        }
      }
    }
  }
}

TEST(X86ConvNchw16c, PrepackedWeightsOnThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      blocked_pointwise(96, 24, 14, 14, 1),
      blocked_pointwise(64, 256, 7, 7, 2, 2),
      blocked_pointwise(600, 200, 7, 7, 1),
      {.cin = 144, .cout = 144, .group = 144, .h = 14, .w = 14, .stride = 2, .pad = 1}};
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : geoms) {
      for (int threads : {1, 2, 3}) {
        expect_matches_reference_prepacked(nchw16c_tactic(isa), nchw16c_case(g, true, true),
                                           kBlockedTol, threads);
      }
    }
  }
}

// A squeeze-and-excitation's scale fused into the 1x1 (input S): shared by the images or one per
// image, over channel tails, the narrower last co tile (its tiles take more pixels), strides,
// residual and activation, and threads.
TEST(X86ConvNchw16c, PointwiseWithAChannelScaleOnX) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t cin : {3, 16, 40, 300}) {
      for (int64_t cout : {7, 33, 70}) {
        for (int64_t stride : {1, 2}) {
          for (bool per_image : {false, true}) {
            SCOPED_TRACE(::testing::Message() << isa << " " << cin << "->" << cout << " s" << stride
                                              << " per image " << per_image);
            const ConvGeom g = blocked_pointwise(cin, cout, 13, 29, stride, 2);
            expect_matches_reference(nchw16c_tactic(isa),
                                     with_channel_scale(nchw16c_case(g), g, per_image),
                                     kBlockedTol);
          }
        }
      }
    }
    const ConvGeom g = blocked_pointwise(96, 40, 14, 14, 1, 2);
    const OpCase fused = with_channel_scale(nchw16c_case(g, true, true, {"Silu", {}}), g, true);
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(nchw16c_tactic(isa), fused, kBlockedActTol, threads);
    }
  }
}

// Dense (group 1, a window or padding): a direct convolution over tiles of one output row. Channel
// tails of the block and of the co tile (1 to 9 blocks), rows narrower than a tile and ones that
// split into tiles of unequal width, windows wider than the input (taps that read only padding),
// strides, dilations, asymmetric and large pads, a padded 1x1, batches.
TEST(X86ConvNchw16c, DenseOverChannelsWindowsStridesPadsAndDilations) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      {.batch = 2, .cin = 3, .cout = 7, .h = 5, .w = 7, .pad = 1},
      {.cin = 17, .cout = 33, .h = 7, .w = 7, .pad = 1},
      {.cin = 16, .cout = 130, .h = 6, .w = 13, .pad = 1},
      {.cin = 40, .cout = 70, .h = 9, .w = 9, .stride = 2, .pad = 1},
      {.cin = 8, .cout = 16, .h = 1, .w = 1, .pad = 1},
      {.cin = 5, .cout = 20, .h = 4, .w = 3, .kh = 5, .kw = 5, .pad = 2},
      {.cin = 24, .cout = 48, .h = 11, .w = 12, .kh = 5, .kw = 5, .stride = 2, .pad = 2},
      {.cin = 16, .cout = 16, .h = 9, .w = 10, .pad = 2, .dil = 2},
      {.cin = 9, .cout = 24, .h = 2, .w = 2, .kh = 3, .kw = 3, .pad = 3},
      {.cin = 3, .cout = 64, .h = 23, .w = 25, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.cin = 12, .cout = 40, .h = 5, .w = 6, .kh = 1, .kw = 1, .pad = 1},
  };
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : geoms) {
      SCOPED_TRACE(::testing::Message()
                   << isa << " " << g.cin << "->" << g.cout << " " << g.h << "x" << g.w << " k"
                   << g.kh << "x" << g.kw << " s" << g.stride << " p" << g.pad << " d" << g.dil);
      expect_matches_reference(nchw16c_tactic(isa), nchw16c_case(g), kBlockedTol);
    }
    OpCase c = nchw16c_case({.cin = 20, .cout = 36, .h = 9, .w = 23, .kh = 3, .kw = 5});
    c.attrs.set("pads", Ints{0, 2, 1, 0});
    c.attrs.set("strides", Ints{2, 1});
    expect_matches_reference(nchw16c_tactic(isa), c, kBlockedTol);
    c.attrs.set("pads", Ints{2, 0, 0, 3});
    c.attrs.set("strides", Ints{1, 3});
    expect_matches_reference(nchw16c_tactic(isa), c, kBlockedTol);
  }
}

TEST(X86ConvNchw16c, DenseWithEpiloguesOnThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom g{.batch = 2, .cin = 24, .cout = 40, .h = 6, .w = 11, .pad = 1};
  for (const std::string& isa : isas) {
    for (const ActCase& act : fused_activations()) {
      for (bool residual : {false, true}) {
        SCOPED_TRACE(::testing::Message() << isa << " " << act.name << " residual " << residual);
        expect_matches_reference(nchw16c_tactic(isa), nchw16c_case(g, true, residual, act),
                                 kBlockedActTol);
      }
    }
    const ConvGeom r50{.cin = 64, .cout = 64, .h = 14, .w = 14, .pad = 1};
    const ConvGeom r50_s2{.cin = 32, .cout = 48, .h = 15, .w = 15, .stride = 2, .pad = 1};
    for (const ConvGeom& t : {r50, r50_s2}) {
      for (int threads : {1, 2, 3}) {
        expect_matches_reference_prepacked(nchw16c_tactic(isa), nchw16c_case(t, true, true),
                                           kBlockedTol, threads);
      }
    }
  }
}

// A first layer: X NCHW (x_layout "nchw"), Y blocked, on the dense kernel: stems of 3 channels
// (MobileNet's 3x3 stride 2, ResNet's 7x7 stride 2), one channel (group 1 and depthwise at once), a
// 1x1, more than one block of channels, strides 1, 2 (constants in the kernel) and 3, padded
// columns on either edge; epilogues and threads.
TEST(X86ConvNchw16c, DenseWithAnNchwInput) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom geoms[] = {
      {.batch = 2, .cin = 3, .cout = 32, .h = 15, .w = 12, .stride = 2, .pad = 1},
      {.cin = 3, .cout = 64, .h = 23, .w = 21, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.cin = 1, .cout = 1, .h = 6, .w = 7, .pad = 1},
      {.cin = 1, .cout = 20, .h = 6, .w = 7, .pad = 1},
      {.cin = 5, .cout = 24, .h = 4, .w = 9, .kh = 1, .kw = 1},
      {.cin = 20, .cout = 40, .h = 5, .w = 6, .stride = 2, .pad = 1, .dil = 2},
      {.cin = 3, .cout = 16, .h = 11, .w = 40, .stride = 3, .pad = 1},  // the run-time stride
  };
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : geoms) {
      SCOPED_TRACE(::testing::Message() << isa << " " << g.cin << "->" << g.cout << " k" << g.kh
                                        << " s" << g.stride << " p" << g.pad);
      expect_matches_reference(nchw16c_tactic(isa), plain_x_nchw16c_case(g), kBlockedTol);
    }
    const ConvGeom stem{.batch = 2, .cin = 3, .cout = 32, .h = 17, .w = 16, .stride = 2, .pad = 1};
    expect_matches_reference(nchw16c_tactic(isa),
                             plain_x_nchw16c_case(stem, true, true, {"Clip", {0.0f, 6.0f}}),
                             kBlockedActTol);
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(nchw16c_tactic(isa),
                                         plain_x_nchw16c_case(stem, false, false, {"Silu", {}}),
                                         kBlockedActTol, threads);
    }
    const ConvGeom dw{.cin = 16, .cout = 16, .group = 16, .h = 5, .w = 5, .pad = 1};
    expect_rejected(nchw16c_tactic(isa), plain_x_nchw16c_case(dw), "reads blocked inputs only");
  }
}

TEST(X86ConvNchw16c, RefusesGroupedConvolutionsAndScalesOnAWindow) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_rejected(nchw16c_tactic(isa), nchw16c_case({.cin = 8, .cout = 8, .group = 2}),
                    "only group 1 and depthwise");
    expect_rejected(nchw16c_tactic(isa), nchw16c_case({.cin = 8, .cout = 16, .group = 8, .pad = 1}),
                    "only group 1 and depthwise");
    OpCase padded = nchw16c_case(blocked_pointwise(8, 8, 5, 5, 1));
    padded.attrs.set("pads", Ints{1, 0, 0, 0});
    const ConvGeom pw = blocked_pointwise(8, 8, 5, 5, 1);
    expect_rejected(nchw16c_tactic(isa), with_channel_scale(padded, pw, false),
                    "into unpadded 1x1 convolutions only");
    const ConvGeom dw{.cin = 16, .cout = 16, .group = 16, .h = 5, .w = 5, .pad = 1};
    expect_rejected(nchw16c_tactic(isa), with_channel_scale(nchw16c_case(dw), dw, false),
                    "into unpadded 1x1 convolutions only");
    const ConvGeom dense{.cin = 16, .cout = 16, .h = 5, .w = 5, .pad = 1};
    expect_rejected(nchw16c_tactic(isa), with_channel_scale(nchw16c_case(dense), dense, false),
                    "into unpadded 1x1 convolutions only");
  }
}

// A ResNet-50 stride-2 3x3 layer: c channels in and out, out_hw x out_hw out.
kernels::cpu::Conv2DParams stride2_3x3(int64_t c, int64_t out_hw) {
  kernels::cpu::Conv2DParams p;
  p.in_c = p.out_c = c;
  p.in_h = p.in_w = 2 * out_hw;
  p.out_h = p.out_w = out_hw;
  p.k_h = p.k_w = 3;
  p.stride_h = p.stride_w = 2;
  p.pad_top = p.pad_left = 1;
  return p;
}

// Where the weights outweigh the input (co_outer), each thread's part of the tasks runs every co
// tile over its own contiguous spans of output rows, co tile by co tile; every (co tile, span) pair
// is one task.
TEST(X86ConvNchw16c, CoOuterTasksSplitTheRowsIntoOnePartPerThread) {
  for (int64_t co_tiles : {1, 3, 4}) {
    for (int64_t spans : {1, 2, 7, 14}) {
      for (int64_t parts : {1, 2, 3, 5}) {
        kernels::x86::Nchw16cConvPlan pl;
        pl.co_outer = true;
        pl.co_tiles = co_tiles;
        pl.tasks = co_tiles * spans;
        pl.parts = std::min(parts, spans);
        SCOPED_TRACE(::testing::Message()
                     << co_tiles << " co tiles, " << spans << " spans, " << pl.parts << " parts");
        std::vector<int> seen(static_cast<size_t>(pl.tasks), 0);
        int64_t task = 0;
        for (int64_t i = 0; i < pl.parts; ++i) {
          const int64_t s0 = spans * i / pl.parts, s1 = spans * (i + 1) / pl.parts;
          for (int64_t t = 0; t < co_tiles; ++t) {
            for (int64_t s = s0; s < s1; ++s, ++task) {
              const kernels::x86::Nchw16cTask got = kernels::x86::nchw16c_task(pl, task);
              EXPECT_EQ(got.co_tile, t) << "task " << task;
              EXPECT_EQ(got.span, s) << "task " << task;
              ++seen[static_cast<size_t>(got.co_tile * spans + got.span)];
            }
          }
        }
        EXPECT_EQ(task, pl.tasks);
        EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), pl.tasks);
      }
    }
  }
  // A real layer (ResNet-50's stride-2 3x3 of 256 channels) gets one part per thread.
  const kernels::cpu::Conv2DParams p = stride2_3x3(256, 14);
  const auto pl = kernels::x86::plan_nchw16c_conv(kernels::x86::Isa::kAvx512, p, 2);
  EXPECT_TRUE(pl.dense);
  EXPECT_TRUE(pl.co_outer);
  EXPECT_EQ(pl.parts, 2);
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(kernels::x86::Isa::kAvx512, p, 1).parts, 1);
}

// A co-outer layer with fewer than kPixelsPerPart output pixels a thread (ResNet-50's 7x7 1x1s:
// 2048 -> 512, 512 -> 2048) is one part, the threads splitting its co tiles; its 14x14 ones
// (1024 -> 256) split the pixels, as do two images of 7x7.
TEST(X86ConvNchw16c, CoOuterLayersWithFewPixelsSplitTheirCoTiles) {
  const auto pointwise = [](int64_t in_c, int64_t out_c, int64_t hw, int64_t batch) {
    kernels::cpu::Conv2DParams p;
    p.batch = batch;
    p.in_c = in_c;
    p.out_c = out_c;
    p.in_h = p.in_w = p.out_h = p.out_w = hw;
    return p;
  };
  for (const auto isa : {kernels::x86::Isa::kAvx512, kernels::x86::Isa::kAvx2}) {
    for (int threads : {2, 3}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, isa " << static_cast<int>(isa));
      for (const auto& p : {pointwise(2048, 512, 7, 1), pointwise(512, 2048, 7, 1)}) {
        const auto pl = kernels::x86::plan_nchw16c_conv(isa, p, threads);
        EXPECT_TRUE(pl.co_outer);
        EXPECT_EQ(pl.parts, 1);
        EXPECT_GE(pl.co_tiles, threads);
      }
      const auto deep = kernels::x86::plan_nchw16c_conv(isa, pointwise(1024, 256, 14, 1), threads);
      EXPECT_TRUE(deep.co_outer);
      EXPECT_EQ(deep.parts, threads);
    }
    const auto two = kernels::x86::plan_nchw16c_conv(isa, pointwise(2048, 512, 7, 2), 2);
    EXPECT_EQ(two.parts, 2);
  }
}

// A co tile's packed weights stay within a core's L2 where one block's fit: ResNet-50's stride-2
// 3x3 layer of 512 channels (295 KB a block) takes one-block co tiles of 6 pixels on AVX2 with a
// 512 KiB L2, and two blocks with 1 MiB (or no bound); 1x1 layers of 2048 channels (128 KB a
// block) keep the widest tile.
TEST(X86ConvNchw16c, CoTilesKeepTheirWeightsWithinL2) {
  using kernels::x86::Isa;
  const kernels::cpu::Conv2DParams p = stride2_3x3(512, 7);
  const auto narrow = kernels::x86::plan_nchw16c_conv(Isa::kAvx2, p, 2, false, 512 << 10);
  EXPECT_EQ(narrow.co_tile, 1);
  EXPECT_EQ(narrow.co_tiles, 32);
  EXPECT_EQ(narrow.px_tile, 6);
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, p, 2, false, 1 << 20).co_tile, 2);
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, p, 2).co_tile, 2);
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(Isa::kAvx512, p, 2, false, 1 << 20).co_tile, 3);
  // Wider than any L2: one block still.
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(Isa::kAvx512, p, 2, false, 64 << 10).co_tile, 1);
  kernels::cpu::Conv2DParams pw;
  pw.in_c = 2048;
  pw.out_c = 512;
  pw.in_h = pw.in_w = pw.out_h = pw.out_w = 7;
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, pw, 2, false, 512 << 10).co_tile, 2);
  EXPECT_EQ(kernels::x86::plan_nchw16c_conv(Isa::kAvx512, pw, 2, false, 512 << 10).co_tile, 4);
  // The next co tile's weights are prefetched where two co tiles fit in 3/4 of L2: not for 2048
  // channels on a 512 KiB L2 (2 x 256 KiB), for 960 (MobileNetV2's 960 -> 320 at 7x7); never for a
  // dense layer or without a bound.
  EXPECT_FALSE(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, pw, 2, false, 512 << 10).prefetch_next);
  EXPECT_TRUE(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, pw, 2, false, 1 << 20).prefetch_next);
  pw.in_c = 960;
  pw.out_c = 320;
  EXPECT_TRUE(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, pw, 2, false, 512 << 10).prefetch_next);
  EXPECT_FALSE(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, pw, 2).prefetch_next);
  EXPECT_FALSE(kernels::x86::plan_nchw16c_conv(Isa::kAvx2, p, 2, false, 4 << 20).prefetch_next);
}

// A 1x1's chunks (MobileNetV2's 96 -> 576 at 14x14, its 960 -> 160 at 7x7, ResNet-50's 1024 ->
// 256 at 14x14) and a dense layer's on a blocked X (ResNet-50's stride-2 3x3 of 512 channels, 7x7
// out): as many as a multiple of the threads, covering the pixels in order, no two more than one
// register tile apart (196 pixels had been cut 168 + 28, 49 as 15 + 15 + 15 + 4, the dense
// layer's 7 rows as 4 + 3).
TEST(X86ConvNchw16c, ChunksAreEvenAndAMultipleOfTheThreads) {
  struct Layer {
    int64_t in_c, out_c, hw, k = 1;
  };
  for (const Layer l :
       {Layer{96, 576, 14}, Layer{960, 160, 7}, Layer{1024, 256, 14}, Layer{512, 512, 7, 3}}) {
    kernels::cpu::Conv2DParams pw;
    pw.in_c = l.in_c;
    pw.out_c = l.out_c;
    pw.in_h = pw.in_w = pw.out_h = pw.out_w = l.hw;
    if (l.k == 3) {
      pw.in_h = pw.in_w = 2 * l.hw;
      pw.k_h = pw.k_w = 3;
      pw.stride_h = pw.stride_w = 2;
      pw.pad_top = pw.pad_left = 1;
    }
    for (const auto isa : {kernels::x86::Isa::kAvx512, kernels::x86::Isa::kAvx2}) {
      for (int threads : {2, 3}) {
        SCOPED_TRACE(::testing::Message() << l.in_c << "->" << l.out_c << " at " << l.hw << ", "
                                          << threads << " threads, isa " << static_cast<int>(isa));
        const auto plw = kernels::x86::plan_nchw16c_conv(isa, pw, threads);
        ASSERT_EQ(plw.dense, l.k == 3);
        // One chunk (the dense layer has 9 of AVX-512's 6-pixel tiles, 8 at least a chunk) is not
        // split: the threads take co tiles.
        if (plw.chunks > 1) {
          EXPECT_EQ(plw.chunks % threads, 0);
        }
        int64_t at = 0, least = plw.chunk, most = 0;
        for (int64_t c = 0; c < plw.chunks; ++c) {
          const auto [q0, q1] = kernels::x86::nchw16c_chunk_range(plw, c);
          EXPECT_EQ(q0, at);
          EXPECT_EQ(q0 % plw.px_tile, 0);
          EXPECT_LE(q1 - q0, plw.chunk);
          const int64_t tiles = (q1 - q0 + plw.px_tile - 1) / plw.px_tile;
          least = std::min(least, tiles);
          most = std::max(most, tiles);
          at = q1;
        }
        EXPECT_EQ(at, l.hw * l.hw);
        EXPECT_LE(most - least, 1);
      }
    }
  }
}

// A depthwise layer's tasks (MobileNetV2's 144 channels at 56x56 and 28x28, EfficientNet-B0's 240
// at 28x28: 9 and 15 blocks) and a plain-X stem's (ResNet-50's 7x7 stride 2, 3 -> 64, 112 rows
// out, had been cut 9 x 12 + 4) are a multiple of the threads, the row chunks covering the rows in
// order, none more than one row longer than another.
TEST(X86ConvNchw16c, RowTasksAreAMultipleOfTheThreads) {
  for (auto [c, hw] :
       {std::pair<int64_t, int64_t>{144, 56}, {144, 28}, {240, 28}, {960, 7}, {3, 112}}) {
    const bool stem = c == 3;
    kernels::cpu::Conv2DParams p;
    p.in_c = p.out_c = p.group = c;
    p.in_h = p.in_w = p.out_h = p.out_w = hw;
    p.k_h = p.k_w = 3;
    p.pad_top = p.pad_left = 1;
    if (stem) {
      p.out_c = 64;
      p.group = 1;
      p.in_h = p.in_w = 2 * hw;
      p.k_h = p.k_w = 7;
      p.stride_h = p.stride_w = 2;
      p.pad_top = p.pad_left = 3;
    }
    for (int threads : {2, 3}) {
      SCOPED_TRACE(::testing::Message() << c << "@" << hw << ", " << threads << " threads");
      const auto pl = kernels::x86::plan_nchw16c_conv(kernels::x86::Isa::kAvx2, p, threads, stem);
      ASSERT_EQ(pl.depthwise, !stem);
      ASSERT_EQ(pl.plain_x, stem);
      EXPECT_EQ(pl.tasks % threads, 0);
      int64_t at = 0, least = hw, most = 0;
      for (int64_t r = 0; r < pl.row_chunks; ++r) {
        const auto [oh0, oh1] = kernels::x86::nchw16c_row_range(pl, r);
        EXPECT_EQ(oh0, at);
        EXPECT_LE(oh1 - oh0, pl.rows);
        least = std::min(least, oh1 - oh0);
        most = std::max(most, oh1 - oh0);
        at = oh1;
      }
      EXPECT_EQ(at, hw);
      EXPECT_LE(most - least, 1);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
