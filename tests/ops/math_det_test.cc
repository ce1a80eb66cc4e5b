// Det: hand-computed determinants (pivoting, singular, batched), dtypes, shapes and validation.
#include "math_test_util.h"

namespace kiln::testing::math {
namespace {

OpCase det(Tensor x) {
  return OpCase{.op_type = "Det", .opset = 11, .attrs = {}, .inputs = {in(std::move(x))}};
}

TEST(MathDet, TwoByTwo) { expect_output(det(f32({2, 2}, {1, 2, 3, 4})), f32({}, {-2})); }

TEST(MathDet, ThreeByThree) {
  // 2 * (3*2 - 2*1) - 0 + 1 * (1*1 - 3*1) = 8 - 2.
  expect_output(det(f32({3, 3}, {2, 0, 1, 1, 3, 2, 1, 1, 2})), f32({}, {6}));
}

TEST(MathDet, BatchedWithPivotingAndSingular) {
  // A zero leading entry needs a row swap (det -1); proportional rows give 0.
  expect_output(det(f32({3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 2, 4, 1, 2})), f32({3}, {-2, -1, 0}));
  expect_output(det(f32({1, 2, 1, 1}, {5, -3})), f32({1, 2}, {5, -3}));
}

TEST(MathDet, Float64AndFloat16) {
  auto d = cast_tensor(f32({2, 2}, {1, 2, 3, 4}), DType::kF64);
  auto h = cast_tensor(f32({2, 2}, {1, 2, 3, 4}), DType::kF16);
  ASSERT_TRUE(d.is_ok() && h.is_ok());
  expect_output(det(*d), *cast_tensor(f32({}, {-2}), DType::kF64));
  expect_output(det(*h), *cast_tensor(f32({}, {-2}), DType::kF16));
}

TEST(MathDet, ShapeInference) {
  auto r = infer_one("Det", 11, {}, {ir::TensorDesc::of(DType::kF32, {sym("b"), num(3), num(3)})});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].to_string(), "float32[b]");
}

TEST(MathDet, Errors) {
  expect_error(det(f32({2, 3}, {1, 2, 3, 4, 5, 6})), StatusCode::kInvalidModel,
               "square matrices, got 2 x 3");
  expect_error(det(f32({2}, {1, 2})), StatusCode::kInvalidModel, "rank >= 2");
  expect_error(det(i64({2, 2}, {1, 2, 3, 4})), StatusCode::kUnsupported, "dtype int64");
}

}  // namespace
}  // namespace kiln::testing::math
