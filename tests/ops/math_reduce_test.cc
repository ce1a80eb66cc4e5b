// Reduce* and ArgMax/ArgMin: axes as attribute vs input, keepdims, noop_with_empty_axes, empty
// reductions, symbolic inference and validation.
#include <cmath>
#include <limits>

#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace {

// [[1,2,3],[4,5,6]]
Tensor x23() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }

ir::Attributes attrs_with(std::vector<int64_t> axes, int64_t keepdims) {
  ir::Attributes a;
  a.set("axes", std::move(axes));
  a.set("keepdims", keepdims);
  return a;
}
ir::Attributes keepdims(int64_t k) {
  ir::Attributes a;
  a.set("keepdims", k);
  return a;
}

TEST(MathReduce, SumAxesInputFromOpset13) {
  for (bool constant : {false, true}) {
    expect_output(
        {.op_type = "ReduceSum", .opset = 13, .inputs = {in(x23()), in(i64({1}, {1}), constant)}},
        f32({2, 1}, {6, 15}));
  }
  expect_output({.op_type = "ReduceSum",
                 .opset = 13,
                 .attrs = keepdims(0),
                 .inputs = {in(x23()), in(i64({1}, {-2}))}},
                f32({3}, {5, 7, 9}));
}

TEST(MathReduce, SumAxesAttributeBeforeOpset13) {
  expect_output(
      {.op_type = "ReduceSum", .opset = 11, .attrs = attrs_with({0}, 0), .inputs = {in(x23())}},
      f32({3}, {5, 7, 9}));
}

TEST(MathReduce, EmptyAxesMeanAllOrNoop) {
  expect_output({.op_type = "ReduceSum", .opset = 13, .inputs = {in(x23())}}, f32({1, 1}, {21}));
  expect_output({.op_type = "ReduceSum", .opset = 13, .inputs = {in(x23()), in(i64({0}, {}))}},
                f32({1, 1}, {21}));
  ir::Attributes noop;
  noop.set("noop_with_empty_axes", int64_t{1});
  expect_output({.op_type = "ReduceSum", .opset = 13, .attrs = noop, .inputs = {in(x23())}}, x23());
  expect_output({.op_type = "ReduceMean",
                 .opset = 18,
                 .attrs = noop,
                 .inputs = {in(x23()), in(i64({0}, {}))}},
                x23());
}

TEST(MathReduce, MeanAxesMovedToInputAtOpset18) {
  expect_output(
      {.op_type = "ReduceMean", .opset = 17, .attrs = attrs_with({-1}, 0), .inputs = {in(x23())}},
      f32({2}, {2, 5}));
  expect_output({.op_type = "ReduceMean",
                 .opset = 18,
                 .attrs = keepdims(0),
                 .inputs = {in(x23()), in(i64({1}, {-1}))}},
                f32({2}, {2, 5}));
}

TEST(MathReduce, EveryKind) {
  const Tensor x = f32({2, 3}, {1, -2, 3, -4, 5, -6});
  const auto run = [&](const char* op, std::vector<float> want) {
    SCOPED_TRACE(op);
    expect_output({.op_type = op, .opset = 11, .attrs = attrs_with({1}, 0), .inputs = {in(x)}},
                  f32({2}, std::move(want)));
  };
  run("ReduceSum", {2, -5});
  run("ReduceMean", {2.0f / 3, -5.0f / 3});
  run("ReduceMax", {3, 5});
  run("ReduceMin", {-2, -6});
  run("ReduceProd", {-6, 120});
  run("ReduceL1", {6, 15});
  run("ReduceL2", {std::sqrt(14.0f), std::sqrt(77.0f)});
  run("ReduceSumSquare", {14, 77});
  expect_output({.op_type = "ReduceLogSum", .attrs = attrs_with({1}, 0), .inputs = {in(x23())}},
                f32({2}, {std::log(6.0f), std::log(15.0f)}));
  // log(e^0 + e^ln3) = ln 4; log(2 e^1000) = 1000 + ln 2 without overflow.
  expect_output({.op_type = "ReduceLogSumExp",
                 .attrs = keepdims(0),
                 .inputs = {in(f32({2}, {0, std::log(3.0f)}))}},
                f32({}, {std::log(4.0f)}));
  expect_output(
      {.op_type = "ReduceLogSumExp", .attrs = keepdims(0), .inputs = {in(f32({2}, {1000, 1000}))}},
      f32({}, {1000 + std::log(2.0f)}));
}

TEST(MathReduce, EmptyReductionGivesIdentity) {
  const Tensor x = f32({2, 0}, {});
  const float inf = std::numeric_limits<float>::infinity();
  const auto run = [&](const char* op, float want) {
    SCOPED_TRACE(op);
    expect_output({.op_type = op, .opset = 11, .attrs = attrs_with({1}, 1), .inputs = {in(x)}},
                  f32({2, 1}, {want, want}));
  };
  run("ReduceSum", 0);
  run("ReduceProd", 1);
  run("ReduceMax", -inf);
  run("ReduceMin", inf);
  run("ReduceL2", 0);
  run("ReduceLogSumExp", -inf);
  // Reducing the non-empty axis leaves an empty output.
  expect_output(
      {.op_type = "ReduceSum", .opset = 11, .attrs = attrs_with({0}, 0), .inputs = {in(x)}},
      f32({0}, {}));
}

TEST(MathReduce, IntegerTypes) {
  expect_output({.op_type = "ReduceSum",
                 .opset = 13,
                 .inputs = {in(i64({2, 2}, {int64_t{1} << 40, 1, 2, 3})), in(i64({1}, {0}))}},
                i64({1, 2}, {(int64_t{1} << 40) + 2, 4}));
  expect_output({.op_type = "ReduceMax",
                 .attrs = keepdims(0),
                 .inputs = {in(tensor<int32_t>({3}, {-5, 7, 2}))}},
                tensor<int32_t>({}, {7}));
}

TEST(MathReduce, Validation) {
  expect_error({.op_type = "ReduceSum", .opset = 13, .inputs = {in(x23()), in(i64({1}, {2}))}},
               StatusCode::kInvalidModel, "axes entry 2 is out of range for rank 2");
  expect_error({.op_type = "ReduceMean", .attrs = attrs_with({1, -1}, 1), .inputs = {in(x23())}},
               StatusCode::kInvalidModel, "appears twice");
  expect_error({.op_type = "ReduceMean", .opset = 17, .inputs = {in(x23()), in(i64({1}, {0}))}},
               StatusCode::kInvalidModel, "axes is an attribute before opset 18");
  expect_error(
      {.op_type = "ReduceMean", .opset = 18, .attrs = attrs_with({0}, 1), .inputs = {in(x23())}},
      StatusCode::kInvalidModel, "axes is an input from opset 18");
  expect_error(
      {.op_type = "ReduceSum", .opset = 13, .inputs = {in(x23()), in(tensor<int32_t>({1}, {0}))}},
      StatusCode::kInvalidModel, "axes must be int64");
}

TEST(MathReduce, SymbolicInference) {
  const ir::TensorDesc x = ir::TensorDesc::of(DType::kF32, {sym("batch"), sym("seq"), num(768)});
  auto known = infer_one("ReduceMean", 18, {}, {x, ir::TensorDesc::of(DType::kI64, {num(1)})},
                         {std::nullopt, i64({1}, {-1})});
  ASSERT_TRUE(known.is_ok()) << known.status().to_string();
  EXPECT_EQ((*known)[0].to_string(), "float32[batch,seq,1]");
  // Unknown axes: keepdims keeps the rank, without it even the rank is unknown.
  auto unknown = infer_one("ReduceMean", 18, {}, {x, ir::TensorDesc::of(DType::kI64, {num(1)})});
  ASSERT_TRUE(unknown.is_ok()) << unknown.status().to_string();
  EXPECT_EQ((*unknown)[0].to_string(), "float32[?,?,?]");
  auto no_rank =
      infer_one("ReduceMean", 18, keepdims(0), {x, ir::TensorDesc::of(DType::kI64, {num(1)})});
  ASSERT_TRUE(no_rank.is_ok()) << no_rank.status().to_string();
  EXPECT_FALSE((*no_rank)[0].has_rank());
}

ir::Attributes arg_attrs(int64_t axis, int64_t keep, int64_t last) {
  ir::Attributes a;
  a.set("axis", axis);
  a.set("keepdims", keep);
  a.set("select_last_index", last);
  return a;
}

TEST(MathArgMax, TiesKeepDimsAndSelectLast) {
  const Tensor x = f32({2, 3}, {1, 3, 3, 5, 2, 5});
  expect_output({.op_type = "ArgMax", .attrs = arg_attrs(1, 1, 0), .inputs = {in(x)}},
                i64({2, 1}, {1, 0}));
  expect_output({.op_type = "ArgMax", .attrs = arg_attrs(-1, 0, 1), .inputs = {in(x)}},
                i64({2}, {2, 2}));
  expect_output({.op_type = "ArgMin", .attrs = arg_attrs(0, 0, 0), .inputs = {in(x)}},
                i64({3}, {0, 1, 0}));
  expect_output({.op_type = "ArgMin", .inputs = {in(x)}}, i64({1, 3}, {0, 1, 0}));
}

TEST(MathArgMax, Validation) {
  expect_error({.op_type = "ArgMax", .attrs = arg_attrs(2, 1, 0), .inputs = {in(x23())}},
               StatusCode::kInvalidModel, "axis 2 is out of range");
  expect_error({.op_type = "ArgMax", .attrs = arg_attrs(1, 1, 0), .inputs = {in(f32({2, 0}, {}))}},
               StatusCode::kInvalidModel, "size 0");
}

}  // namespace
}  // namespace kiln::testing::math
