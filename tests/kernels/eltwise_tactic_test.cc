// eltwise.<op>.f32 against the reference element-wise kernels, and the vectorizable exp the
// kernels use.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/cpu/vec_util.h"
#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace {

OpCase binary_case(const char* op, const Dims& a, const Dims& b, bool const_b = false) {
  OpCase c;
  c.op_type = op;
  c.opset = 14;
  c.inputs = {in(random_f32(a, 1))};
  Tensor bt = random_f32(b, 2);
  c.inputs.push_back(const_b ? constant(bt) : in(bt));
  return c;
}

TEST(EltwiseTactic, BinaryOpsMatchReferenceOverBroadcastPatterns) {
  const std::pair<Dims, Dims> shapes[] = {
      {{7}, {7}},                          // equal, rank 1
      {{2, 3, 5, 7}, {2, 3, 5, 7}},        // equal, rank 4
      {{2, 3, 5, 7}, {}},                  // scalar
      {{}, {2, 3, 5}},                     // scalar on the left
      {{2, 3, 5, 7}, {1}},                 // one-element tensor
      {{2, 17, 5, 7}, {1, 17, 1, 1}},      // per channel
      {{2, 17, 5, 7}, {17, 1, 1}},         // per channel, lower rank
      {{3, 5, 33}, {33}},                  // per last axis (bias)
      {{3, 5, 1}, {3, 1, 7}},              // both sides broadcast
      {{4, 1}, {1, 13}},                   // outer product
      {{2, 1, 3, 1, 5}, {1, 4, 3, 6, 1}},  // rank 5, alternating
      {{1, 1, 1}, {1, 1}},                 // all ones
      {{2, 0, 3}, {3}},                    // empty
  };
  const std::pair<const char*, const char*> ops[] = {{"Add", "eltwise.add.f32"},
                                                     {"Sub", "eltwise.sub.f32"},
                                                     {"Mul", "eltwise.mul.f32"},
                                                     {"Div", "eltwise.div.f32"}};
  for (const auto& [a, b] : shapes) {
    for (const auto& [op, tactic] : ops) {
      expect_matches_reference(tactic, binary_case(op, a, b), kPointTol);
    }
  }
  expect_matches_reference("eltwise.add.f32", binary_case("Add", {2, 8, 3}, {8, 1}, true),
                           kPointTol);
}

TEST(EltwiseTactic, BinaryRefusesLegacyBroadcastAndOtherDtypes) {
  OpCase c = binary_case("Add", {2, 3}, {2, 3});
  c.opset = 6;
  expect_rejected("eltwise.add.f32", c, "opset 6");
  OpCase i;
  i.op_type = "Mul";
  i.inputs = {in(Tensor(DType::kI64, {2})), in(Tensor(DType::kI64, {2}))};
  expect_rejected("eltwise.mul.f32", i, "int64");
}

// Values that exercise every branch: both signs, tiny, large, and the specials.
Tensor unary_input(int64_t n) {
  Tensor t = random_f32({n}, 5);
  float* v = t.data<float>();
  for (int64_t i = 0; i < n; ++i) v[i] *= 12.0f;  // [-12, 12): past HardSigmoid's and Clip's knees
  const float specials[] = {0.0f,
                            -0.0f,
                            1e-30f,
                            -1e-30f,
                            90.0f,
                            -90.0f,
                            -120.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (int64_t i = 0; i < n && i < 10; ++i) v[i] = specials[i];
  return t;
}

TEST(EltwiseTactic, UnaryOpsMatchReference) {
  const std::pair<const char*, const char*> ops[] = {
      {"Relu", "eltwise.relu.f32"},
      {"Sigmoid", "eltwise.sigmoid.f32"},
      {"Tanh", "eltwise.tanh.f32"},
      {"Exp", "eltwise.exp.f32"},
      {"Erf", "eltwise.erf.f32"},
      {"Sqrt", "eltwise.sqrt.f32"},
      {"Neg", "eltwise.neg.f32"},
      {"Abs", "eltwise.abs.f32"},
      {"HardSigmoid", "eltwise.hard_sigmoid.f32"},
      {"HardSwish", "eltwise.hard_swish.f32"},
      {"LeakyRelu", "eltwise.leaky_relu.f32"},
      {"Clip", "eltwise.clip.f32"},
  };
  for (const auto& [op, tactic] : ops) {
    for (int64_t n : {1, 7, 33, 1000}) {
      OpCase c;
      c.op_type = op;
      c.opset = 17;
      c.inputs = {in(unary_input(n))};
      expect_matches_reference(tactic, c, kPointTol);
    }
  }
}

TEST(EltwiseTactic, UnaryOpsReadTheirAttributes) {
  OpCase c;
  c.opset = 17;
  c.inputs = {in(unary_input(100))};
  c.op_type = "HardSigmoid";
  c.attrs = attrs({{"alpha", 0.3f}, {"beta", 0.4f}});
  expect_matches_reference("eltwise.hard_sigmoid.f32", c, kPointTol);
  c.op_type = "LeakyRelu";
  c.attrs = attrs({{"alpha", 0.25f}});
  expect_matches_reference("eltwise.leaky_relu.f32", c, kPointTol);
}

TEST(EltwiseTactic, ClipTakesBoundsFromAttributesOrConstantInputs) {
  OpCase old;
  old.op_type = "Clip";
  old.opset = 6;
  old.inputs = {in(unary_input(50))};
  old.attrs = attrs({{"min", -2.0f}, {"max", 3.0f}});
  expect_matches_reference("eltwise.clip.f32", old, kPointTol);
  old.attrs = attrs({{"max", 0.5f}});
  expect_matches_reference("eltwise.clip.f32", old, kPointTol);

  OpCase c;
  c.op_type = "Clip";
  c.opset = 13;
  c.inputs = {in(unary_input(50)), constant(Tensor::scalar(-1.0f)), constant(Tensor::scalar(6.0f))};
  expect_matches_reference("eltwise.clip.f32", c, kPointTol);  // Relu6 with a twist
  c.inputs[2] = absent();
  expect_matches_reference("eltwise.clip.f32", c, kPointTol);
  c.inputs = {in(unary_input(50)), absent(), constant(Tensor::scalar(0.25f))};
  expect_matches_reference("eltwise.clip.f32", c, kPointTol);
  c.inputs = {in(unary_input(50)), constant(Tensor::scalar(2.0f)), constant(Tensor::scalar(1.0f))};
  expect_matches_reference("eltwise.clip.f32", c, kPointTol);  // min > max: everything is max

  c.inputs = {in(unary_input(50)), in(Tensor::scalar(0.0f))};
  expect_rejected("eltwise.clip.f32", c, "min");
}

TEST(EltwiseTactic, UnaryRefusesIntegers) {
  OpCase c;
  c.op_type = "Relu";
  c.opset = 14;
  c.inputs = {in(Tensor(DType::kI32, {4}))};
  expect_rejected("eltwise.relu.f32", c, "int32");
}

TEST(VectorExp, MatchesStdExpAcrossTheFloatRange) {
  // Relative error within 4 ulp where e^x is a normal float; exact specials; the denormal range
  // within an absolute 2^-149 step.
  for (float x = -110.0f; x < 90.0f; x += 0.0137f) {
    const float want = std::exp(x);
    const float got = kernels::cpu::exp_f32(x);
    if (std::isinf(want)) {
      ASSERT_EQ(got, want) << "x = " << x;
    } else if (want >= std::numeric_limits<float>::min()) {
      ASSERT_NEAR(got, want, 4 * std::numeric_limits<float>::epsilon() * want) << "x = " << x;
    } else {
      ASSERT_NEAR(got, want, 2 * std::numeric_limits<float>::denorm_min()) << "x = " << x;
    }
  }
  EXPECT_EQ(kernels::cpu::exp_f32(0.0f), 1.0f);
  EXPECT_EQ(kernels::cpu::exp_f32(89.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(kernels::cpu::exp_f32(std::numeric_limits<float>::infinity()),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(kernels::cpu::exp_f32(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(kernels::cpu::exp_f32(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(kernels::cpu::exp_f32(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace kiln::testing
