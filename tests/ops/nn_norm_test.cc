// BatchNormalization, InstanceNormalization, LayerNormalization, LRN.
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

OpCase batch_norm(Tensor x, int opset, ir::Attributes a, Dims param_dims = {2}) {
  const int64_t n = dims_numel(param_dims);
  auto p = [&](std::vector<float> v) {
    v.resize(static_cast<size_t>(n), v.back());
    return in(f32(param_dims, v));
  };
  // scale [1,2], B [0,1], mean [1,3], var [4,1]
  return OpCase{.op_type = "BatchNormalization",
                .opset = opset,
                .attrs = std::move(a),
                .inputs = {in(std::move(x)), p({1, 2}), p({0, 1}), p({1, 3}), p({4, 1})}};
}

TEST(NnNorm, BatchNormalization) {
  // c0: (x - 1) / 2; c1: 2 * (x - 3) + 1.
  for (int opset : {6, 7, 9, 14, 15}) {
    auto out =
        run_ok(batch_norm(f32({1, 2, 1, 2}, {1, 2, 3, 4}), opset, attrs({{"epsilon", 0.0f}})));
    expect_f32(out, 0, {1, 2, 1, 2}, {0, 0.5, 1, 3});
  }
  // Rank 2 (BatchNorm1d) and a non-zero epsilon: var 4 + eps 5 -> / 3.
  auto out = run_ok(batch_norm(f32({1, 2}, {4, 3}), 15, attrs({{"epsilon", 5.0f}})));
  expect_f32(out, 0, {1, 2}, {1, 2 * 0 / std::sqrt(6.0f) + 1});
}

TEST(NnNorm, BatchNormalizationSpatial0AtOpset7) {
  // Per-element parameters of shape X.shape[1:] = [1, 2]: mean [1, 3], var [4, 1].
  auto out = run_ok(batch_norm(f32({1, 1, 2}, {3, 4}), 7,
                               attrs({{"epsilon", 0.0f}, {"spatial", int64_t{0}}}), {1, 2}));
  expect_f32(out, 0, {1, 1, 2}, {1, 3});
}

TEST(NnNorm, BatchNormalizationValidation) {
  const Tensor x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  expect_error(batch_norm(x, 15, attrs({{"training_mode", int64_t{1}}})), StatusCode::kUnsupported,
               "training_mode");
  OpCase stats = batch_norm(x, 9, {});
  stats.num_outputs = 3;
  expect_error(stats, StatusCode::kUnsupported, "training mode");
  expect_error(batch_norm(x, 15, {}, {3}), StatusCode::kInvalidModel, "scale");
  OpCase mixed = batch_norm(x, 9, {});
  mixed.inputs[3] = in(cast_tensor(f32({2}, {1, 3}), DType::kF64).value());
  expect_error(mixed, StatusCode::kInvalidModel, "dtype");
  mixed.opset = 15;  // opset 15 lets mean/var have their own float type
  expect_f32(run_ok(mixed), 0, {1, 2, 1, 2}, {0, 0.5 / std::sqrt(1 + 1e-5f), 1, 3}, 1e-4);
}

TEST(NnNorm, InstanceNormalization) {
  // mean 2, var 1: scale 2, bias 1 -> [-1, 3].
  OpCase c{.op_type = "InstanceNormalization",
           .attrs = attrs({{"epsilon", 0.0f}}),
           .inputs = {in(f32({1, 1, 2}, {1, 3})), in(f32({1}, {2})), in(f32({1}, {1}))}};
  expect_f32(run_ok(c), 0, {1, 1, 2}, {-1, 3});
  c.inputs[1] = in(f32({2}, {2, 2}));
  expect_error(c, StatusCode::kInvalidModel, "scale");
}

OpCase layer_norm(Tensor x, Tensor scale, std::optional<Tensor> bias, ir::Attributes a) {
  OpCase c{.op_type = "LayerNormalization",
           .attrs = std::move(a),
           .inputs = {in(std::move(x)), in(std::move(scale))},
           .num_outputs = 3};
  if (bias) c.inputs.push_back(in(*bias));
  return c;
}

TEST(NnNorm, LayerNormalizationLastAxis) {
  // Rows [1,3] (mean 2, std 1) and [2,6] (mean 4, std 2) both normalise to [-1, 1].
  auto out = run_ok(layer_norm(f32({2, 2}, {1, 3, 2, 6}), f32({2}, {1, 2}), f32({2}, {0, 1}),
                               attrs({{"epsilon", 0.0f}})));
  expect_f32(out, 0, {2, 2}, {-1, 3, -1, 3});
  expect_f32(out, 1, {2, 1}, {2, 4});
  expect_f32(out, 2, {2, 1}, {1, 0.5});
}

TEST(NnNorm, LayerNormalizationAxis0AndBroadcastScale) {
  auto out = run_ok(layer_norm(f32({2, 2}, {1, 3, 1, 3}), f32({1}, {3}), std::nullopt,
                               attrs({{"epsilon", 0.0f}, {"axis", int64_t{0}}})));
  expect_f32(out, 0, {2, 2}, {-3, 3, -3, 3});
  expect_f32(out, 1, {1, 1}, {2});
}

TEST(NnNorm, LayerNormalizationShapesAndValidation) {
  auto r = infer("LayerNormalization", 17, attrs({{"axis", int64_t{-1}}}),
                 {sym(DType::kF16, {"batch", "seq", 768}), sym(DType::kF16, {768})}, {}, 3);
  EXPECT_EQ(desc_text(r, 0), "float16[batch,seq,768]");
  EXPECT_EQ(desc_text(r, 1), "float32[batch,seq,1]");
  const Tensor x = f32({2, 2}, {1, 2, 3, 4});
  expect_error(layer_norm(x, f32({2}, {1, 1}), std::nullopt, attrs({{"axis", int64_t{2}}})),
               StatusCode::kInvalidModel, "axis");
  expect_error(layer_norm(x, f32({3}, {1, 1, 1}), std::nullopt, {}), StatusCode::kInvalidModel,
               "Scale");
  expect_error(layer_norm(x, f32({2}, {1, 1}), std::nullopt, attrs({{"stash_type", int64_t{11}}})),
               StatusCode::kUnsupported, "stash_type");
}

TEST(NnNorm, Lrn) {
  // size 2: channel 0 sums channels 0..1, channel 1 sums channel 1 only.
  OpCase c{.op_type = "LRN",
           .attrs = attrs({{"size", int64_t{2}}, {"alpha", 1.0f}, {"beta", 1.0f}, {"bias", 1.0f}}),
           .inputs = {in(f32({1, 2, 1}, {1, 2}))}};
  expect_f32(run_ok(c), 0, {1, 2, 1}, {1 / 3.5f, 2 / 3.0f});
  c.attrs = attrs({{"size", int64_t{0}}});
  expect_error(c, StatusCode::kInvalidModel, "size");
  c.attrs = {};
  expect_error(c, StatusCode::kInvalidModel, "size");
}

}  // namespace
}  // namespace kiln::nn_test
