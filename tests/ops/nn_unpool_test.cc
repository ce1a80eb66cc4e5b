// MaxUnpool and MeanVarianceNormalization: hand-computed values, attributes, output_shape,
// shape inference and validation.
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;
using testing::i64;

OpCase unpool(Tensor x, Tensor indices, ir::Attributes a, std::optional<OpInput> shape = {}) {
  OpCase c{.op_type = "MaxUnpool",
           .opset = 11,
           .attrs = std::move(a),
           .inputs = {in(std::move(x)), in(std::move(indices))}};
  if (shape) c.inputs.push_back(*shape);
  return c;
}

ir::Attributes k2s2() { return attrs({{"kernel_shape", Ints{2}}, {"strides", Ints{2}}}); }

TEST(NnMaxUnpool, ScattersToTheIndices) {
  // Unpooled extent (2 - 1) * 2 + 2 = 4.
  expect_f32(run_ok(unpool(f32({1, 1, 2}, {7, 9}), i64({1, 1, 2}, {1, 2}), k2s2())), 0, {1, 1, 4},
             {0, 7, 9, 0});
}

TEST(NnMaxUnpool, TwoDAndFlatIndicesAcrossChannels) {
  auto out = run_ok(unpool(f32({1, 1, 2, 2}, {1, 2, 3, 4}), i64({1, 1, 2, 2}, {5, 7, 13, 15}),
                           attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}})));
  expect_f32(out, 0, {1, 1, 4, 4}, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  // Indices are flat over N, C and the spatial dims: 3 is channel 1, position 1.
  expect_f32(run_ok(unpool(f32({1, 2, 1}, {5, 6}), i64({1, 2, 1}, {0, 3}), k2s2())), 0, {1, 2, 2},
             {5, 0, 0, 6});
}

TEST(NnMaxUnpool, PadsShrinkTheOutput) {
  // (2 - 1) * 2 + 2 - 1 - 1 = 2.
  auto out = run_ok(
      unpool(f32({1, 1, 2}, {7, 9}), i64({1, 1, 2}, {1, 0}),
             attrs({{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}})));
  expect_f32(out, 0, {1, 1, 2}, {9, 7});
}

TEST(NnMaxUnpool, OutputShapePlacesTheUnpooledTensorAtTheOrigin) {
  // Indices address the 4-wide unpooled tensor {0, 7, 0, 9}, which is padded to 5 at the end.
  for (bool is_constant : {true, false}) {
    const Tensor shape = i64({3}, {1, 1, 5});
    auto out = run_ok(unpool(f32({1, 1, 2}, {7, 9}), i64({1, 1, 2}, {1, 3}), k2s2(),
                             is_constant ? constant(shape) : in(shape)));
    expect_f32(out, 0, {1, 1, 5}, {0, 7, 0, 9, 0});
  }
}

TEST(NnMaxUnpool, ShapeInference) {
  const ir::TensorDesc x = sym(DType::kF32, {"N", 3, 4});
  const ir::TensorDesc idx = sym(DType::kI64, {"N", 3, 4});
  EXPECT_EQ(desc_text(infer("MaxUnpool", 11, k2s2(), {x, idx})), "float32[N,3,8]");
  const ir::TensorDesc shape = sym(DType::kI64, {3});
  EXPECT_EQ(desc_text(infer("MaxUnpool", 9, k2s2(), {x, idx, shape})), "float32[N,3,?]");
}

TEST(NnMaxUnpool, Errors) {
  const Tensor x = f32({1, 1, 2}, {7, 9});
  const Tensor idx = i64({1, 1, 2}, {1, 2});
  expect_error(unpool(x, i64({1, 1, 2}, {1, 4}), k2s2()), StatusCode::kInvalidModel,
               "I[1] = 4 is outside the unpooled tensor");
  expect_error(unpool(x, i64({1, 1, 2}, {-1, 0}), k2s2()), StatusCode::kInvalidModel, "I[0] = -1");
  expect_error(unpool(x, Tensor::from_vector<int32_t>({1, 1, 2}, {1, 2}), k2s2()),
               StatusCode::kInvalidModel, "expected int64");
  expect_error(unpool(x, i64({1, 2}, {1, 2}), k2s2()), StatusCode::kInvalidModel,
               "must have the shape of X");
  expect_error(unpool(x, idx, attrs({{"strides", Ints{2}}})), StatusCode::kInvalidModel,
               "'kernel_shape' is required");
  expect_error(unpool(f32({1, 2}, {7, 9}), i64({1, 2}, {1, 2}), k2s2()), StatusCode::kInvalidModel,
               "rank >= 3");
  expect_error(unpool(x, idx, k2s2(), constant(i64({3}, {1, 1, 3}))), StatusCode::kInvalidModel,
               "smaller than the unpooled extents");
  expect_error(unpool(x, idx, k2s2(), constant(i64({2}, {1, 4}))), StatusCode::kInvalidModel,
               "has 2 values but X");
  expect_error(unpool(x, idx, k2s2(), constant(i64({3}, {2, 1, 4}))), StatusCode::kInvalidModel,
               "batch and channel dims");
  expect_error(unpool(x, idx, attrs({{"kernel_shape", Ints{2}}, {"pads", Ints{2, 2}}})),
               StatusCode::kInvalidModel, "do not fit");
}

OpCase mvn(Tensor x, ir::Attributes a = {}, int opset = 13) {
  return OpCase{.op_type = "MeanVarianceNormalization",
                .opset = opset,
                .attrs = std::move(a),
                .inputs = {in(std::move(x))}};
}

TEST(NnMeanVarianceNormalization, DefaultAxesArePerChannel) {
  // Channel 0 {1, 3}: mean 2, std 1. Channel 1 {2, 6}: mean 4, std 2.
  for (int opset : {9, 13}) {
    expect_f32(run_ok(mvn(f32({1, 2, 1, 2}, {1, 3, 2, 6}), {}, opset)), 0, {1, 2, 1, 2},
               {-1, 1, -1, 1});
  }
}

TEST(NnMeanVarianceNormalization, AxesAndConstantRows) {
  // Row 0 {0, 4}: mean 2, std 2. Row 1 is constant: 0 / (0 + 1e-9) = 0.
  expect_f32(run_ok(mvn(f32({2, 2}, {0, 4, 1, 1}), attrs({{"axes", Ints{-1}}}))), 0, {2, 2},
             {-1, 1, 0, 0});
  // Over both axes: mean 1.5, population std 1.5.
  expect_f32(run_ok(mvn(f32({2, 2}, {0, 4, 1, 1}), attrs({{"axes", Ints{0, 1}}}))), 0, {2, 2},
             {-1, 5.0f / 3, -1.0f / 3, -1.0f / 3});
}

TEST(NnMeanVarianceNormalization, Float16AndFloat64) {
  const Tensor x = f32({1, 2, 1, 2}, {1, 3, 2, 6});
  auto h = cast_tensor(x, DType::kF16);
  auto d = cast_tensor(x, DType::kF64);
  ASSERT_TRUE(h.is_ok() && d.is_ok());
  auto out_h = run_ok(mvn(*h));
  auto out_d = run_ok(mvn(*d));
  ASSERT_EQ(out_h.size(), 1u);
  ASSERT_EQ(out_d.size(), 1u);
  EXPECT_EQ(out_h[0].dtype(), DType::kF16);
  EXPECT_EQ(out_d[0].dtype(), DType::kF64);
  // 2 / (2 + 1e-9): the epsilon is added to the standard deviation.
  EXPECT_NEAR(out_d[0].value_as_double(3), 1.0 - 5e-10, 1e-15);
  EXPECT_DOUBLE_EQ(out_h[0].value_as_double(0), -1.0);
}

TEST(NnMeanVarianceNormalization, Errors) {
  expect_error(mvn(f32({2, 2}, {0, 4, 1, 1})), StatusCode::kInvalidModel,
               "is out of range for rank 2");
  expect_error(mvn(f32({2, 2}, {0, 4, 1, 1}), attrs({{"axes", Ints{1, -1}}})),
               StatusCode::kInvalidModel, "axes");
  expect_error(mvn(f32({2, 2}, {0, 4, 1, 1}), attrs({{"axes", Ints{}}})), StatusCode::kInvalidModel,
               "must not be empty");
  expect_error(mvn(i64({2}, {1, 2}), attrs({{"axes", Ints{0}}})), StatusCode::kUnsupported,
               "dtype int64");
}

}  // namespace
}  // namespace kiln::nn_test
