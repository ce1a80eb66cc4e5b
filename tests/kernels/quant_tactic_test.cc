// The portable INT8 tactics, qconv.portable.u8s8 and qgemm.portable.u8s8, against the reference:
// the geometries, zero points, outputs, residuals and activations the x86 tests cover, at every
// ISA cap (they need none). Tolerances: kernels/quant_cases.h.
#include <gtest/gtest.h>

#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

TEST(QuantTactic, PortableQConvOverGeometries) {
  const ConvGeom cases[] = {
      {.batch = 2, .cin = 9, .cout = 19, .h = 7, .w = 10, .pad = 1},
      {.cin = 3, .cout = 8, .h = 17, .w = 19, .kh = 7, .kw = 7, .stride = 2, .pad = 3},
      {.cin = 6, .cout = 9, .group = 3, .h = 6, .w = 13, .kh = 2, .kw = 2, .dil = 2},
      {.cin = 5, .cout = 5, .group = 5, .h = 9, .w = 30, .stride = 2, .pad = 1},
      {.cin = 30, .cout = 7, .h = 5, .w = 5, .kh = 1, .kw = 1},
      {.cin = 7, .cout = 9, .h = 10, .w = 11, .stride = 3, .pad = 2},
  };
  for (const ConvGeom& g : cases) {
    expect_quant_matches("qconv.portable.u8s8", qconv_case(g));
    expect_quant_matches("qconv.portable.u8s8",
                         qconv_case(g, {.x_zero = 37, .out_u8 = true, .y_zero = 3, .residual = 2}));
  }
}

TEST(QuantTactic, PortableQConvAndQGemmEveryActivationAndResidual) {
  const ConvGeom g{.cin = 7, .cout = 17, .h = 6, .w = 9, .pad = 1};
  for (const ActCase& act : fused_activations()) {
    for (bool out_u8 : {false, true}) {
      for (int residual : {0, 1, 2}) {
        SCOPED_TRACE(act.name + (out_u8 ? " to uint8" : " to float"));
        const QuantOpts o{.x_zero = 0,
                          .out_u8 = out_u8,
                          .bias = residual != 1,
                          .residual = residual,
                          .act = act.name,
                          .act_params = act.params};
        expect_quant_matches("qconv.portable.u8s8", qconv_case(g, o), act_tol(act));
        expect_quant_matches("qgemm.portable.u8s8", qgemm_case({2, 3}, 37, 21, o), act_tol(act));
      }
    }
  }
}

TEST(QuantTactic, PortableQGemmOverShapesAndThreads) {
  for (int64_t k : {1, 5, 64, 301}) {
    expect_quant_matches("qgemm.portable.u8s8", qgemm_case({9}, k, 17));
  }
  for (int threads : {1, 3}) {
    expect_matches_reference_prepacked("qgemm.portable.u8s8", qgemm_case({5, 7}, 65, 33),
                                       kQuantFloatTol, threads);
    expect_matches_reference_prepacked(
        "qconv.portable.u8s8",
        qconv_case({.batch = 3, .cin = 9, .cout = 5, .h = 10, .w = 11, .pad = 1}), kQuantFloatTol,
        threads);
  }
}

TEST(QuantTactic, PortableNeedsNoCpuFeatures) {
  for (const char* name : {"qconv.portable.u8s8", "qgemm.portable.u8s8"}) {
    const tactics::Tactic* t = tactics::find_tactic(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->required_features(), 0u);
    EXPECT_EQ(t->domain(), "kiln");
  }
}

}  // namespace
}  // namespace kiln::testing
