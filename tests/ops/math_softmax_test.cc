// Softmax, LogSoftmax, Hardmax: the opset < 13 flatten-to-2-D semantics versus the single-axis
// ones.
#include <cmath>

#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace {

const float kLn3 = std::log(3.0f);

ir::Attributes axis(int64_t a) {
  ir::Attributes attrs;
  attrs.set("axis", a);
  return attrs;
}

// [1,2,2] = [[0, ln3], [ln3, 0]].
Tensor x122() { return f32({1, 2, 2}, {0, kLn3, kLn3, 0}); }

TEST(MathSoftmax, DefaultAxisIsLastFromOpset13) {
  expect_output({.op_type = "Softmax", .opset = 13, .inputs = {in(x122())}},
                f32({1, 2, 2}, {0.25f, 0.75f, 0.75f, 0.25f}));
}

TEST(MathSoftmax, BeforeOpset13FlattensAtAxisOne) {
  // exp values 1,3,3,1 over all four elements (dims 1.. flattened): sum 8.
  expect_output({.op_type = "Softmax", .opset = 11, .inputs = {in(x122())}},
                f32({1, 2, 2}, {0.125f, 0.375f, 0.375f, 0.125f}));
  expect_output({.op_type = "Softmax", .opset = 1, .attrs = axis(2), .inputs = {in(x122())}},
                f32({1, 2, 2}, {0.25f, 0.75f, 0.75f, 0.25f}));
}

TEST(MathSoftmax, Opset13AxisIsOneDim) {
  // Along dim 1: columns (0, ln3) and (ln3, 0).
  expect_output({.op_type = "Softmax", .opset = 13, .attrs = axis(1), .inputs = {in(x122())}},
                f32({1, 2, 2}, {0.25f, 0.75f, 0.75f, 0.25f}));
  expect_output({.op_type = "Softmax", .opset = 13, .attrs = axis(0), .inputs = {in(x122())}},
                f32({1, 2, 2}, {1, 1, 1, 1}));
}

TEST(MathSoftmax, LargeInputsAreStable) {
  expect_output({.op_type = "Softmax", .opset = 13, .inputs = {in(f32({2}, {1000, 1000}))}},
                f32({2}, {0.5f, 0.5f}));
  expect_output({.op_type = "LogSoftmax", .opset = 13, .inputs = {in(f32({2}, {1000, 1000}))}},
                f32({2}, {-std::log(2.0f), -std::log(2.0f)}));
}

TEST(MathLogSoftmax, BothSemantics) {
  const float q = std::log(0.25f);
  const float t = std::log(0.75f);
  expect_output({.op_type = "LogSoftmax", .opset = 13, .inputs = {in(x122())}},
                f32({1, 2, 2}, {q, t, t, q}));
  expect_output(
      {.op_type = "LogSoftmax", .opset = 11, .inputs = {in(x122())}},
      f32({1, 2, 2}, {std::log(0.125f), std::log(0.375f), std::log(0.375f), std::log(0.125f)}));
}

TEST(MathHardmax, FirstMaximumWins) {
  const Tensor x = f32({2, 3}, {1, 3, 3, 2, 0, 2});
  expect_output({.op_type = "Hardmax", .opset = 13, .inputs = {in(x)}},
                f32({2, 3}, {0, 1, 0, 1, 0, 0}));
  // Opset 11 axis 0 flattens everything into one row: the first 3 wins.
  expect_output({.op_type = "Hardmax", .opset = 11, .attrs = axis(0), .inputs = {in(x)}},
                f32({2, 3}, {0, 1, 0, 0, 0, 0}));
}

TEST(MathSoftmax, HalfAndDouble) {
  auto x16 = cast_tensor(f32({2}, {0, kLn3}), DType::kF16);
  auto want16 = cast_tensor(f32({2}, {0.25f, 0.75f}), DType::kF16);
  expect_output({.op_type = "Softmax", .opset = 13, .inputs = {in(*x16)}}, *want16, 0,
                {1e-3, 1e-3});
  expect_output(
      {.op_type = "Softmax", .opset = 13, .inputs = {in(tensor<double>({2}, {0, std::log(3.0)}))}},
      tensor<double>({2}, {0.25, 0.75}));
}

TEST(MathSoftmax, Validation) {
  expect_error({.op_type = "Softmax", .opset = 13, .attrs = axis(3), .inputs = {in(x122())}},
               StatusCode::kInvalidModel, "axis 3 is out of range for rank 3");
  expect_error({.op_type = "Softmax", .opset = 13, .inputs = {in(i64({2}, {1, 2}))}},
               StatusCode::kUnsupported, "int64");
}

TEST(MathSoftmax, KeepsSymbolicShape) {
  auto out = infer_one("Softmax", 13, {},
                       {ir::TensorDesc::of(DType::kF32, {sym("b"), sym("h"), sym("s"), sym("s")})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].to_string(), "float32[b,h,s,s]");
}

}  // namespace
}  // namespace kiln::testing::math
