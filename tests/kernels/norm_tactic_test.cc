// softmax.f32, layernorm.f32, reduce.mean.f32 and reduce.sum.f32 against the reference.
#include <gtest/gtest.h>

#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace {

OpCase softmax_case(const Dims& x, int opset, std::optional<int64_t> axis, float scale = 1.0f) {
  OpCase c;
  c.op_type = "Softmax";
  c.opset = opset;
  if (axis) c.attrs = attrs({{"axis", *axis}});
  Tensor t = random_f32(x, 7);
  for (float& v : t.span<float>()) v *= scale;
  c.inputs = {in(t)};
  return c;
}

TEST(SoftmaxTactic, MatchesReferenceOnEveryAxisOpset13) {
  for (const Dims& x : {Dims{7}, Dims{3, 33}, Dims{2, 5, 7}, Dims{2, 3, 4, 17}}) {
    const auto rank = static_cast<int64_t>(x.size());
    for (int64_t axis = -rank; axis < rank; ++axis) {
      expect_matches_reference("softmax.f32", softmax_case(x, 13, axis), kPointTol);
    }
    expect_matches_reference("softmax.f32", softmax_case(x, 13, std::nullopt), kPointTol);
  }
}

TEST(SoftmaxTactic, CoercesToTwoDimensionsBeforeOpset13) {
  for (int opset : {1, 11}) {
    const Dims x{2, 3, 4, 5};
    for (int64_t axis : {0, 1, 2, 3, 4, -1, -4}) {
      expect_matches_reference("softmax.f32", softmax_case(x, opset, axis), kPointTol);
    }
    expect_matches_reference("softmax.f32", softmax_case(x, opset, std::nullopt), kPointTol);
  }
}

TEST(SoftmaxTactic, StaysFiniteForLargeLogits) {
  expect_matches_reference("softmax.f32", softmax_case({4, 50}, 13, -1, 200.0f), kPointTol);
  expect_matches_reference("softmax.f32", softmax_case({4, 50, 3}, 13, 1, 200.0f), kPointTol);
}

OpCase layer_norm_case(const Dims& x, int64_t axis, const Dims& scale, bool bias,
                       int num_outputs = 1) {
  OpCase c;
  c.op_type = "LayerNormalization";
  c.opset = 17;
  c.attrs = attrs({{"axis", axis}, {"epsilon", 1e-3f}});
  c.inputs = {in(random_f32(x, 3)), constant(random_f32(scale, 4))};
  if (bias) c.inputs.push_back(constant(random_f32(scale, 5)));
  c.num_outputs = num_outputs;
  return c;
}

TEST(LayerNormTactic, MatchesReference) {
  expect_matches_reference("layernorm.f32", layer_norm_case({2, 9, 768}, -1, {768}, true),
                           kPointTol);
  expect_matches_reference("layernorm.f32", layer_norm_case({3, 17}, 1, {17}, false), kPointTol);
  expect_matches_reference("layernorm.f32", layer_norm_case({2, 3, 5, 7}, -2, {5, 7}, true),
                           kPointTol);
  expect_matches_reference("layernorm.f32", layer_norm_case({2, 3, 5, 7}, 1, {3, 5, 7}, true),
                           kPointTol);
  expect_matches_reference("layernorm.f32", layer_norm_case({1}, 0, {1}, true), kPointTol);
}

TEST(LayerNormTactic, BroadcastsScaleAndBiasAndWritesStatistics) {
  expect_matches_reference("layernorm.f32", layer_norm_case({2, 3, 5, 7}, -2, {1, 7}, true),
                           kPointTol);
  expect_matches_reference("layernorm.f32", layer_norm_case({2, 3, 5, 7}, 1, {5, 1}, true),
                           kPointTol);
  expect_matches_reference("layernorm.f32", layer_norm_case({4, 6, 10}, -1, {10}, true, 3),
                           kPointTol);
  OpCase runtime_scale = layer_norm_case({3, 5, 8}, 1, {1, 8}, true, 2);
  runtime_scale.inputs[1].constant = false;
  expect_matches_reference("layernorm.f32", runtime_scale, kPointTol);
}

OpCase reduce_case(const char* op, int opset, const Dims& x, std::optional<Ints> axes,
                   int64_t keepdims, bool axes_as_input) {
  OpCase c;
  c.op_type = op;
  c.opset = opset;
  c.attrs = attrs({{"keepdims", keepdims}});
  c.inputs = {in(random_f32(x, 9))};
  if (axes && axes_as_input) {
    c.inputs.push_back(
        constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(axes->size())}, *axes)));
  } else if (axes) {
    c.attrs.set("axes", *axes);
  }
  return c;
}

TEST(ReduceTactic, MeanAndSumOverContiguousAxes) {
  const Dims x{2, 3, 5, 7};
  for (const Ints& axes :
       {Ints{-1}, Ints{3}, Ints{2, 3}, Ints{1, 2}, Ints{0}, Ints{0, 1, 2, 3}, Ints{-3, -2}}) {
    for (int64_t keepdims : {0, 1}) {
      expect_matches_reference("reduce.mean.f32",
                               reduce_case("ReduceMean", 13, x, axes, keepdims, false), kPointTol);
      expect_matches_reference("reduce.mean.f32",
                               reduce_case("ReduceMean", 18, x, axes, keepdims, true), kPointTol);
      expect_matches_reference("reduce.sum.f32",
                               reduce_case("ReduceSum", 13, x, axes, keepdims, true), kPointTol);
      expect_matches_reference("reduce.sum.f32",
                               reduce_case("ReduceSum", 11, x, axes, keepdims, false), kPointTol);
    }
  }
  expect_matches_reference(
      "reduce.mean.f32", reduce_case("ReduceMean", 13, {3, 4, 300}, Ints{-1}, 1, false), kPointTol);
}

TEST(ReduceTactic, EmptyAxesReduceEverythingOrNothing) {
  expect_matches_reference("reduce.mean.f32",
                           reduce_case("ReduceMean", 18, {2, 3, 4}, std::nullopt, 1, true),
                           kPointTol);
  OpCase noop = reduce_case("ReduceSum", 13, {2, 3, 4}, std::nullopt, 1, true);
  noop.attrs.set("noop_with_empty_axes", int64_t{1});
  expect_matches_reference("reduce.sum.f32", noop, kPointTol);
}

TEST(ReduceTactic, RefusesScatteredOrUnknownAxes) {
  expect_rejected("reduce.mean.f32",
                  reduce_case("ReduceMean", 13, {2, 3, 5, 7}, Ints{1, 3}, 1, false), "contiguous");
  OpCase c = reduce_case("ReduceMean", 18, {2, 3}, Ints{1}, 1, true);
  c.inputs[1].constant = false;
  expect_rejected("reduce.mean.f32", c, "axes");
}

}  // namespace
}  // namespace kiln::testing
