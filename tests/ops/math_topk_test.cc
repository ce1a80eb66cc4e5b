// TopK (k attribute vs input, largest/sorted, ties by lower index) and CumSum.
#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace {

ir::Attributes topk_attrs(int64_t axis, int64_t largest) {
  ir::Attributes a;
  a.set("axis", axis);
  a.set("largest", largest);
  return a;
}

OpCase topk(Tensor x, int64_t k, ir::Attributes attrs = {}, bool constant_k = false) {
  return {.op_type = "TopK",
          .opset = 11,
          .attrs = std::move(attrs),
          .inputs = {in(std::move(x)), in(i64({1}, {k}), constant_k)},
          .num_outputs = 2};
}

TEST(MathTopK, LargestAlongLastAxis) {
  const Tensor x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  for (bool constant : {false, true}) {
    const OpCase c = topk(x, 3, {}, constant);
    expect_output(c, f32({3, 3}, {3, 2, 1, 7, 6, 5, 11, 10, 9}), 0);
    expect_output(c, i64({3, 3}, {3, 2, 1, 3, 2, 1, 3, 2, 1}), 1);
  }
}

TEST(MathTopK, TiesGoToTheLowerIndex) {
  const Tensor x = f32({1, 4}, {1, 3, 3, 2});
  expect_output(topk(x, 2), f32({1, 2}, {3, 3}), 0);
  expect_output(topk(x, 2), i64({1, 2}, {1, 2}), 1);
  expect_output(topk(x, 2, topk_attrs(-1, 0)), f32({1, 2}, {1, 2}), 0);
  expect_output(topk(x, 2, topk_attrs(-1, 0)), i64({1, 2}, {0, 3}), 1);
}

TEST(MathTopK, OtherAxisAndIntegers) {
  const Tensor x = i64({2, 2}, {1, 4, 3, 2});
  expect_output(topk(x, 1, topk_attrs(0, 1)), i64({1, 2}, {3, 4}), 0);
  expect_output(topk(x, 1, topk_attrs(0, 1)), i64({1, 2}, {1, 0}), 1);
}

TEST(MathTopK, KAttributeAtOpset1) {
  ir::Attributes a;
  a.set("k", int64_t{1});
  expect_output({.op_type = "TopK",
                 .opset = 1,
                 .attrs = a,
                 .inputs = {in(f32({3}, {2, 7, 5}))},
                 .num_outputs = 2},
                f32({1}, {7}), 0);
}

TEST(MathTopK, Validation) {
  const Tensor x = f32({2, 4}, std::vector<float>(8));
  expect_error(topk(x, 5), StatusCode::kInvalidModel, "k = 5 is larger than dim 1 = 4");
  expect_error(topk(x, -1), StatusCode::kInvalidModel, "k must be >= 0");
  expect_error(topk(x, 1, topk_attrs(2, 1)), StatusCode::kInvalidModel, "axis 2 is out of range");
}

TEST(MathTopK, SymbolicShapes) {
  const ir::TensorDesc x = ir::TensorDesc::of(DType::kF32, {sym("batch"), num(10)});
  const ir::TensorDesc k = ir::TensorDesc::of(DType::kI64, {num(1)});
  auto known = infer_one("TopK", 11, {}, {x, k}, {std::nullopt, i64({1}, {3})}, 2);
  ASSERT_TRUE(known.is_ok()) << known.status().to_string();
  EXPECT_EQ((*known)[0].to_string(), "float32[batch,3]");
  EXPECT_EQ((*known)[1].to_string(), "int64[batch,3]");
  auto unknown = infer_one("TopK", 11, {}, {x, k}, {}, 2);
  ASSERT_TRUE(unknown.is_ok()) << unknown.status().to_string();
  EXPECT_EQ((*unknown)[0].to_string(), "float32[batch,?]");
}

ir::Attributes cumsum_attrs(int64_t exclusive, int64_t reverse) {
  ir::Attributes a;
  a.set("exclusive", exclusive);
  a.set("reverse", reverse);
  return a;
}

TEST(MathCumSum, ExclusiveAndReverse) {
  const Tensor x = f32({3}, {1, 2, 3});
  const auto run = [&](int64_t ex, int64_t rev, std::vector<float> want) {
    expect_output(
        {.op_type = "CumSum", .attrs = cumsum_attrs(ex, rev), .inputs = {in(x), in(i64({}, {0}))}},
        f32({3}, std::move(want)));
  };
  run(0, 0, {1, 3, 6});
  run(1, 0, {0, 1, 3});
  run(0, 1, {6, 5, 3});
  run(1, 1, {5, 3, 0});
  expect_output({.op_type = "CumSum",
                 .inputs = {in(tensor<int32_t>({2, 2}, {1, 2, 3, 4})), in(i64({}, {-1}))}},
                tensor<int32_t>({2, 2}, {1, 3, 3, 7}));
  expect_error({.op_type = "CumSum", .inputs = {in(x), in(i64({}, {1}))}},
               StatusCode::kInvalidModel, "axis 1 is out of range");
}

}  // namespace
}  // namespace kiln::testing::math
