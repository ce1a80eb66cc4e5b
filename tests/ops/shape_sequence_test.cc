// ReverseSequence and Unique: hand-computed values, attributes, shape inference and validation.
#include <cmath>

#include "shape_test_util.h"

namespace kiln::shape_test {
namespace {

OpCase reverse(Tensor x, OpInput lens, ir::Attributes a = {}) {
  return OpCase{.op_type = "ReverseSequence",
                .opset = 10,
                .attrs = std::move(a),
                .inputs = {in(std::move(x)), std::move(lens)}};
}

ir::Attributes axes(int64_t batch, int64_t time) {
  ir::Attributes a;
  a.set("batch_axis", batch);
  a.set("time_axis", time);
  return a;
}

TEST(ShapeReverseSequence, TimeMajor) {
  // Columns are batches: {0,2,4,6} reversed whole, {1,3,5,7} in its first two steps.
  for (bool is_constant : {false, true}) {
    const Tensor lens = i64({2}, {4, 2});
    expect_output(
        reverse(i64({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), is_constant ? cin(lens) : in(lens)),
        i64({4, 2}, {6, 3, 4, 1, 2, 5, 0, 7}));
  }
}

TEST(ShapeReverseSequence, BatchMajorWithInnerDimsAndZeroLength) {
  // [batch 2, time 3, 1]: row 0 reversed, row 1 (length 0) kept.
  expect_output(reverse(f32({2, 3, 1}, {1, 2, 3, 4, 5, 6}), in(i64({2}, {3, 0})), axes(0, 1)),
                f32({2, 3, 1}, {3, 2, 1, 4, 5, 6}));
}

TEST(ShapeReverseSequence, Errors) {
  const Tensor x = i64({3, 2}, {0, 1, 2, 3, 4, 5});
  expect_error(reverse(x, in(i64({2}, {1, 1})), axes(0, 0)), StatusCode::kInvalidModel,
               "must be 0 and 1");
  expect_error(reverse(x, in(i64({2}, {1, 1})), axes(2, 0)), StatusCode::kInvalidModel,
               "must be 0 and 1");
  expect_error(reverse(x, in(i64({2}, {4, 1}))), StatusCode::kInvalidModel,
               "sequence_lens[0] = 4 is outside [0, 3]");
  expect_error(reverse(x, cin(i64({2}, {1, -1}))), StatusCode::kInvalidModel,
               "sequence_lens[1] = -1");
  expect_error(reverse(x, in(i64({3}, {1, 1, 1}))), StatusCode::kInvalidModel,
               "one entry per batch");
  expect_error(reverse(x, in(i32({2}, {1, 1}))), StatusCode::kInvalidModel, "expected int64");
  expect_error(reverse(i64({2}, {0, 1}), in(i64({1}, {1}))), StatusCode::kInvalidModel,
               "rank >= 2");
}

OpCase unique(Tensor x, ir::Attributes a = {}) {
  return OpCase{.op_type = "Unique",
                .opset = 11,
                .attrs = std::move(a),
                .inputs = {in(std::move(x))},
                .num_outputs = 4};
}

void expect_unique(const OpCase& c, const Tensor& y, std::vector<int64_t> first,
                   std::vector<int64_t> inverse, std::vector<int64_t> counts) {
  const std::vector<Tensor> out = run(c);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(testing::compare_tensors(out[0], y, {0.0, 0.0}), "");
  const auto n = static_cast<int64_t>(first.size());
  EXPECT_EQ(testing::compare_tensors(out[1], i64({n}, first), {0.0, 0.0}), "");
  const auto m = static_cast<int64_t>(inverse.size());
  EXPECT_EQ(testing::compare_tensors(out[2], i64({m}, inverse), {0.0, 0.0}), "");
  EXPECT_EQ(testing::compare_tensors(out[3], i64({n}, counts), {0.0, 0.0}), "");
}

TEST(ShapeUnique, FlattenedSortedAndUnsorted) {
  const Tensor x = i64({2, 3}, {2, 1, 1, 3, 4, 3});
  expect_unique(unique(x), i64({4}, {1, 2, 3, 4}), {1, 0, 3, 4}, {1, 0, 0, 2, 3, 2}, {2, 1, 2, 1});
  ir::Attributes a;
  a.set("sorted", int64_t{0});
  expect_unique(unique(x, a), i64({4}, {2, 1, 3, 4}), {0, 1, 3, 4}, {0, 1, 1, 2, 3, 2},
                {1, 2, 2, 1});
}

TEST(ShapeUnique, AlongAnAxis) {
  ir::Attributes a;
  a.set("axis", int64_t{0});
  // Rows {1,0}, {0,1}, {1,0}: sorted rows {0,1} < {1,0}.
  expect_unique(unique(f32({3, 2}, {1, 0, 0, 1, 1, 0}), a), f32({2, 2}, {0, 1, 1, 0}), {1, 0},
                {1, 0, 1}, {1, 2});
  // Columns of [[1,2,1],[3,4,3]] with a negative axis: (1,3), (2,4), (1,3).
  a.set("axis", int64_t{-1});
  expect_unique(unique(i32({2, 3}, {1, 2, 1, 3, 4, 3}), a), i32({2, 2}, {1, 2, 3, 4}), {0, 1},
                {0, 1, 0}, {2, 1});
}

TEST(ShapeUnique, FloatZerosAndNaNs) {
  // -0 equals 0 (the first occurrence is kept); NaNs are equal and sort last.
  const std::vector<Tensor> out = run(unique(f32({5}, {0.0f, -0.0f, NAN, 1.0f, NAN})));
  ASSERT_EQ(out.size(), 4u);
  ASSERT_EQ(out[0].numel(), 3);
  EXPECT_EQ(out[0].value_as_double(0), 0.0);
  EXPECT_FALSE(std::signbit(out[0].value_as_double(0)));
  EXPECT_EQ(out[0].value_as_double(1), 1.0);
  EXPECT_TRUE(std::isnan(out[0].value_as_double(2)));
  EXPECT_EQ(testing::compare_tensors(out[3], i64({3}, {2, 1, 2}), {0.0, 0.0}), "");
  EXPECT_EQ(testing::compare_tensors(out[2], i64({5}, {0, 0, 2, 1, 2}), {0.0, 0.0}), "");
}

TEST(ShapeUnique, OptionalOutputsAndEmptyInput) {
  OpCase c = unique(i64({0}, {}));
  c.num_outputs = 1;
  const std::vector<Tensor> out = run(c);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims(), (Dims{0}));
}

TEST(ShapeUnique, ShapeInference) {
  InferCase c{.op_type = "Unique",
              .opset = 11,
              .inputs = {desc(DType::kF32, {S("n"), K(3)})},
              .num_outputs = 4};
  EXPECT_EQ(inferred(c, 0), "float32[?]");
  EXPECT_EQ(inferred(c, 1), "int64[?]");
  EXPECT_EQ(inferred(c, 3), "int64[?]");
  c.attrs.set("axis", int64_t{1});
  EXPECT_EQ(inferred(c, 0), "float32[n,?]");
  EXPECT_EQ(inferred(c, 2), "int64[3]");
}

TEST(ShapeUnique, Errors) {
  ir::Attributes a;
  a.set("axis", int64_t{2});
  expect_error(unique(i64({2, 2}, {1, 2, 3, 4}), a), StatusCode::kInvalidModel,
               "axis 2 is out of range for rank 2");
}

}  // namespace
}  // namespace kiln::shape_test
