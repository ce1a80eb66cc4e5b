// qgemm.vnni.u8s8.avx512 and qgemm.u8s8.avx2 against the reference kiln.QGemm: rows, depths and
// columns off the register tile (8 / 4 rows, 48 / 16 columns) and the quad, rank 2 and 3, zero
// points, float and uint8 outputs, residuals, every activation, threads, the prepacked path.
// Tolerances: kernels/quant_cases.h.
#include <gtest/gtest.h>

#include <algorithm>

#include "base/cpu_features.h"
#include "kernels/quant_cases.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

std::string name(const std::string& isa) {
  return isa == "avx512" ? "qgemm.vnni.u8s8.avx512" : "qgemm.u8s8.avx2";
}

TEST(X86QGemmTactic, OverRowsDepthsAndColumns) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t m : {1, 3, 8, 9, 17}) {
      for (int64_t k : {1, 3, 4, 5, 64, 301}) {
        for (int64_t n : {1, 7, 16, 17, 48, 49, 100}) {
          expect_quant_matches(name(isa), qgemm_case({m}, k, n, {}, static_cast<uint64_t>(m + k)));
        }
      }
    }
    expect_quant_matches(name(isa), qgemm_case({197}, 192, 576));
    expect_quant_matches(name(isa), qgemm_case({1}, 2048, 1000, {.bias = false}));
  }
}

TEST(X86QGemmTactic, RankThreeZeroPointsOutputsAndResiduals) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int x_zero : {0, 128, 37}) {
      for (bool out_u8 : {false, true}) {
        for (int residual : {0, 1, 2}) {
          for (bool bias : {false, true}) {
            const QuantOpts o{.x_zero = x_zero,
                              .out_u8 = out_u8,
                              .y_zero = x_zero == 37 ? 9 : x_zero,
                              .bias = bias,
                              .residual = residual};
            expect_quant_matches(name(isa), qgemm_case({2, 7}, 37, 53, o));
          }
        }
      }
    }
  }
}

TEST(X86QGemmTactic, EveryActivationToFloatAndUint8) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const ActCase& act : fused_activations()) {
      for (bool out_u8 : {false, true}) {
        SCOPED_TRACE(act.name + (out_u8 ? " to uint8" : " to float"));
        const QuantOpts o{
            .out_u8 = out_u8, .residual = 1, .act = act.name, .act_params = act.params};
        expect_quant_matches(name(isa), qgemm_case({11}, 70, 50, o), act_tol(act));
      }
    }
  }
}

TEST(X86QGemmTactic, ClipToUint8FoldsIntoTheRequantizationClamp) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const QuantOpts& o : clip_to_uint8_cases()) {
      SCOPED_TRACE(quant_opts_text(o));
      expect_quant_matches(name(isa), qgemm_case({3, 7}, 37, 53, o), kQuantActTol);
    }
  }
}

TEST(X86QGemmTactic, PrepackedAndThreadedMatchTheReference) {
  const auto isas = x86_qisas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(name(isa), qgemm_case({3, 21}, 65, 99), kQuantFloatTol,
                                         threads);
      expect_matches_reference_prepacked(
          name(isa), qgemm_case({1}, 512, 130, {.out_u8 = true, .residual = 2, .act = "Relu"}),
          {0, 1}, threads);
    }
  }
}

constexpr const char* kMaddubs = "qgemm.maddubs.u8s8.avx2";

TEST(X86QGemmTactic, MaddubsIsExactUpToThePairBound) {
  const auto isas = x86_qisas();
  if (std::find(isas.begin(), isas.end(), "avx2") == isas.end()) GTEST_SKIP() << "no AVX2";
  for (int64_t m : {1, 5, 9}) {
    for (int64_t k : {1, 3, 4, 5, 64, 301}) {
      for (int64_t n : {1, 7, 16, 17, 49}) {
        const auto seed = static_cast<uint64_t>(m + k);
        expect_quant_matches(kMaddubs, qgemm_maddubs_case({m}, k, n, {}, seed));
        expect_quant_matches(kMaddubs,
                             saturated_input(qgemm_maddubs_case({m}, k, n, {.x_zero = 0}, seed)));
      }
    }
  }
  expect_quant_matches(
      kMaddubs,
      qgemm_maddubs_case({2, 197}, 192, 576,
                         {.x_zero = 37, .out_u8 = true, .residual = 2, .act = "Relu"}),
      {0, 1});
  for (int threads : {1, 2, 3}) {
    expect_matches_reference_prepacked(kMaddubs, qgemm_maddubs_case({37}, 70, 45), kQuantFloatTol,
                                       threads);
  }
}

TEST(X86QGemmTactic, MaddubsRefusesWeightsThatCouldSaturate) {
  const auto isas = x86_qisas();
  if (std::find(isas.begin(), isas.end(), "avx2") == isas.end()) GTEST_SKIP() << "no AVX2";
  OpCase c = qgemm_maddubs_case({3}, 10, 6);
  int8_t* b = c.inputs[1].tensor->data<int8_t>();
  b[6 * 6 + 4] = 100;  // rows 6 and 7 of column 4
  b[7 * 6 + 4] = 29;
  expect_rejected(kMaddubs, c, "column 4: rows 6 and 7 of B weigh 100 and 29");
  expect_quant_matches(name(isas.front()), c);
  b[7 * 6 + 4] = 28;  // back within the bound; then a negative pair past it
  b[2 * 6 + 1] = -100;
  b[3 * 6 + 1] = -29;
  expect_rejected(kMaddubs, c, "column 1: rows 2 and 3 of B weigh -100 and -29");
}

TEST(X86QGemmTactic, DeclaresItsIsa) {
  const tactics::Tactic* vnni = tactics::find_tactic("qgemm.vnni.u8s8.avx512");
  ASSERT_NE(vnni, nullptr);
  EXPECT_EQ(vnni->required_features(), kIsaAvx512Vnni);
  EXPECT_EQ(vnni->op_type(), "QGemm");
  const tactics::Tactic* avx2 = tactics::find_tactic("qgemm.u8s8.avx2");
  ASSERT_NE(avx2, nullptr);
  EXPECT_EQ(avx2->required_features(), kIsaAvx2);
}

}  // namespace
}  // namespace kiln::testing
