// qconv.{vnni.u8s8.avx512, amx.u8s8, u8s8.avx2, maddubs.u8s8.avx2} and
// qconv.depthwise.u8s8.{avx512, avx2}
// against the reference kiln.QConv: channel counts off the quad (4) and register tile (8 / 4 rows),
// pixel tails of the wide grid, strides, dilations, padding (reading the zero point), groups, 1-D,
// depthwise with a multiplier and with geometries the byte window cannot cover, zero points 0 /
// 128 / arbitrary, float and uint8 outputs, float and uint8 residuals, every activation,
// batches, threads and the prepacked (engine) path. Tolerances: kernels/quant_cases.h.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <span>

#include "base/cpu_features.h"
#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_qconv_test {

std::string gemm_name(const std::string& isa) {
  if (isa == "amx") return "qconv.amx.u8s8";
  return isa == "avx512" ? "qconv.vnni.u8s8.avx512" : "qconv.u8s8.avx2";
}
std::string dw_name(const std::string& isa) { return "qconv.depthwise.u8s8." + isa; }
// AMX runs the implicit-GEMM convolution only.
bool has_depthwise(const std::string& isa) { return isa != "amx"; }

TEST(X86QConvTactic, OverChannelsKernelsStridesPadsDilations) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : channel_sweep(x86_channel_cases({.cin = 5, .cout = 9}), {1, 2, 3})) {
      expect_quant_matches(gemm_name(isa), qconv_case(g));
    }
  }
}

TEST(X86QConvTactic, OverPixelAndDepthTailsAndLargeShapes) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom cases[] = {
      {.batch = 2, .cin = 40, .cout = 70, .h = 11, .w = 37, .pad = 1},
      {.cin = 5, .cout = 20, .h = 23, .w = 3, .pad = 2},
      {.cin = 3, .cout = 8, .h = 17, .w = 19, .kh = 7, .kw = 7, .stride = 2, .pad = 3},  // a stem
      {.cin = 2, .cout = 4, .h = 5, .w = 6, .kh = 5, .kw = 1, .pad = 2},
      {.cin = 16, .cout = 16, .h = 1, .w = 1, .pad = 1},
      {.cin = 300, .cout = 33, .h = 7, .w = 7, .kh = 1, .kw = 1},
      {.cin = 64, .cout = 17, .h = 7, .w = 7, .pad = 1},  // 49 pixels: a tail of one
      // tails of 4 and 2 pixels (run with the channels in the lanes on VNNI), odd depths
      {.cin = 20, .cout = 12, .h = 14, .w = 14, .pad = 1},
      {.cin = 7, .cout = 9, .h = 5, .w = 10, .pad = 1},
      // tails of 3 and 2 pixels over an odd number of quads (27: 9 taps x 3 channel quads)
      {.cin = 9, .cout = 11, .h = 3, .w = 17, .pad = 1},
      {.cin = 10, .cout = 8, .h = 5, .w = 10, .pad = 1},
      {.cin = 12, .cout = 24, .h = 9, .w = 50, .kh = 1, .kw = 1, .stride = 2},
      {.cin = 7, .cout = 9, .h = 10, .w = 11, .kh = 3, .kw = 3, .stride = 3, .pad = 1},
      // stride 2 over rows of several 32-byte loads with a masked end, and wide padding
      {.cin = 6, .cout = 10, .h = 7, .w = 75, .stride = 2, .pad = 1},
      {.cin = 5, .cout = 8, .h = 6, .w = 40, .kh = 5, .kw = 5, .stride = 2, .pad = 4},
      // weights past the L2 budget: two panels packed at once (QConvPlan::panels_at_once), 88
      // rows (a partial AMX row panel), 49 pixels (a tail panel)
      {.cin = 512, .cout = 88, .h = 7, .w = 7, .pad = 1},
  };
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : cases) {
      expect_quant_matches(gemm_name(isa), qconv_case(g));
      expect_quant_matches(gemm_name(isa), qconv_case(g, {.bias = false}, 5));
    }
  }
}

TEST(X86QConvTactic, ZeroPointsOutputsAndResiduals) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom g{.batch = 2, .cin = 9, .cout = 19, .h = 7, .w = 10, .pad = 1};
  // 1x1: whole panels of contiguous pixels (the contiguous epilogue), then a tail of 34.
  const ConvGeom flat{.batch = 2, .cin = 9, .cout = 19, .h = 10, .w = 13, .kh = 1, .kw = 1};
  for (const std::string& isa : isas) {
    for (int x_zero : {0, 128, 37}) {
      for (bool out_u8 : {false, true}) {
        for (int residual : {0, 1, 2}) {
          for (bool bias : {false, true}) {
            const QuantOpts o{.x_zero = x_zero,
                              .out_u8 = out_u8,
                              .y_zero = x_zero == 37 ? 200 : x_zero,
                              .bias = bias,
                              .residual = residual};
            expect_quant_matches(gemm_name(isa), qconv_case(g, o));
            expect_quant_matches(gemm_name(isa), qconv_case(flat, o));
            if (has_depthwise(isa))
              expect_quant_matches(
                  dw_name(isa),
                  qconv_case(
                      {.batch = 2, .cin = 6, .cout = 6, .group = 6, .h = 7, .w = 21, .pad = 1}, o));
          }
        }
      }
    }
  }
}

// Kernel rows that read only padding for a whole panel of output rows are left out of its depth
// (panel_depth), their zero points out of its start: dilations past the map (DeepLabV3's ASPP
// at rate 12 on 16x16: the middle rows read one kernel row, the outer ones two), a panel over rows
// of different live sets, a stride, and zero points that make the start matter.
TEST(X86QConvTactic, KernelRowsThatReadOnlyPaddingAreSkipped) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom cases[] = {
      {.cin = 20, .cout = 12, .h = 16, .w = 16, .pad = 12, .dil = 12},
      {.batch = 2, .cin = 9, .cout = 17, .h = 9, .w = 30, .pad = 5, .dil = 5},
      {.cin = 8, .cout = 9, .h = 12, .w = 7, .stride = 2, .pad = 6, .dil = 6},
      {.cin = 5, .cout = 8, .h = 6, .w = 40, .kh = 5, .kw = 3, .pad = 4, .dil = 2},
      // tail panels of 2 pixels (VNNI runs them by pixel_dots): in the last row (its bottom
      // kernel row dead), and in a one-row image (only the middle kernel row live)
      {.cin = 9, .cout = 11, .h = 10, .w = 29, .pad = 4, .dil = 4},
      {.cin = 9, .cout = 11, .h = 1, .w = 50, .pad = 4, .dil = 4},
  };
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : cases) {
      for (int x_zero : {0, 37, 128}) {
        expect_quant_matches(gemm_name(isa), qconv_case(g, {.x_zero = x_zero}));
        expect_quant_matches(gemm_name(isa),
                             qconv_case(g, {.x_zero = x_zero, .out_u8 = true, .y_zero = 90}));
      }
    }
  }
}

TEST(X86QConvTactic, EveryActivationToFloatAndUint8) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom g{.cin = 7, .cout = 17, .h = 6, .w = 9, .pad = 1};
  const ConvGeom flat{.cin = 7, .cout = 17, .h = 5, .w = 20, .kh = 1, .kw = 1};
  const ConvGeom dw{.cin = 6, .cout = 12, .group = 6, .h = 7, .w = 21, .pad = 1};
  for (const std::string& isa : isas) {
    for (const ActCase& act : fused_activations()) {
      for (bool out_u8 : {false, true}) {
        SCOPED_TRACE(act.name + (out_u8 ? " to uint8" : " to float"));
        const QuantOpts o{
            .out_u8 = out_u8, .residual = 2, .act = act.name, .act_params = act.params};
        expect_quant_matches(gemm_name(isa), qconv_case(g, o), act_tol(act));
        expect_quant_matches(gemm_name(isa), qconv_case(flat, o), act_tol(act));
        if (has_depthwise(isa)) expect_quant_matches(dw_name(isa), qconv_case(dw, o), act_tol(act));
      }
    }
  }
}

TEST(X86QConvTactic, ClipToUint8FoldsIntoTheRequantizationClamp) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const ConvGeom g{.cin = 9, .cout = 11, .h = 6, .w = 9, .pad = 1};
  const ConvGeom flat{.cin = 16, .cout = 17, .h = 7, .w = 20, .kh = 1, .kw = 1};
  const ConvGeom dw{.cin = 5, .cout = 5, .group = 5, .h = 7, .w = 19, .pad = 1};
  for (const std::string& isa : isas) {
    for (const QuantOpts& o : clip_to_uint8_cases()) {
      SCOPED_TRACE(quant_opts_text(o));
      expect_quant_matches(gemm_name(isa), qconv_case(g, o), kQuantActTol);
      expect_quant_matches(gemm_name(isa), qconv_case(flat, o), kQuantActTol);
      if (has_depthwise(isa)) expect_quant_matches(dw_name(isa), qconv_case(dw, o), kQuantActTol);
    }
  }
}

TEST(X86QConvTactic, DepthwiseOverChannelsKernelsStridesPadsDilationsWidths) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const ConvGeom& g : depthwise_sweep({{3, 1}, {17, 1}, {4, 2}})) {
      expect_quant_matches(dw_name(isa), qconv_case(g));
    }
    // Taps beyond the 16-byte window (stride 4 and dilation 3; stride 5): bytes are gathered.
    for (int64_t stride : {4, 5}) {
      ConvGeom g{.cin = 5, .cout = 5, .group = 5, .h = 20, .w = 41, .pad = 1};
      g.stride = stride;
      g.dil = 3;
      expect_quant_matches(dw_name(isa), qconv_case(g));
    }
    // A 7-wide kernel: two quads of taps per kernel row.
    expect_quant_matches(dw_name(isa), qconv_case({.batch = 2,
                                                   .cin = 3,
                                                   .cout = 3,
                                                   .group = 3,
                                                   .h = 9,
                                                   .w = 40,
                                                   .kh = 7,
                                                   .kw = 7,
                                                   .pad = 3}));
  }
}

TEST(X86QConvTactic, AutoPadAsymmetricPadsAndOneDimensional) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      OpCase c = qconv_case({.cin = 3, .cout = 4, .h = 8, .w = 7, .kh = 3, .kw = 2});
      c.attrs = attrs({{"auto_pad", std::string(mode)},
                       {"strides", Ints{2, 2}},
                       {"x_scale", 0.02f},
                       {"x_zero_point", int64_t{128}}});
      expect_quant_matches(gemm_name(isa), c);
    }
    OpCase c = qconv_case({.cin = 3, .cout = 2, .h = 6, .w = 9});
    c.attrs.set("pads", Ints{0, 2, 1, 0});
    c.attrs.set("strides", Ints{1, 2});
    expect_quant_matches(gemm_name(isa), c);
    for (int64_t stride : {1, 2}) {
      // 1-D: [2, 5, 17] with 3 taps, dilation 2, pads (1, 2).
      OpCase d;
      d.op_type = "QConv";
      d.domain = "kiln";
      d.opset = 1;
      d.attrs = attrs({{"pads", Ints{1, 2}}, {"strides", Ints{stride}}, {"dilations", Ints{2}}});
      d.inputs = {in(random_u8({2, 5, 17}, 8)), constant(random_s8({3, 5, 3}, 9)),
                  constant(weight_scales(3, 15, 10))};
      add_quant_parts(d, {.out_u8 = true, .residual = 1}, "x", 3, {2, 3, stride == 1 ? 16 : 8}, 11);
      expect_quant_matches(gemm_name(isa), d);
      d.attrs.set("group", int64_t{5});
      d.inputs[1] = constant(random_s8({5, 1, 3}, 9));
      d.inputs[2] = constant(weight_scales(5, 3, 10));
      d.inputs.resize(3);
      add_quant_parts(d, {}, "x", 5, {2, 5, stride == 1 ? 16 : 8}, 12);
      if (has_depthwise(isa)) expect_quant_matches(dw_name(isa), d);
    }
  }
}

TEST(X86QConvTactic, PrepackedAndThreadedMatchTheReference) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(
          gemm_name(isa),
          qconv_case({.batch = 3, .cin = 9, .cout = 19, .h = 10, .w = 11, .pad = 1}),
          kQuantFloatTol, threads);
      expect_matches_reference_prepacked(
          gemm_name(isa), qconv_case({.cin = 16, .cout = 70, .h = 3, .w = 3, .pad = 1}),
          kQuantFloatTol, threads);
      expect_matches_reference_prepacked(
          gemm_name(isa), qconv_case({.cin = 12, .cout = 24, .h = 7, .w = 7, .pad = 1}),
          kQuantFloatTol, threads);
      // Pixel blocks of whole rows (98 or 70 of 196 pixels: panels and a short tail each).
      expect_matches_reference_prepacked(
          gemm_name(isa),
          qconv_case({.cin = 16, .cout = 24, .h = 28, .w = 28, .stride = 2, .pad = 1}),
          kQuantFloatTol, threads);
      expect_matches_reference_prepacked(
          gemm_name(isa),
          qconv_case({.cin = 33, .cout = 40, .h = 14, .w = 15, .kh = 1, .kw = 1},
                     {.out_u8 = true, .residual = 2, .act = "Relu"}),
          {0, 1}, threads);
      if (has_depthwise(isa))
        expect_matches_reference_prepacked(dw_name(isa),
                                           qconv_case({.batch = 2,
                                                       .cin = 5,
                                                       .cout = 5,
                                                       .group = 5,
                                                       .h = 9,
                                                       .w = 30,
                                                       .stride = 2,
                                                       .pad = 1}),
                                           kQuantFloatTol, threads);
    }
  }
}

TEST(X86QConvTactic, RefusesWhatItCannotRun) {
  const auto isas = x86_qconv_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_rejected(gemm_name(isa), qconv_case({.cin = 4, .cout = 4, .group = 4}), "depthwise");
    if (has_depthwise(isa))
      expect_rejected(dw_name(isa), qconv_case({.cin = 4, .cout = 4, .group = 2}), "not depthwise");
    OpCase c;
    c.op_type = "QConv";
    c.domain = "kiln";
    c.opset = 1;
    c.inputs = {in(random_u8({1, 2, 4, 4, 4}, 1)), constant(random_s8({2, 2, 3, 3, 3}, 2)),
                constant(weight_scales(2, 54, 3))};
    add_quant_parts(c, {.bias = false}, "x", 2, {1, 2, 2, 2, 2}, 4);
    expect_rejected(gemm_name(isa), c, "1-D and 2-D");
  }
}

constexpr const char* kMaddubs = "qconv.maddubs.u8s8.avx2";
constexpr const char* kDwMaddubs = "qconv.depthwise.maddubs.u8s8.avx2";

bool host_has_avx2() {
  const auto isas = x86_qisas();
  return std::find(isas.begin(), isas.end(), "avx2") != isas.end();
}

// What both maddubs convolution tactics must match the reference on, over `cases` (weights from
// `make`, inside the pair bound): plain, without a bias, every pair at its largest (input 255:
// 255 * 128 = 32640, the int16 sums' limit within reach), uint8 out with a uint8 residual and
// ReLU; then `threaded` prepacked on 1-3 threads.
void expect_maddubs_exact(const char* tactic,
                          OpCase (*make)(const ConvGeom&, const QuantOpts&, uint64_t),
                          std::span<const ConvGeom> cases, const ConvGeom& threaded) {
  for (const ConvGeom& g : cases) {
    expect_quant_matches(tactic, make(g, {}, 1));
    expect_quant_matches(tactic, make(g, {.bias = false}, 5));
    expect_quant_matches(tactic, saturated_input(make(g, {.x_zero = 0}, 9)));
    expect_quant_matches(
        tactic,
        make(g, {.x_zero = 37, .out_u8 = true, .y_zero = 200, .residual = 2, .act = "Relu"}, 1),
        {0, 1});
  }
  for (int threads : {1, 2, 3}) {
    expect_matches_reference_prepacked(tactic, make(threaded, {}, 1), kQuantFloatTol, threads);
  }
}

TEST(X86QConvTactic, MaddubsIsExactUpToThePairBound) {
  if (!host_has_avx2()) GTEST_SKIP() << "no AVX2 on this host";
  const ConvGeom cases[] = {
      {.batch = 2, .cin = 40, .cout = 70, .h = 11, .w = 37, .pad = 1},
      {.cin = 5, .cout = 9, .h = 9, .w = 10, .pad = 1},  // odd channels: the last pair's zero
      {.cin = 3, .cout = 8, .h = 17, .w = 19, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.cin = 300, .cout = 33, .h = 7, .w = 7, .kh = 1, .kw = 1},
      {.cin = 64, .cout = 17, .h = 7, .w = 7, .pad = 1},
      {.cin = 12, .cout = 24, .h = 9, .w = 50, .kh = 1, .kw = 1, .stride = 2},
      {.cin = 8, .cout = 12, .group = 2, .h = 8, .w = 9, .pad = 1, .dil = 2},
      {.cin = 6, .cout = 10, .h = 7, .w = 75, .stride = 2, .pad = 1},
  };
  expect_maddubs_exact(kMaddubs, qconv_maddubs_case, cases,
                       {.batch = 3, .cin = 9, .cout = 19, .h = 10, .w = 11, .pad = 1});
}

TEST(X86QConvTactic, DepthwiseMaddubsIsExactUpToThePairBound) {
  if (!host_has_avx2()) GTEST_SKIP() << "no AVX2 on this host";
  const ConvGeom cases[] = {
      {.batch = 2, .cin = 6, .cout = 6, .group = 6, .h = 7, .w = 21, .pad = 1},
      {.cin = 5, .cout = 10, .group = 5, .h = 9, .w = 30, .stride = 2, .pad = 1},  // multiplier 2
      {.cin = 4, .cout = 4, .group = 4, .h = 12, .w = 13, .kh = 5, .kw = 5, .pad = 2},
      {.cin = 3, .cout = 3, .group = 3, .h = 9, .w = 40, .kh = 3, .kw = 7, .pad = 3},  // 2 quads
      {.cin = 3, .cout = 3, .group = 3, .h = 11, .w = 12, .stride = 3, .pad = 1, .dil = 2},
  };
  expect_maddubs_exact(
      kDwMaddubs, qdw_maddubs_case, cases,
      {.batch = 2, .cin = 5, .cout = 5, .group = 5, .h = 9, .w = 30, .stride = 2, .pad = 1});
  OpCase c = qdw_maddubs_case({.cin = 4, .cout = 4, .group = 4, .h = 6, .w = 6, .pad = 1});
  int8_t* w = c.inputs[1].tensor->data<int8_t>();
  w[(2 * 3 + 1) * 3 + 0] = -90;  // channel 2, kernel row 1, taps 0 and 1
  w[(2 * 3 + 1) * 3 + 1] = -39;
  expect_rejected(kDwMaddubs, c, "output channel 2, kernel row 1: taps 0 and 1 weigh -90 and -39");
  expect_quant_matches(dw_name(x86_qisas().front()), c);
}

TEST(X86QConvTactic, MaddubsRefusesWeightsThatCouldSaturate) {
  if (!host_has_avx2()) GTEST_SKIP() << "no AVX2 on this host";
  const ConvGeom g{.cin = 6, .cout = 4, .h = 5, .w = 5, .pad = 1};
  for (auto [a, b] : {std::pair{65, 64}, {-64, -65}, {127, 2}}) {
    OpCase c = qconv_maddubs_case(g);
    int8_t* w = c.inputs[1].tensor->data<int8_t>();
    const int64_t khw = 9, m = 3, ch = 4, tap = 5;  // output channel 3, channels 4 and 5, (1, 2)
    w[(m * g.cin + ch) * khw + tap] = static_cast<int8_t>(a);
    w[(m * g.cin + ch + 1) * khw + tap] = static_cast<int8_t>(b);
    expect_rejected(
        kMaddubs, c,
        fmt::format("output channel 3, tap (1, 2): input channels 4 and 5 weigh {} and {}", a, b));
    // The other kernels take any int8 weights.
    expect_quant_matches(gemm_name(x86_qisas().front()), c);
  }
  expect_rejected(kMaddubs, qconv_maddubs_case({.cin = 4, .cout = 4, .group = 4}), "depthwise");
}

TEST(X86QConvTactic, DeclaresItsIsa) {
  const tactics::Tactic* vnni = tactics::find_tactic("qconv.vnni.u8s8.avx512");
  ASSERT_NE(vnni, nullptr);
  EXPECT_EQ(vnni->required_features(), kIsaAvx512Vnni);
  EXPECT_EQ(vnni->domain(), "kiln");
  EXPECT_EQ(vnni->op_type(), "QConv");
  const tactics::Tactic* avx2 = tactics::find_tactic("qconv.depthwise.u8s8.avx2");
  ASSERT_NE(avx2, nullptr);
  EXPECT_EQ(avx2->required_features(), kIsaAvx2);
  const tactics::Tactic* maddubs = tactics::find_tactic(kMaddubs);
  ASSERT_NE(maddubs, nullptr);
  EXPECT_EQ(maddubs->required_features(), kIsaAvx2);
  const tactics::Tactic* amx = tactics::find_tactic("qconv.amx.u8s8");
  ASSERT_NE(amx, nullptr);
  EXPECT_EQ(amx->required_features(), kIsaAvx512Vnni | CpuFeature::kAmxTile | CpuFeature::kAmxInt8);
  EXPECT_EQ(tactics::find_tactic("qconv.depthwise.u8s8.amx"), nullptr);
}

}  // namespace x86_qconv_test
}  // namespace kiln::testing
