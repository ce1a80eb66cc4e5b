// qconv_nhwc.vnni.u8s8.avx512 (kernels/x86/qkernels.h's indirect convolution on channels-last
// tensors) against kiln.QConvNhwc's reference: output channels across the 64-channel blocks and
// their 16-lane vectors, pixel counts across the 6-pixel tile, windows with padding, strides and
// dilations, batches, zero points, residuals, every activation, float Y, threads splitting pixels
// and channels, and what it refuses.
#include <gtest/gtest.h>

#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_qconv_nhwc_test {

constexpr const char* kTactic = "qconv_nhwc.vnni.u8s8.avx512";

TEST(X86QConvNhwc, MatchesReferenceOverChannelsAndPixels) {
  KILN_REQUIRE_VNNI();
  for (int64_t cout : {1, 16, 17, 64, 65, 130}) {
    for (int64_t cin : {4, 12, 68}) {
      // 5 x 7 output pixels: five whole 6-pixel tiles and a tail of 5.
      expect_quant_matches(kTactic, qconv_nhwc_case({.cin = cin, .cout = cout, .pad = 1},
                                                    {.out_u8 = true, .act = "Relu"}));
      expect_quant_matches(kTactic, qconv_nhwc_case({.cin = cin,
                                                     .cout = cout,
                                                     .h = 4,
                                                     .w = 1,
                                                     .kh = 1,
                                                     .kw = 1},  // 4 pixels: a tile that is all tail
                                                    {.x_zero = 3, .out_u8 = true, .y_zero = 9}));
    }
  }
}

TEST(X86QConvNhwc, MatchesReferenceOverWindows) {
  KILN_REQUIRE_VNNI();
  const ConvGeom geoms[] = {
      {.batch = 2, .cin = 8, .cout = 24, .h = 9, .w = 11, .kh = 1, .kw = 1},
      {.batch = 2, .cin = 16, .cout = 32, .h = 10, .w = 9, .kh = 1, .kw = 1, .stride = 2},
      {.cin = 8, .cout = 20, .h = 11, .w = 8, .stride = 2, .pad = 1},
      {.cin = 4, .cout = 72, .h = 15, .w = 13, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.batch = 2, .cin = 12, .cout = 20, .h = 9, .w = 9, .pad = 2, .dil = 2},
      {.cin = 8, .cout = 8, .h = 7, .w = 12, .kh = 5, .kw = 3, .stride = 3, .pad = 1},
      {.cin = 4, .cout = 4, .h = 3, .w = 3, .kh = 3, .kw = 3, .pad = 2},  // taps mostly on padding
      // Rows wide enough for whole tiles of pixels whose windows miss the padding (interior).
      {.cin = 8, .cout = 24, .h = 6, .w = 20, .pad = 1},
      {.batch = 2, .cin = 4, .cout = 16, .h = 9, .w = 24, .pad = 2, .dil = 2},
      {.cin = 8, .cout = 16, .h = 8, .w = 30, .kh = 3, .kw = 5, .stride = 2, .pad = 1},
  };
  for (const ConvGeom& g : geoms) {
    for (int x_zero : {0, 128}) {
      for (int y_zero : {0, 77}) {
        expect_quant_matches(
            kTactic,
            qconv_nhwc_case(g, {.x_zero = x_zero, .out_u8 = true, .y_zero = y_zero, .act = "Relu"},
                            5));
      }
    }
  }
}

// A 1x1 window without padding takes the pointwise path (one address per pixel and tile); with
// padding, at the start or only at the end (the last stride-2 row and column read x_zero), the
// general one.
TEST(X86QConvNhwc, PointwiseWindowsWithAndWithoutPadding) {
  KILN_REQUIRE_VNNI();
  const ConvGeom g{.batch = 2, .cin = 8, .cout = 24, .h = 6, .w = 8, .kh = 1, .kw = 1, .stride = 2};
  const std::vector<Ints> pads = {{0, 0, 0, 0}, {0, 0, 1, 1}, {1, 1, 0, 0}, {1, 0, 0, 1}};
  for (const Ints& pad : pads) {
    SCOPED_TRACE(::testing::PrintToString(pad));
    OpCase c = qconv_nhwc_case(g, {.x_zero = 37, .out_u8 = true, .act = "Relu"});
    c.attrs.set("pads", pad);
    expect_quant_matches(kTactic, c);
  }
}

TEST(X86QConvNhwc, MatchesReferenceWithResidualsActivationsAndFloatOutput) {
  KILN_REQUIRE_VNNI();
  const ConvGeom g{.cin = 16, .cout = 80, .h = 9, .w = 7, .pad = 1};
  for (int residual : {0, 1, 2}) {
    for (bool out_u8 : {true, false}) {
      for (const ActCase& a : fused_activations()) {
        SCOPED_TRACE(a.name);
        const QuantOpts o{.out_u8 = out_u8,
                          .bias = residual != 1,
                          .residual = residual,
                          .act = a.name,
                          .act_params = a.params};
        expect_quant_matches(kTactic, qconv_nhwc_case(g, o), act_tol(a));
      }
    }
  }
  for (const QuantOpts& o : clip_to_uint8_cases()) {
    SCOPED_TRACE(quant_opts_text(o));
    expect_quant_matches(kTactic, qconv_nhwc_case(g, o));
  }
}

TEST(X86QConvNhwc, SplitsPixelsAndChannelsOverThreads) {
  KILN_REQUIRE_VNNI();
  const QuantOpts o{.out_u8 = true, .residual = 2, .act = "Relu"};
  for (int threads : {2, 3}) {
    // Weights outweighing the input and the L2 share (4 blocks of 64 channels, 432 KiB: split
    // by channels where the threads divide them), and a large input (split by pixels).
    expect_matches_reference_prepacked(
        kTactic, qconv_nhwc_case({.cin = 192, .cout = 256, .h = 5, .w = 5, .pad = 1}, o),
        Tolerance{0, 1}, threads);
    expect_matches_reference_prepacked(
        kTactic, qconv_nhwc_case({.batch = 2, .cin = 8, .cout = 70, .h = 13, .w = 11, .pad = 1}, o),
        Tolerance{0, 1}, threads);
  }
}

TEST(X86QConvNhwc, RefusesWhatItCannotRun) {
  KILN_REQUIRE_VNNI();
  expect_rejected(kTactic, qconv_nhwc_case({.cin = 6, .cout = 8}, {.out_u8 = true}),
                  "6 input channels: a multiple of 4 only");
  expect_rejected(kTactic, qconv_nhwc_case({.cin = 8, .cout = 8, .group = 2}, {.out_u8 = true}),
                  "one group only");
}

}  // namespace x86_qconv_nhwc_test
}  // namespace kiln::testing
