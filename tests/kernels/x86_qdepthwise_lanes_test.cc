// qconv.depthwise.lanes.u8s8.avx512 (kernels/x86/qkernels.h, QDepthwiseLanesPlan: 16 channels in
// the lanes, 4 taps of a kernel row per vpdpbusd) against the reference kiln.QConv: channel counts
// off the 16-channel group, kernels 1, 3, 5, 7 and 9 wide (one, two and three quads of taps),
// strides, pads, dilations, row widths that end every 8-pixel block and every 16-pixel transpose,
// planes tall enough for several bands of rows, batches, zero points, float and uint8 outputs and
// residuals (uint8 out without a residual takes the epilogue in the lanes, the rest the plane
// kernel's), every activation, threads and the prepacked (engine) path. Tolerances:
// kernels/quant_cases.h.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_qdepthwise_lanes_test {

constexpr const char* kLanes = "qconv.depthwise.lanes.u8s8.avx512";

ConvGeom depthwise(int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad,
                   int64_t dil = 1, int64_t batch = 1) {
  return {.batch = batch,
          .cin = c,
          .cout = c,
          .group = c,
          .h = h,
          .w = w,
          .kh = k,
          .kw = k,
          .stride = stride,
          .pad = pad,
          .dil = dil};
}

TEST(X86QDepthwiseLanes, OverChannelsKernelsStridesPadsDilationsWidths) {
  KILN_REQUIRE_VNNI();
  for (const ConvGeom& g : depthwise_sweep({{3, 1}, {16, 1}, {17, 1}, {33, 1}})) {
    expect_quant_matches(kLanes, qconv_case(g));
  }
  // 7x7 windows, stride 3, dilation 3, stride (rows) over a 1-row plane.
  expect_quant_matches(kLanes, qconv_case(depthwise(20, 9, 40, 7, 1, 3)));
  expect_quant_matches(kLanes, qconv_case(depthwise(5, 20, 41, 3, 3, 1, 3)));
  expect_quant_matches(kLanes, qconv_case(depthwise(18, 1, 30, 1, 2, 0)));
  expect_quant_matches(kLanes, qconv_case(depthwise(19, 11, 33, 9, 2, 4)));
  expect_quant_matches(kLanes, qconv_case(depthwise(7, 12, 40, 9, 1, 8, 2)));
}

// Every row width up to 20 (the 8-pixel blocks' last one runs past the row, the 16-pixel
// transposes end mid-row) with pads that put whole blocks in the padding.
TEST(X86QDepthwiseLanes, RowsOfEveryWidth) {
  KILN_REQUIRE_VNNI();
  for (int64_t k : {3, 5}) {
    for (int64_t stride : {1, 2}) {
      for (int64_t pad : {0, 1, 3}) {
        for (int64_t w = 1; w <= 20; ++w) {
          if (w + 2 * pad < k) continue;
          const ConvGeom g = depthwise(24, 5, w, k, stride, pad);
          expect_quant_matches(kLanes, qconv_case(g, {.residual = 2, .act = "Relu"}));
        }
      }
    }
  }
}

// Tall planes split into bands of output rows (each reading its own halo of input rows), over
// batches and 1-3 threads, with the engine's prepacked weights.
TEST(X86QDepthwiseLanes, BandsOverTallPlanesBatchesAndThreads) {
  KILN_REQUIRE_VNNI();
  const ConvGeom cases[] = {
      depthwise(17, 70, 9, 3, 1, 1, 1, 2), depthwise(32, 112, 112, 3, 1, 1),
      depthwise(40, 57, 31, 5, 2, 2),      depthwise(16, 30, 200, 3, 2, 1, 2),
      depthwise(960, 7, 7, 3, 1, 1, 1, 2),
  };
  for (const ConvGeom& g : cases) {
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(kLanes, qconv_case(g), kQuantFloatTol, threads);
      // uint8 out with and without a residual: the general epilogue, and the one in the lanes.
      for (int residual : {0, 2}) {
        expect_matches_reference_prepacked(
            kLanes,
            qconv_case(g,
                       {.out_u8 = true, .residual = residual, .act = "Clip", .act_params = {0, 6}}),
            {0, 1}, threads);
      }
    }
  }
}

TEST(X86QDepthwiseLanes, ZeroPointsOutputsResidualsAndActivations) {
  KILN_REQUIRE_VNNI();
  const ConvGeom g = depthwise(21, 7, 10, 3, 1, 1, 1, 2);
  for (int x_zero : {0, 128, 37}) {
    for (bool out_u8 : {false, true}) {
      for (int residual : {0, 1, 2}) {
        for (bool bias : {false, true}) {
          expect_quant_matches(kLanes, qconv_case(g, {.x_zero = x_zero,
                                                      .out_u8 = out_u8,
                                                      .y_zero = x_zero == 37 ? 200 : x_zero,
                                                      .bias = bias,
                                                      .residual = residual}));
        }
      }
    }
  }
  for (const ActCase& act : fused_activations()) {
    for (bool out_u8 : {false, true}) {
      SCOPED_TRACE(act.name + (out_u8 ? " to uint8" : " to float"));
      const QuantOpts o{.out_u8 = out_u8, .residual = 2, .act = act.name, .act_params = act.params};
      expect_quant_matches(kLanes, qconv_case(g, o), act_tol(act));
    }
  }
  for (const QuantOpts& o : clip_to_uint8_cases()) {
    SCOPED_TRACE(quant_opts_text(o));
    expect_quant_matches(kLanes, qconv_case(g, o), kQuantActTol);
  }
}

// Extreme inputs and weights (255 against zero point 0, weights of -128 and 127) over a 5x5 and
// a 23x23 window.
TEST(X86QDepthwiseLanes, ExtremeValuesStayExact) {
  KILN_REQUIRE_VNNI();
  for (int x_zero : {0, 255}) {
    for (int64_t k : {5, 23}) {
      OpCase c = qconv_case(depthwise(16, 25, 25, k, 1, 2), {.x_zero = x_zero});
      auto x = c.inputs[0].tensor->span<uint8_t>();
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<uint8_t>(i % 7 == 0 ? 255 - x_zero : 255);
      for (int8_t& w : c.inputs[1].tensor->span<int8_t>()) w = x_zero == 0 ? 127 : -128;
      expect_quant_matches(kLanes, c);
    }
  }
}

TEST(X86QDepthwiseLanes, RefusesWhatItCannotRun) {
  KILN_REQUIRE_VNNI();
  expect_rejected(kLanes, qconv_case({.cin = 4, .cout = 8, .group = 4}), "multiplier 1");
  expect_rejected(kLanes, qconv_case({.cin = 4, .cout = 4, .group = 2}), "not depthwise");
}

}  // namespace x86_qdepthwise_lanes_test
}  // namespace kiln::testing
