// Gather, GatherElements, GatherND, ScatterND, ScatterElements, NonZero, Compress, and the creation
// ops Constant, ConstantOfShape, Range, EyeLike, OneHot.
#include <cmath>
#include <limits>

#include "ops/shape_test_util.h"

namespace kiln::shape_test {
namespace {

const Tensor k2x3 = f32({2, 3}, {1, 2, 3, 4, 5, 6});

template <typename V>
ir::Attributes attr(const char* name, V v) {
  ir::Attributes a;
  a.set(name, std::move(v));
  return a;
}

// --- Gather family ---

TEST(ShapeGather, AxesAndNegativeIndices) {
  expect_output({"Gather", 13, {}, {in(k2x3), in(i64({2}, {1, -2}))}},
                f32({2, 3}, {4, 5, 6, 1, 2, 3}));
  expect_output({"Gather", 13, attr("axis", int64_t{-1}), {in(k2x3), in(i32({2, 1}, {2, 0}))}},
                f32({2, 2, 1}, {3, 1, 6, 4}));
  expect_output(
      {"Gather", 13, attr("axis", int64_t{1}), {in(k2x3), in(Tensor::scalar<int64_t>(1))}},
      f32({2}, {2, 5}));
}

TEST(ShapeGather, IndexOutOfRangeIsAnError) {
  expect_error({"Gather", 13, {}, {in(k2x3), in(i64({1}, {2}))}}, StatusCode::kInvalidModel,
               "index 2 is out of range for axis 0");
  expect_error({"Gather", 13, {}, {in(k2x3), in(i64({1}, {-3}))}}, StatusCode::kInvalidModel,
               "of size 2");
  // A constant index is rejected already at inference.
  expect_error({"Gather", 13, attr("axis", int64_t{1}), {in(k2x3), cin(i64({1}, {3}))}},
               StatusCode::kInvalidModel, "index 3");
  expect_error({"Gather", 13, attr("axis", int64_t{2}), {in(k2x3), in(i64({1}, {0}))}},
               StatusCode::kInvalidModel, "axis 2 is out of range");
  EXPECT_EQ(inferred({"Gather",
                      13,
                      attr("axis", int64_t{1}),
                      {desc(DType::kF32, {S("b"), K(5), K(7)}), desc(DType::kI64, {S("n")})}}),
            "float32[b,n,7]");
}

TEST(ShapeGatherElements, Axes) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  expect_output(
      {"GatherElements", 13, attr("axis", int64_t{1}), {in(x), in(i64({2, 2}, {0, 0, 1, 0}))}},
      f32({2, 2}, {1, 1, 4, 3}));
  expect_output({"GatherElements", 13, {}, {in(x), in(i64({1, 2}, {1, -2}))}}, f32({1, 2}, {3, 2}));
  expect_error({"GatherElements", 13, {}, {in(x), in(i64({1, 2}, {2, 0}))}},
               StatusCode::kInvalidModel, "index 2");
  expect_error({"GatherElements", 13, {}, {in(x), in(i64({2}, {0, 0}))}}, StatusCode::kInvalidModel,
               "same rank");
  expect_error({"GatherElements", 13, {}, {in(x), in(i64({1, 3}, {0, 0, 0}))}},
               StatusCode::kInvalidModel, "exceed");
}

TEST(ShapeGatherND, BatchDims) {
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  expect_output({"GatherND", 13, {}, {in(x), in(i64({2, 2}, {0, 0, 1, 1}))}}, f32({2}, {1, 4}));
  expect_output({"GatherND", 13, {}, {in(x), in(i64({2, 1}, {1, 0}))}}, f32({2, 2}, {3, 4, 1, 2}));
  // batch_dims 1: row b picks element indices[b].
  expect_output({"GatherND", 13, attr("batch_dims", int64_t{1}), {in(x), in(i64({2, 1}, {1, -2}))}},
                f32({2}, {2, 3}));
  expect_error({"GatherND", 13, {}, {in(x), in(i64({1, 2}, {0, 2}))}}, StatusCode::kInvalidModel,
               "index 2 is out of range for axis 1");
  expect_error({"GatherND", 13, {}, {in(x), in(i64({1, 3}, {0, 0, 0}))}}, StatusCode::kInvalidModel,
               "last dim of indices");
}

TEST(ShapeScatter, NDWithReductions) {
  const Tensor x = f32({4}, {1, 2, 3, 4});
  const Tensor idx = i64({2, 1}, {1, 1});
  const Tensor upd = f32({2}, {10, 20});
  expect_output({"ScatterND", 13, {}, {in(x), in(i64({2, 1}, {0, -1})), in(upd)}},
                f32({4}, {10, 2, 3, 20}));
  expect_output({"ScatterND", 16, attr("reduction", std::string("add")), {in(x), in(idx), in(upd)}},
                f32({4}, {1, 32, 3, 4}));
  expect_output({"ScatterND", 16, attr("reduction", std::string("mul")), {in(x), in(idx), in(upd)}},
                f32({4}, {1, 400, 3, 4}));
  expect_output({"ScatterND", 18, attr("reduction", std::string("max")), {in(x), in(idx), in(upd)}},
                f32({4}, {1, 20, 3, 4}));
  expect_error({"ScatterND", 16, attr("reduction", std::string("max")), {in(x), in(idx), in(upd)}},
               StatusCode::kInvalidModel, "opset 18");
  expect_error({"ScatterND", 13, {}, {in(x), in(i64({1, 1}, {4})), in(f32({1}, {0}))}},
               StatusCode::kInvalidModel, "index 4");
  expect_error({"ScatterND", 13, {}, {in(x), in(idx), in(f32({3}, {0, 0, 0}))}},
               StatusCode::kInvalidModel, "updates");
}

TEST(ShapeScatter, ElementsWithAxis) {
  const Tensor x = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  expect_output({"ScatterElements",
                 13,
                 attr("axis", int64_t{1}),
                 {in(x), in(i64({2, 1}, {2, -3})), in(f32({2, 1}, {5, 6}))}},
                f32({2, 3}, {0, 0, 5, 6, 0, 0}));
  ir::Attributes a = attr("reduction", std::string("add"));
  expect_output(
      {"ScatterElements", 16, a, {in(x), in(i64({1, 2}, {1, 1})), in(f32({1, 2}, {1, 2}))}},
      f32({2, 3}, {0, 0, 0, 1, 2, 0}));
  expect_error({"ScatterElements", 13, {}, {in(x), in(i64({1, 1}, {2})), in(f32({1, 1}, {1}))}},
               StatusCode::kInvalidModel, "index 2");
  expect_output({"Scatter", 10, {}, {in(x), in(i64({1, 1}, {1})), in(f32({1, 1}, {7}))}},
                f32({2, 3}, {0, 0, 0, 7, 0, 0}));
}

TEST(ShapeNonZero, CoordinatesAndCompress) {
  expect_output({"NonZero", 13, {}, {in(f32({2, 2}, {1, 0, 0, 3}))}}, i64({2, 2}, {0, 1, 0, 1}));
  expect_output({"NonZero", 13, {}, {in(f32({3}, {0, 0, 0}))}}, i64({1, 0}, {}));
  const Tensor cond = tensor<bool>({2}, {false, true});
  expect_output({"Compress", 11, attr("axis", int64_t{1}), {in(k2x3), in(cond)}},
                f32({2, 1}, {2, 5}));
  expect_output({"Compress", 11, {}, {in(k2x3), in(tensor<bool>({3}, {true, false, true}))}},
                f32({2}, {1, 3}));
  expect_error({"Compress",
                11,
                attr("axis", int64_t{0}),
                {in(k2x3), in(tensor<bool>({3}, {true, false, true}))}},
               StatusCode::kInvalidModel, "longer");
  EXPECT_EQ(inferred({"NonZero", 13, {}, {desc(DType::kF32, {S("b"), K(3)})}}), "int64[2,?]");
}

// --- creation ops ---

TEST(ShapeConstant, ValueAttributes) {
  expect_output({"Constant", 13, attr("value", k2x3), {}}, k2x3);
  expect_output({"Constant", 13, attr("value_float", 2.5f), {}}, Tensor::scalar<float>(2.5f));
  expect_output({"Constant", 13, attr("value_ints", std::vector<int64_t>{1, 2}), {}},
                i64({2}, {1, 2}));
  expect_output({"Constant", 13, attr("value_int", int64_t{7}), {}}, Tensor::scalar<int64_t>(7));
  expect_output({"Constant", 13, attr("value_floats", std::vector<float>{1, 2}), {}},
                f32({2}, {1, 2}));
  expect_error({"Constant", 13, attr("value_string", std::string("x")), {}},
               StatusCode::kUnsupported, "string");
  expect_error({"Constant", 13, {}, {}}, StatusCode::kInvalidModel, "exactly one");
  expect_error({"Constant", 11, attr("value_int", int64_t{7}), {}}, StatusCode::kInvalidModel,
               "opset 12");
}

TEST(ShapeConstantOfShape, ValueAndDefault) {
  expect_output({"ConstantOfShape", 9, {}, {in(i64({2}, {2, 1}))}}, f32({2, 1}, {0, 0}));
  expect_output({"ConstantOfShape", 9, attr("value", i64({1}, {3})), {in(i64({1}, {2}))}},
                i64({2}, {3, 3}));
  expect_output({"ConstantOfShape", 9, {}, {in(i64({0}, {}))}}, Tensor::scalar<float>(0));
  expect_error({"ConstantOfShape", 9, {}, {in(i64({1}, {-2}))}}, StatusCode::kInvalidModel,
               "negative");
  expect_error({"ConstantOfShape", 9, attr("value", f32({2}, {1, 2})), {in(i64({1}, {2}))}},
               StatusCode::kInvalidModel, "exactly one element");
  EXPECT_EQ(inferred({"ConstantOfShape", 9, {}, {desc(DType::kI64, {K(3)})}}), "float32[?,?,?]");
}

TEST(ShapeRange, FloatAndIntCounts) {
  expect_output({"Range",
                 11,
                 {},
                 {in(Tensor::scalar<float>(1)), in(Tensor::scalar<float>(2)),
                  in(Tensor::scalar<float>(0.25f))}},
                f32({4}, {1.0f, 1.25f, 1.5f, 1.75f}));
  expect_output({"Range",
                 11,
                 {},
                 {in(Tensor::scalar<int32_t>(10)), in(Tensor::scalar<int32_t>(4)),
                  in(Tensor::scalar<int32_t>(-3))}},
                tensor<int32_t>({2}, {10, 7}));
  expect_output({"Range",
                 11,
                 {},
                 {in(Tensor::scalar<int64_t>(0)), in(Tensor::scalar<int64_t>(-5)),
                  in(Tensor::scalar<int64_t>(1))}},
                i64({0}, {}));
  expect_error({"Range",
                11,
                {},
                {in(Tensor::scalar<int64_t>(0)), in(Tensor::scalar<int64_t>(5)),
                 in(Tensor::scalar<int64_t>(0))}},
               StatusCode::kInvalidModel, "delta");
  expect_error({"Range",
                11,
                {},
                {in(Tensor::scalar<int64_t>(0)), in(Tensor::scalar<int32_t>(5)),
                 in(Tensor::scalar<int64_t>(1))}},
               StatusCode::kInvalidModel, "input 1");
}

TEST(ShapeEyeLikeOneHot, Values) {
  ir::Attributes a = attr("k", int64_t{1});
  a.set("dtype", int64_t{7});  // int64
  expect_output({"EyeLike", 9, a, {in(f32({2, 3}, {0, 0, 0, 0, 0, 0}))}},
                i64({2, 3}, {0, 1, 0, 0, 0, 1}));
  // A diagonal outside the matrix (even at the int64 extremes) gives all zeros.
  const Tensor zeros = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  for (int64_t k : {int64_t{3}, int64_t{-2}, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    expect_output({"EyeLike", 9, attr("k", k), {in(zeros)}}, zeros);
  }
  expect_output({"EyeLike", 9, attr("k", int64_t{-1}), {in(zeros)}},
                f32({2, 3}, {0, 0, 0, 1, 0, 0}));
  const Tensor values = f32({2}, {0, 5});
  expect_output(
      {"OneHot", 11, {}, {in(i64({3}, {0, -1, 7})), in(Tensor::scalar<int64_t>(3)), in(values)}},
      f32({3, 3}, {5, 0, 0, 0, 0, 5, 0, 0, 0}));
  expect_output({"OneHot",
                 11,
                 attr("axis", int64_t{0}),
                 {in(i64({2}, {1, 0})), in(Tensor::scalar<float>(2)), in(values)}},
                f32({2, 2}, {0, 5, 5, 0}));
  // NaN and out-of-range float indices give all-off rows.
  expect_output(
      {"OneHot", 11, {}, {in(f32({2}, {NAN, 1.5f})), in(Tensor::scalar<int64_t>(2)), in(values)}},
      f32({2, 2}, {0, 0, 0, 5}));
  expect_error({"OneHot", 11, {}, {in(i64({1}, {0})), in(Tensor::scalar<int64_t>(0)), in(values)}},
               StatusCode::kInvalidModel, "depth");
}

}  // namespace
}  // namespace kiln::shape_test
