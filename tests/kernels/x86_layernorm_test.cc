// layernorm.f32.avx512 / layernorm.f32.avx2 against the reference LayerNormalization: rows of every
// tail length, a large mean (the variance must not cancel), broadcast scale and bias, no bias, the
// statistics outputs, rows split over threads.
#include <gtest/gtest.h>

#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

std::string lname(const std::string& isa) { return "layernorm.f32." + isa; }

constexpr Tolerance kLnTol{1e-5, 1e-5};

OpCase layer_norm_case(const Dims& x, int64_t axis, const Dims& scale, bool bias,
                       int num_outputs = 1, float offset = 0.0f) {
  OpCase c;
  c.op_type = "LayerNormalization";
  c.opset = 17;
  c.attrs = attrs({{"axis", axis}, {"epsilon", 1e-5f}});
  Tensor t = random_f32(x, 3);
  for (float& v : t.span<float>()) v += offset;
  c.inputs = {in(t), constant(random_f32(scale, 4))};
  if (bias) c.inputs.push_back(constant(random_f32(scale, 5)));
  c.num_outputs = num_outputs;
  return c;
}

TEST(X86LayerNormTactic, RowsOfEveryLengthMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t n = 1; n <= 50; ++n) {
      SCOPED_TRACE(n);
      expect_matches_reference(lname(isa), layer_norm_case({3, n}, -1, {n}, n % 2 == 0), kLnTol);
    }
    for (const int64_t n : {int64_t{128}, int64_t{192}, int64_t{768}}) {
      expect_matches_reference(lname(isa), layer_norm_case({5, n}, -1, {n}, true), kLnTol);
    }
  }
}

TEST(X86LayerNormTactic, LargeMeanBroadcastsAndStatistics) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_matches_reference(lname(isa), layer_norm_case({4, 37}, -1, {37}, true, 1, 1000.0f),
                             {1e-3, 1e-3});
    expect_matches_reference(lname(isa), layer_norm_case({2, 3, 5, 7}, -2, {1, 7}, true), kLnTol);
    expect_matches_reference(lname(isa), layer_norm_case({2, 3, 5, 7}, 1, {5, 1}, false), kLnTol);
    expect_matches_reference(lname(isa), layer_norm_case({4, 6, 19}, -1, {19}, true, 3), kLnTol);
  }
}

TEST(X86LayerNormTactic, ViTRowsOverThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(
          lname(isa), layer_norm_case({1, 197, 192}, -1, {192}, true), kLnTol, threads);
    }
  }
}

}  // namespace
}  // namespace kiln::testing
