// kiln.QConv, kiln.QGemm and kiln.ScaleQuantize: hand-computed values (zero points, padding, ties,
// saturation, residuals, activations, batches) and a negative test for each validation.
#include "ops/kiln_quant.h"

#include <cmath>

#include "nn_test_util.h"

namespace kiln::nn_test {
namespace kiln_quant_test {

using testing::f32;

Tensor u8(Dims dims, std::vector<uint8_t> v) {
  return Tensor::from_vector<uint8_t>(std::move(dims), v);
}
Tensor s8(Dims dims, std::vector<int8_t> v) {
  return Tensor::from_vector<int8_t>(std::move(dims), v);
}

void expect_u8(const std::vector<Tensor>& outs, Dims dims, std::vector<uint8_t> values) {
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(testing::compare_tensors(outs[0], u8(std::move(dims), std::move(values)), {0, 0}), "");
}

OpCase kiln_op(std::string op, std::vector<OpInput> inputs, ir::Attributes a) {
  return OpCase{.op_type = std::move(op),
                .opset = 1,
                .attrs = std::move(a),
                .inputs = std::move(inputs),
                .domain = "kiln"};
}

// X - 2 = 0..8 as 3x3, W = [[1, -1], [2, 0]]: acc = [5, 7, 11, 13]; x_scale * W_scale = 0.125.
OpCase qconv(std::vector<OpInput> extra, ir::Attributes a) {
  std::vector<OpInput> inputs = {in(u8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10})),
                                 constant(s8({1, 1, 2, 2}, {1, -1, 2, 0})),
                                 constant(f32({1}, {0.25f}))};
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  if (!a.has("x_scale")) a.set("x_scale", 0.5f);
  if (!a.has("x_zero_point")) a.set("x_zero_point", int64_t{2});
  return kiln_op("QConv", std::move(inputs), std::move(a));
}

TEST(KilnQConv, FloatOutputWithBiasAndRelu) {
  // 0.125 * [5, 7, 11, 13] - 1 = [-0.375, -0.125, 0.375, 0.625] -> Relu.
  auto out =
      run_ok(qconv({constant(f32({1}, {-1}))}, attrs({{"activation", std::string("Relu")}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {0, 0, 0.375f, 0.625f});
}

TEST(KilnQConv, Uint8OutputRoundsHalfToEven) {
  // [0.625, 0.875, 1.375, 1.625] - 0.5 = [0.125, 0.375, 0.875, 1.125]; / 0.25 = [0.5, 1.5, 3.5,
  // 4.5] -> [0, 2, 4, 4] + 10.
  auto out = run_ok(qconv(
      {constant(f32({1}, {-0.5f}))},
      attrs({{"output_type", int64_t{2}}, {"y_scale", 0.25f}, {"y_zero_point", int64_t{10}}})));
  expect_u8(out, {1, 1, 2, 2}, {10, 12, 14, 14});
}

TEST(KilnQConv, Uint8OutputSaturates) {
  auto out = run_ok(qconv(
      {constant(f32({1}, {-100}))},
      attrs({{"output_type", int64_t{2}}, {"y_scale", 0.01f}, {"y_zero_point", int64_t{3}}})));
  expect_u8(out, {1, 1, 2, 2}, {0, 0, 0, 0});
  out = run_ok(qconv(
      {constant(f32({1}, {100}))},
      attrs({{"output_type", int64_t{2}}, {"y_scale", 0.01f}, {"y_zero_point", int64_t{3}}})));
  expect_u8(out, {1, 1, 2, 2}, {255, 255, 255, 255});
}

TEST(KilnQConv, Uint8AndFloatResiduals) {
  // z = ([0, 4, 8, 12] - 4) * 0.5 = [-2, 0, 2, 4], no bias.
  auto out = run_ok(qconv({absent(), in(u8({1, 1, 2, 2}, {0, 4, 8, 12}))},
                          attrs({{"z_scale", 0.5f}, {"z_zero_point", int64_t{4}}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {-1.375f, 0.875f, 3.375f, 5.625f});
  out = run_ok(
      qconv({constant(f32({1}, {1})), in(f32({1, 1, 2, 2}, {1, 2, 3, 4}))},
            attrs({{"activation", std::string("Clip")}, {"activation_params", Floats{0, 4}}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {2.625f, 3.875f, 4, 4});
}

TEST(KilnQConv, PaddingReadsTheZeroPoint) {
  // X - 5 = [[1, 2], [3, 4]], a 2x2 kernel of ones, pads 1: padded positions add nothing.
  auto out = run_ok(kiln_op(
      "QConv",
      {in(u8({1, 1, 2, 2}, {6, 7, 8, 9})), constant(s8({1, 1, 2, 2}, {1, 1, 1, 1})),
       constant(f32({1}, {1}))},
      attrs({{"x_scale", 1.0f}, {"x_zero_point", int64_t{5}}, {"pads", Ints{1, 1, 1, 1}}})));
  expect_f32(out, 0, {1, 1, 3, 3}, {1, 3, 2, 4, 10, 6, 3, 7, 4});
}

TEST(KilnQConv, GroupsBatchesAndOneDimensional) {
  // Two groups of one channel, two images, 1-D: y[n, g, o] = (x[n, g, o] + x[n, g, o + 1]) * w_g.
  auto out =
      run_ok(kiln_op("QConv",
                     {in(u8({2, 2, 3}, {1, 2, 3, 4, 5, 6, 0, 0, 1, 9, 9, 9})),
                      constant(s8({2, 1, 2}, {1, 1, -2, -2})), constant(f32({2}, {1, 0.5f}))},
                     attrs({{"x_scale", 1.0f}, {"group", int64_t{2}}})));
  expect_f32(out, 0, {2, 2, 2}, {3, 5, -9, -11, 0, 1, -18, -18});
}

TEST(KilnQGemm, ScalesBiasAndBatches) {
  // A - 1 = [[0, 1, 2], [3, 4, 5]], B = [[1, 0], [0, 1], [1, 1]]: acc = [[2, 3], [8, 9]];
  // * 0.5 * [1, 2] + [0.5, -1] = [[1.5, 2], [4.5, 8]].
  const Tensor a = u8({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = s8({3, 2}, {1, 0, 0, 1, 1, 1});
  const ir::Attributes at = attrs({{"a_scale", 0.5f}, {"a_zero_point", int64_t{1}}});
  auto out = run_ok(kiln_op(
      "QGemm", {in(a), constant(b), constant(f32({2}, {1, 2})), constant(f32({2}, {0.5f, -1}))},
      at));
  expect_f32(out, 0, {2, 2}, {1.5f, 2, 4.5f, 8});
  out = run_ok(kiln_op("QGemm",
                       {in(a.reshaped({1, 2, 3})), constant(b), constant(f32({2}, {1, 2})),
                        constant(f32({2}, {0.5f, -1}))},
                       at));
  expect_f32(out, 0, {1, 2, 2}, {1.5f, 2, 4.5f, 8});
}

TEST(KilnQGemm, Uint8OutputWithUint8ResidualAndActivation) {
  // acc * 0.5 = [[1, 1.5], [4, 4.5]]; z = ([2, 0, 0, 6] - 2) * 1 = [[0, -2], [-2, 4]];
  // LeakyRelu(0.5) of [[1, -0.5], [2, 8.5]] = [[1, -0.25], [2, 8.5]]; / 0.5 + 8.
  const ir::Attributes at = attrs({{"a_scale", 0.5f},
                                   {"a_zero_point", int64_t{1}},
                                   {"activation", std::string("LeakyRelu")},
                                   {"activation_params", Floats{0.5f}},
                                   {"output_type", int64_t{2}},
                                   {"y_scale", 0.5f},
                                   {"y_zero_point", int64_t{8}},
                                   {"z_scale", 1.0f},
                                   {"z_zero_point", int64_t{2}}});
  auto out =
      run_ok(kiln_op("QGemm",
                     {in(u8({2, 3}, {1, 2, 3, 4, 5, 6})), constant(s8({3, 2}, {1, 0, 0, 1, 1, 1})),
                      constant(f32({2}, {1, 1})), absent(), in(u8({2, 2}, {2, 0, 0, 6}))},
                     at));
  // [[2, -0.5], [4, 17]] + 8 -> -0.5 rounds to -0 (half to even).
  expect_u8(out, {2, 2}, {10, 8, 12, 25});
}

TEST(KilnQConv, ShapeInferenceKeepsSymbols) {
  ir::Node node;
  node.name = "node0";
  node.op_type = "QConv";
  node.domain = "kiln";
  node.opset = 1;
  node.inputs = {0, 1, 2};
  node.outputs = {100};
  node.attrs = attrs({{"x_scale", 1.0f},
                      {"output_type", int64_t{2}},
                      {"y_scale", 1.0f},
                      {"y_zero_point", int64_t{0}}});
  const ir::TensorDesc x = sym(DType::kU8, {"batch", 3, 8, 8});
  const Tensor w = s8({4, 3, 3, 3}, std::vector<int8_t>(108, 1));
  const Tensor ws = f32({4}, {1, 1, 1, 1});
  const ir::TensorDesc wd = ir::TensorDesc::of_dims(DType::kI8, w.dims());
  const ir::TensorDesc wsd = ir::TensorDesc::of_dims(DType::kF32, ws.dims());
  const ops::ResolvedOp op = ops::resolve_op(node);
  ASSERT_NE(op.def, nullptr);
  auto r = ops::infer_node(node, op, {&x, &wd, &wsd}, {nullptr, &w, &ws});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->outputs[0].to_string(), "uint8[batch,4,6,6]");
}

TEST(KilnQConv, Errors) {
  const ir::Attributes none;
  OpCase c = qconv({}, none);
  c.inputs[0] = in(f32({1, 1, 3, 3}, std::vector<float>(9, 1)));
  expect_error(c, StatusCode::kInvalidModel,
               "X float32[1,1,3,3] has dtype float32, expected uint8");
  c = qconv({}, none);
  c.inputs[1].constant = false;
  expect_error(c, StatusCode::kInvalidModel, "W int8[1,1,2,2] must be a constant");
  c = qconv({}, none);
  c.inputs[2] = constant(f32({2}, {1, 1}));
  expect_error(c, StatusCode::kInvalidModel,
               "W_scale float32[2] must be 1-D with one value per output channel (1)");
  c.inputs[2] = constant(f32({1}, {INFINITY}));
  expect_error(c, StatusCode::kInvalidModel, "W_scale float32[1] holds inf at index 0");
  expect_error(qconv({}, attrs({{"x_scale", -0.5f}})), StatusCode::kInvalidModel,
               "attribute x_scale is -0.5; it must be finite and >= 0");
  c = qconv({constant(s8({1}, {1}))}, none);
  expect_error(c, StatusCode::kInvalidModel, "B int8[1] has dtype int8, expected float32");
  c = qconv({}, none);
  c.attrs.erase("x_scale");
  expect_error(c, StatusCode::kInvalidModel, "attribute x_scale is required");
  expect_error(qconv({}, attrs({{"x_zero_point", int64_t{256}}})), StatusCode::kInvalidModel,
               "x_zero_point is 256; a uint8 zero point is in 0..255");
  expect_error(qconv({}, attrs({{"output_type", int64_t{3}}})), StatusCode::kUnsupported,
               "output_type 3 is not supported");
  expect_error(qconv({}, attrs({{"output_type", int64_t{2}}})), StatusCode::kInvalidModel,
               "attribute y_scale is required");
  expect_error(qconv({}, attrs({{"output_type", int64_t{2}}, {"y_scale", 1.0f}})),
               StatusCode::kInvalidModel, "attribute y_zero_point is required");
  expect_error(
      qconv({},
            attrs({{"output_type", int64_t{2}}, {"y_scale", -1.0f}, {"y_zero_point", int64_t{0}}})),
      StatusCode::kInvalidModel, "y_scale is -1; it must be finite and > 0");
  expect_error(qconv({absent(), in(u8({1, 1, 2, 2}, {0, 0, 0, 0}))}, none),
               StatusCode::kInvalidModel, "attribute z_scale is required");
  expect_error(qconv({absent(), in(Tensor(DType::kI32, {1, 1, 2, 2}))}, none),
               StatusCode::kInvalidModel, "residual Z int32[1,1,2,2] has dtype int32");
  expect_error(qconv({absent(), in(f32({1, 1, 1, 2}, {0, 0}))}, none), StatusCode::kInvalidModel,
               "residual Z float32[1,1,1,2] must have exactly the output's shape");
  expect_error(qconv({}, attrs({{"activation", std::string("Swish")}})), StatusCode::kInvalidModel,
               "unknown activation 'Swish'");
  c = qconv({}, none);
  c.inputs[0] = in(u8({1, 1, 1, 1, 1, 3}, {1, 2, 3}));
  expect_error(c, StatusCode::kUnsupported, "1, 2 or 3 spatial dims");
  // Conv's own validation is shared.
  c = qconv({}, none);
  c.inputs[0] = in(u8({1, 2, 3, 3}, std::vector<uint8_t>(18, 1)));
  expect_error(c, StatusCode::kInvalidModel, "channels");
}

TEST(KilnQGemm, Errors) {
  const ir::Attributes at = attrs({{"a_scale", 1.0f}});
  const Tensor b = s8({3, 2}, {1, 0, 0, 1, 1, 1});
  const Tensor scale = f32({2}, {1, 1});
  const Tensor a = u8({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_error(kiln_op("QGemm", {in(u8({3}, {1, 2, 3})), constant(b), constant(scale)}, at),
               StatusCode::kInvalidModel, "A uint8[3] must have rank >= 2");
  expect_error(kiln_op("QGemm", {in(a), constant(b.reshaped({1, 3, 2})), constant(scale)}, at),
               StatusCode::kInvalidModel, "B int8[1,3,2] must be 2-D [K, N]");
  expect_error(kiln_op("QGemm", {in(a), in(b), constant(scale)}, at), StatusCode::kInvalidModel,
               "B int8[3,2] must be a constant");
  expect_error(kiln_op("QGemm", {in(u8({2, 2}, {1, 2, 3, 4})), constant(b), constant(scale)}, at),
               StatusCode::kInvalidModel, "inner dimensions do not match");
  expect_error(kiln_op("QGemm", {in(a), constant(b), constant(f32({3}, {1, 1, 1}))}, at),
               StatusCode::kInvalidModel,
               "B_scale float32[3] must be 1-D with one value per output column (2)");
  expect_error(kiln_op("QGemm", {in(a), constant(b), constant(scale), constant(f32({1}, {1}))}, at),
               StatusCode::kInvalidModel, "C float32[1] must be 1-D");
  expect_error(
      kiln_op("QGemm", {in(a), constant(b), constant(scale), constant(f32({2}, {1, NAN}))}, at),
      StatusCode::kInvalidModel, "values must be finite");
  expect_error(kiln_op("QGemm", {in(a), constant(b), constant(scale)}, {}),
               StatusCode::kInvalidModel, "attribute a_scale is required");
  // 65794 products per output could overflow the int32 accumulator.
  const int64_t deep = ops::kMaxQuantDepth + 1;
  expect_error(kiln_op("QGemm",
                       {in(Tensor(DType::kU8, {1, deep})), constant(Tensor(DType::kI8, {deep, 1})),
                        constant(f32({1}, {1}))},
                       at),
               StatusCode::kInvalidModel, "65794 products per output");
}

// X * S per (image, channel), then QuantizeLinear: 0.5 * 3 = 1.5 and 2.5 * 3 = 7.5 round half to
// even (2, 8), -17 * 3 + 10 and 100 * 3 + 10 saturate at 0 and 255; S [N, C, 1, 1] and
// [1, C, 1, 1].
TEST(KilnScaleQuantize, ScalesPerChannelThenQuantizes) {
  const ir::Attributes a = attrs({{"y_scale", 1.0f}, {"y_zero_point", int64_t{10}}});
  const Tensor x = f32({2, 2, 1, 2}, {0.5f, 2.5f, -17, 100, 1, 2, 3, 4});
  expect_u8(run_ok(kiln_op("ScaleQuantize", {in(x), in(f32({2, 2, 1, 1}, {3, 3, 3, 2}))}, a)),
            {2, 2, 1, 2}, {12, 18, 0, 255, 13, 16, 16, 18});
  expect_u8(run_ok(kiln_op("ScaleQuantize", {in(x), in(f32({1, 2, 1, 1}, {3, 1}))}, a)),
            {2, 2, 1, 2}, {12, 18, 0, 110, 13, 16, 13, 14});
}

TEST(KilnScaleQuantize, Errors) {
  const ir::Attributes a = attrs({{"y_scale", 1.0f}, {"y_zero_point", int64_t{0}}});
  const Tensor x = f32({1, 2, 2, 2}, std::vector<float>(8, 1));
  expect_error(kiln_op("ScaleQuantize", {in(x), in(f32({1, 3, 1, 1}, {1, 1, 1}))}, a),
               StatusCode::kInvalidModel,
               "S float32[1,3,1,1] must scale X float32[1,2,2,2] per (image, channel)");
  expect_error(kiln_op("ScaleQuantize", {in(x), in(f32({1, 2, 2, 1}, {1, 1, 1, 1}))}, a),
               StatusCode::kInvalidModel, "per (image, channel)");
  expect_error(kiln_op("ScaleQuantize", {in(x), in(f32({2}, {1, 1}))}, a),
               StatusCode::kInvalidModel, "per (image, channel)");
  expect_error(
      kiln_op("ScaleQuantize", {in(u8({1, 2, 1, 1}, {1, 2})), in(f32({1, 2, 1, 1}, {1, 1}))}, a),
      StatusCode::kInvalidModel, "X uint8[1,2,1,1] has dtype uint8, expected float32");
  expect_error(kiln_op("ScaleQuantize", {in(x), in(f32({1, 2, 1, 1}, {1, 1}))},
                       attrs({{"y_scale", 0.0f}, {"y_zero_point", int64_t{0}}})),
               StatusCode::kInvalidModel, "attribute y_scale is 0; it must be finite and > 0");
  expect_error(
      kiln_op("ScaleQuantize", {in(x), in(f32({1, 2, 1, 1}, {1, 1}))}, attrs({{"y_scale", 1.0f}})),
      StatusCode::kInvalidModel, "attribute y_zero_point is required");
}

}  // namespace kiln_quant_test
}  // namespace kiln::nn_test
