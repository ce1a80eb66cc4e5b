// eltwise.<op>.f32.avx512 / .avx2 (standalone activations on the epilogues' vector math) against
// the reference ops: every length around the 4-vector loop and its tail, values across the
// activations' ranges with infinities and NaN, the ops' attributes and Clip's constant bounds,
// split over threads.
#include <gtest/gtest.h>

#include <limits>

#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_eltwise_test {

constexpr Tolerance kActTol{1e-6, 1e-7};

// Uniform in [-12, 12), with -inf, +inf, NaN, -90 and 90 (past the exps' range) among them.
Tensor values(int64_t n, uint64_t seed) {
  Tensor t = random_f32({n}, seed);
  float* p = t.data<float>();
  const float special[] = {-std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), -90.0f, 90.0f};
  for (int64_t i = 0; i < n; ++i) p[i] = i % 11 == 3 ? special[i / 11 % 5] : 12.0f * p[i];
  return t;
}

OpCase act_case(const std::string& op, int64_t n, ir::Attributes a = {}) {
  OpCase c;
  c.op_type = op;
  c.opset = 14;  // HardSwish's first
  c.attrs = std::move(a);
  c.inputs = {in(values(n, static_cast<uint64_t>(n)))};
  return c;
}

Tensor scalar(float v) { return Tensor::from_vector<float>({}, {v}); }

std::string tname(const std::string& op, const std::string& isa) {
  return "eltwise." + op + ".f32." + isa;
}

TEST(X86ActivationTactics, EveryLengthAndSpecialValuesMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const std::pair<const char*, const char*> ops[] = {{"Relu", "relu"},
                                                     {"Sigmoid", "sigmoid"},
                                                     {"Tanh", "tanh"},
                                                     {"HardSwish", "hard_swish"},
                                                     {"HardSigmoid", "hard_sigmoid"},
                                                     {"LeakyRelu", "leaky_relu"}};
  for (const std::string& isa : isas) {
    for (const auto& [op, name] : ops) {
      for (int64_t n : {1, 7, 8, 15, 16, 17, 63, 64, 65, 1000}) {
        SCOPED_TRACE(std::string(op) + " " + std::to_string(n));
        expect_matches_reference(tname(name, isa), act_case(op, n), kActTol);
      }
    }
  }
}

TEST(X86ActivationTactics, ReadTheirAttributesAndClipsConstantBounds) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_matches_reference(tname("hard_sigmoid", isa),
                             act_case("HardSigmoid", 99, attrs({{"alpha", 0.3f}, {"beta", 0.4f}})),
                             kActTol);
    expect_matches_reference(tname("leaky_relu", isa),
                             act_case("LeakyRelu", 99, attrs({{"alpha", 0.25f}})), kActTol);
    OpCase clip = act_case("Clip", 99);
    clip.inputs.push_back(constant(scalar(-1.5f)));
    clip.inputs.push_back(constant(scalar(6.0f)));
    expect_matches_reference(tname("clip", isa), clip, kActTol);
    OpCase below = act_case("Clip", 33);
    below.inputs.push_back(constant(scalar(0.0f)));  // no max: +inf stays
    expect_matches_reference(tname("clip", isa), below, kActTol);
    OpCase runtime_min = act_case("Clip", 33);
    runtime_min.inputs.push_back(in(scalar(0.0f)));
    expect_rejected(tname("clip", isa), runtime_min, "min");
  }
}

TEST(X86ActivationTactics, SplitOverThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_matches_reference_prepacked(tname("sigmoid", isa), act_case("Sigmoid", 80 * 2100 + 5),
                                       kActTol, 2);
    expect_matches_reference_prepacked(tname("tanh", isa), act_case("Tanh", 40000), kActTol, 3);
  }
}

}  // namespace x86_eltwise_test
}  // namespace kiln::testing
