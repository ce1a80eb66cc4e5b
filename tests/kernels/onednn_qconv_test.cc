// kiln.QConvNhwc: its reference (kiln.QConv's, on transposed tensors) and the oneDNN tactic
// (onednn.qconv_nhwc.u8s8) against it over geometries, zero points, residuals and activations.

#include <gtest/gtest.h>

#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace onednn_qconv_test {

constexpr char kTactic[] = "onednn.qconv_nhwc.u8s8";
// oneDNN's first implementation and its jit_int8 kernels (the tuner times both).
const char* const kTactics[] = {kTactic, "onednn.qconv_nhwc_jit.u8s8"};
std::vector<ConvGeom> geometries() {
  return {
      {.cin = 16, .cout = 32, .h = 9, .w = 11, .kh = 1, .kw = 1},
      {.cin = 8, .cout = 16, .h = 7, .w = 6, .pad = 1},
      {.cin = 5, .cout = 7, .h = 8, .w = 9, .stride = 2, .pad = 1},  // odd channels
      {.cin = 3, .cout = 16, .h = 15, .w = 13, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.cin = 32, .cout = 64, .h = 10, .w = 10, .kh = 1, .kw = 1, .stride = 2},
      {.batch = 2, .cin = 12, .cout = 20, .h = 9, .w = 9, .pad = 2, .dil = 2},
  };
}

void expect_nhwc_matches(const OpCase& c) {
  auto want = run_op(c);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  for (const char* tactic : kTactics) {
    SCOPED_TRACE(std::string(tactic) + " on " + case_text(c));
    auto got = run_tactic(tactic, c);
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_EQ(compare_quant(got->outputs[0], (*want)[0], kQuantFloatTol), "");
  }
}

TEST(QConvNhwcOp, IsQConvOnTransposedTensors) {
  for (const ConvGeom& g : geometries()) {
    const QuantOpts o{.out_u8 = true, .residual = 2, .act = "Relu"};
    auto nchw = run_op(qconv_case(g, o));
    auto nhwc = run_op(qconv_nhwc_case(g, o));
    ASSERT_TRUE(nchw.is_ok()) << nchw.status().to_string();
    ASSERT_TRUE(nhwc.is_ok()) << nhwc.status().to_string();
    EXPECT_EQ(compare_tensors((*nhwc)[0], ops::permuted((*nchw)[0], ops::kNchwToNhwc), {0, 0}), "");
  }
}

TEST(QConvNhwcOp, RefusesAnXThatIsNot4D) {
  OpCase c = qconv_nhwc_case(ConvGeom{.cin = 4, .cout = 4}, {.out_u8 = true});
  c.inputs[0].tensor = random_u8({1, 5, 7, 4, 1}, 3);
  auto r = run_op(c);
  ASSERT_FALSE(r.is_ok());
  EXPECT_NE(r.status().message().find("[N, H, W, C]"), std::string::npos) << r.status().message();
}

TEST(OnednnQConvNhwc, MatchesReferenceOverGeometriesAndZeroPoints) {
  // Without VNNI oneDNN's u8s8 kernels sum pairs in int16 and saturate; the tactic requires it.
  KILN_REQUIRE_VNNI();
  for (const ConvGeom& g : geometries()) {
    for (int x_zero : {0, 128}) {
      for (int y_zero : {0, 77}) {
        expect_nhwc_matches(qconv_nhwc_case(
            g, {.x_zero = x_zero, .out_u8 = true, .y_zero = y_zero, .act = "Relu"}, 5));
      }
    }
  }
}

TEST(OnednnQConvNhwc, MatchesReferenceWithResidualsAndActivations) {
  // Without VNNI oneDNN's u8s8 kernels sum pairs in int16 and saturate; the tactic requires it.
  KILN_REQUIRE_VNNI();
  const ConvGeom g{.cin = 16, .cout = 24, .h = 9, .w = 7, .pad = 1};
  for (int residual : {0, 2}) {
    for (bool bias : {true, false}) {
      expect_nhwc_matches(qconv_nhwc_case(g, {.out_u8 = true, .bias = bias, .residual = residual}));
      expect_nhwc_matches(qconv_nhwc_case(
          g, {.out_u8 = true, .residual = residual, .act = "LeakyRelu", .act_params = {0.1f}}));
    }
  }
  for (const QuantOpts& o : clip_to_uint8_cases()) {
    SCOPED_TRACE(quant_opts_text(o));
    if (o.act_params[0] > o.act_params[1]) {
      expect_rejected(kTactic, qconv_nhwc_case(g, o), "min above max");
    } else {
      expect_nhwc_matches(qconv_nhwc_case(g, o));
    }
  }
}

TEST(OnednnQConvNhwc, RefusesWhatItCannotExpress) {
  const ConvGeom g{.cin = 8, .cout = 8};
  expect_rejected(kTactic, qconv_nhwc_case(g, {}), "uint8 Y only");
  expect_rejected(kTactic, qconv_nhwc_case(g, {.out_u8 = true, .residual = 1}), "must be uint8");
  expect_rejected(kTactic, qconv_nhwc_case(g, {.out_u8 = true, .act = "Sigmoid"}), "commute");
  expect_rejected(kTactic,
                  qconv_nhwc_case(ConvGeom{.cin = 8, .cout = 8, .group = 2}, {.out_u8 = true}),
                  "one group");
}

TEST(OnednnQConvNhwc, NamesAChannelWithABiasButAZeroScale) {
  // The bias goes to oneDNN in accumulator units (bias / (x_scale * w_scale)).
  OpCase c = qconv_nhwc_case(ConvGeom{.cin = 8, .cout = 8}, {.out_u8 = true});
  c.inputs[2].tensor->span<float>()[3] = 0.0f;
  c.inputs[3].tensor->span<float>()[3] = 0.5f;
  for (const char* tactic : kTactics) {
    auto got = run_tactic(tactic, c);
    ASSERT_FALSE(got.is_ok()) << tactic;
    EXPECT_NE(got.status().message().find("channel 3 has a bias but a zero scale"),
              std::string::npos)
        << got.status().to_string();
  }
}

}  // namespace onednn_qconv_test
}  // namespace kiln::testing
