// qgemm.vnni.u8s8.avx512 and qgemm.u8s8.avx2 against the reference kiln.QGemm: rows, depths and
// columns off the register tile (8 / 4 rows, 48 / 16 columns) and the quad, rank 2 and 3, zero
// points, float and uint8 outputs, residuals, every activation, threads, the prepacked path.
// Tolerances: kernels/quant_cases.h.
#include <gtest/gtest.h>

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
