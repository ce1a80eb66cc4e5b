// How kiln's x86 convolution plans share a layer between threads: every output is in exactly one
// task, and the thread with the most work (run_tasks' contiguous ranges of tasks) does not carry
// much more than its share on ResNet-50's layers whose output does not split evenly by columns
// (196 pixels are 6 panels of 32 and a bit); INT8 layers on large planes split over pixels, so
// that no thread packs another's patch panels, at whole output rows where their quad planes are.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/conv_cases.h"
#include "kernels/x86/kernels.h"
#include "kernels/x86/qkernels.h"

namespace kiln::testing {
namespace {

namespace kx = kernels::x86;

// Outputs (rows x columns, columns rounded up to whole panels as the tile computes them) of the
// busiest of `threads` threads, over the layer's total.
double busiest_share(const kx::ConvGemmPlan& pl, int threads) {
  const int64_t parts = std::min<int64_t>(threads, pl.tasks);
  const int64_t nr = pl.bl.nr;
  std::vector<int64_t> covered(static_cast<size_t>(pl.mg * pl.n), 0);
  int64_t busiest = 0, total = 0;
  for (int64_t part = 0; part < parts; ++part) {
    int64_t work = 0;
    for (int64_t t = part * pl.tasks / parts; t < (part + 1) * pl.tasks / parts; ++t) {
      const int64_t m0 = t % pl.m_blocks * pl.mc, n0 = t / pl.m_blocks % pl.n_blocks * pl.nc;
      const int64_t rows = std::min(pl.mc, pl.mg - m0), cols = std::min(pl.nc, pl.n - n0);
      work += rows * (cols + nr - 1) / nr * nr;
      for (int64_t i = m0; i < m0 + rows; ++i) {
        for (int64_t j = n0; j < n0 + cols; ++j) ++covered[static_cast<size_t>(i * pl.n + j)];
      }
    }
    busiest = std::max(busiest, work);
    total += work;
  }
  for (int64_t c : covered) EXPECT_EQ(c, 1) << "an output in no task or in two";
  return static_cast<double>(busiest) / static_cast<double>(total);
}

// 1024 rows of 128 and 68 pixels gave one of 2 threads 65% of the work. (A 3x3 layer may keep an
// uneven column split: splitting its channels instead makes each thread pack every patch.)
TEST(X86ConvPlan, TwoThreadsShareFourteenByFourteenOneByOneLayersEvenly) {
  const ConvGeom layers[] = {
      {.cin = 256, .cout = 1024, .h = 14, .w = 14, .kh = 1, .kw = 1},
      {.cin = 1024, .cout = 256, .h = 14, .w = 14, .kh = 1, .kw = 1},
      {.cin = 512, .cout = 1024, .h = 28, .w = 28, .kh = 1, .kw = 1, .stride = 2},
  };
  for (kx::Isa isa : {kx::Isa::kAvx512, kx::Isa::kAvx2}) {
    for (const ConvGeom& g : layers) {
      SCOPED_TRACE(::testing::Message()
                   << (isa == kx::Isa::kAvx512 ? "avx512 " : "avx2 ") << g.cin << "->" << g.cout
                   << " k" << g.kh << " s" << g.stride << " " << g.h << "x" << g.w);
      const kx::ConvGemmPlan pl = kx::plan_conv_gemm(isa, conv2d_params(g), 2);
      EXPECT_LE(busiest_share(pl, 2), 0.55);
      EXPECT_DOUBLE_EQ(busiest_share(kx::plan_conv_gemm(isa, conv2d_params(g), 1), 1), 1.0);
    }
  }
}

// A flat INT8 plan packs its panels in every task: cut over output channels, ResNet-50's 1x1
// layers on 56x56 planes had both threads pack every panel and read all of the input.
TEST(X86QConvPlan, TwoThreadsSplitLargePlaneOneByOneLayersOverPixels) {
  const ConvGeom layers[] = {
      {.cin = 64, .cout = 64, .h = 56, .w = 56, .kh = 1, .kw = 1},
      {.cin = 64, .cout = 256, .h = 56, .w = 56, .kh = 1, .kw = 1},
      {.cin = 256, .cout = 64, .h = 56, .w = 56, .kh = 1, .kw = 1},
  };
  for (const ConvGeom& g : layers) {
    SCOPED_TRACE(::testing::Message() << g.cin << "->" << g.cout << " " << g.h << "x" << g.w);
    const kx::QConvPlan pl = kx::plan_qconv(kx::QIsa::kAvx512Vnni, conv2d_params(g), 2);
    ASSERT_TRUE(pl.flat);
    EXPECT_EQ(pl.m_blocks, 1);
    EXPECT_EQ(pl.n_blocks % 2, 0);
  }
}

// A flat layer's pixel blocks may end at any vector: ResNet-50's 512 -> 128 layers on 28x28
// planes had only whole panels to split (432 + 352 pixels) and were cut over output channels,
// both threads packing every panel; in whole vectors they split 400 + 384.
TEST(X86QConvPlan, TwoThreadsSplitFlatLayersInWholeVectors) {
  const ConvGeom g{.cin = 512, .cout = 128, .h = 28, .w = 28, .kh = 1, .kw = 1};
  const kx::QConvPlan pl = kx::plan_qconv(kx::QIsa::kAvx512Vnni, conv2d_params(g), 2);
  ASSERT_TRUE(pl.flat);
  EXPECT_EQ(pl.m_blocks, 1);
  EXPECT_EQ(pl.n_blocks, 2);
  EXPECT_EQ(pl.nc % pl.bl.lanes, 0);
  EXPECT_LE(pl.nc - (pl.nw - pl.nc), pl.bl.lanes);  // the two blocks within a vector
}

// A pixel block that starts mid-row builds the quad planes of the rows it shares with its
// neighbour again: ResNet-50's 784-pixel layers were cut 432 + 352 (15.4 rows), or over output
// channels with every thread building and copying every patch.
TEST(X86QConvPlan, TwoThreadsSplitPixelsAtWholeRows) {
  const ConvGeom layers[] = {
      {.cin = 128, .cout = 128, .h = 28, .w = 28, .pad = 1},
      {.cin = 128, .cout = 128, .h = 56, .w = 56, .stride = 2, .pad = 1},
      {.cin = 256, .cout = 512, .h = 56, .w = 56, .kh = 1, .kw = 1, .stride = 2},
      {.cin = 64, .cout = 64, .h = 56, .w = 56, .pad = 1},
  };
  for (const ConvGeom& g : layers) {
    SCOPED_TRACE(::testing::Message() << g.cin << "->" << g.cout << " k" << g.kh << " s" << g.stride
                                      << " " << g.h << "x" << g.w);
    const kx::QConvPlan pl = kx::plan_qconv(kx::QIsa::kAvx512Vnni, conv2d_params(g), 2);
    ASSERT_FALSE(pl.flat);
    EXPECT_EQ(pl.m_blocks, 1);
    EXPECT_EQ(pl.n_blocks, 2);
    EXPECT_EQ(pl.nc % pl.p.out_w, 0) << pl.nc << " pixels a block";
  }
}

}  // namespace
// AMX steps through the depth 16 quads (64 bytes) at a time: the plan pads it (kqp), and the
// weights and each thread's panel are sized for the padded depth; the VNNI plan keeps kq.
TEST(X86QConvPlan, AmxPadsTheDepthToWholeTileSteps) {
  const ConvGeom g{.cin = 3, .cout = 40, .h = 17, .w = 19, .kh = 7, .kw = 7, .stride = 2, .pad = 3};
  const kernels::cpu::Conv2DParams p = conv2d_params(g);
  const kx::QConvPlan amx = kx::plan_qconv(kx::QIsa::kAmxInt8, p, 2);
  const kx::QConvPlan vnni = kx::plan_qconv(kx::QIsa::kAvx512Vnni, p, 2);
  EXPECT_EQ(amx.kq, 49);  // 49 taps x 1 channel quad
  EXPECT_EQ(amx.kqp, 64);
  EXPECT_EQ(vnni.kqp, vnni.kq);
  EXPECT_EQ(amx.mc % 32, 0);
  // 2 row panels of 32 x 64 quads x 4 bytes, then a weight sum per channel and one per channel
  // and kernel row.
  EXPECT_EQ(kx::qconv_packed_weights_bytes(kx::QIsa::kAmxInt8, p),
            2u * 64 * 32 * 4 + 40 * 4 + 40 * 7 * 4);
  EXPECT_GE(kx::qconv_scratch_bytes(amx), static_cast<size_t>(amx.kqp * amx.bl.nr * 4));
}

// Two panels at once only where a task's weights pass the L2 budget (ResNet-50's layer4).
TEST(X86QConvPlan, TwoPanelsAtOnceOnlyForWeightsPastL2) {
  const ConvGeom big{.cin = 512, .cout = 88, .h = 7, .w = 7, .pad = 1};  // 88 x 1152 quads
  const ConvGeom small{.cin = 64, .cout = 64, .h = 56, .w = 56, .pad = 1};
  for (kx::QIsa isa : {kx::QIsa::kAvx512Vnni, kx::QIsa::kAmxInt8}) {
    EXPECT_EQ(kx::plan_qconv(isa, conv2d_params(big), 1).panels_at_once, 2);
    EXPECT_EQ(kx::plan_qconv(isa, conv2d_params(small), 1).panels_at_once, 1);
  }
}

// The channels-last INT8 convolution splits the output channels between threads only where the
// weights outweigh the input and the L2 share: ResNet-50's 256 -> 1024 at 14x14 (256 KB) ran
// 1.24-1.33x as long in the network split by channels as by pixels; its 3x3 layers of 256 and 512
// channels (590 KB, 2.4 MB) the other way round.
TEST(X86QConvNhwcPlan, TwoThreadsSplitChannelsOnlyForWeightsPastL2) {
  const ConvGeom by_pixels{.cin = 256, .cout = 1024, .h = 14, .w = 14, .kh = 1, .kw = 1};
  const ConvGeom by_channels[] = {
      {.cin = 256, .cout = 256, .h = 14, .w = 14, .pad = 1},
      {.cin = 512, .cout = 512, .h = 7, .w = 7, .pad = 1},
      {.cin = 512, .cout = 2048, .h = 7, .w = 7, .kh = 1, .kw = 1},
  };
  const kx::QConvNhwcPlan px = kx::plan_qconv_nhwc(conv2d_params(by_pixels), 2);
  EXPECT_EQ(px.ob_tasks, 1);
  EXPECT_EQ(px.px_blocks, 2);
  for (const ConvGeom& g : by_channels) {
    SCOPED_TRACE(::testing::Message() << g.cin << "->" << g.cout << " " << g.h << "x" << g.w);
    const kx::QConvNhwcPlan ch = kx::plan_qconv_nhwc(conv2d_params(g), 2);
    EXPECT_EQ(ch.ob_tasks, 2);
    EXPECT_EQ(ch.px_blocks, 1);
  }
}

}  // namespace kiln::testing
