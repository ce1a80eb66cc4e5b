// ConvInteger and QLinearConv: hand-computed integer results, zero points (per-tensor and
// per-channel), requantization (round half to even, saturation), shape inference, validation.
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

template <typename T>
Tensor t(Dims dims, std::vector<T> v) {
  return Tensor::from_vector<T>(std::move(dims), v);
}
Tensor u8(Dims d, std::vector<uint8_t> v) { return t<uint8_t>(std::move(d), std::move(v)); }
Tensor s8(Dims d, std::vector<int8_t> v) { return t<int8_t>(std::move(d), std::move(v)); }
Tensor s32(Dims d, std::vector<int32_t> v) { return t<int32_t>(std::move(d), std::move(v)); }
Tensor scalar_f(float v) { return Tensor::scalar<float>(v); }

void expect_exact(const std::vector<Tensor>& outs, const Tensor& expected) {
  ASSERT_FALSE(outs.empty());
  EXPECT_EQ(testing::compare_tensors(outs[0], expected, {0.0, 0.0}), "");
}

OpCase conv_integer(std::vector<OpInput> inputs, ir::Attributes a = {}) {
  return OpCase{
      .op_type = "ConvInteger", .opset = 10, .attrs = std::move(a), .inputs = std::move(inputs)};
}

// QLinearConv inputs in order; b may be absent.
OpCase qlinear_conv(Tensor x, float xs, Tensor xz, Tensor w, Tensor ws, Tensor wz, float ys,
                    Tensor yz, std::optional<Tensor> b = std::nullopt, ir::Attributes a = {}) {
  OpCase c{.op_type = "QLinearConv", .opset = 10, .attrs = std::move(a), .inputs = {}};
  c.inputs = {in(x), in(scalar_f(xs)), in(xz), in(w), in(ws), in(wz), in(scalar_f(ys)), in(yz)};
  if (b) c.inputs.push_back(in(*b));
  return c;
}

TEST(NnConvInteger, SubtractsTheInputZeroPoint) {
  // x - 1 = 0..8 as 3x3; a 2x2 kernel of ones sums each 2x2 block.
  auto out =
      run_ok(conv_integer({in(u8({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})),
                           in(u8({1, 1, 2, 2}, {1, 1, 1, 1})), in(Tensor::scalar<uint8_t>(1))}));
  expect_exact(out, s32({1, 1, 2, 2}, {8, 12, 20, 24}));
}

TEST(NnConvInteger, PerChannelWeightZeroPointsAndMixedSigns) {
  // x - 10 = {0, 10}. Channel 0: w - 0 = {1, 2} -> 20. Channel 1: w - 1 = {-4, 3} -> 30.
  auto out =
      run_ok(conv_integer({in(u8({1, 1, 1, 2}, {10, 20})), in(s8({2, 1, 1, 2}, {1, 2, -3, 4})),
                           in(u8({}, {10})), in(s8({2}, {0, 1}))}));
  expect_exact(out, s32({1, 2, 1, 1}, {20, 30}));
}

TEST(NnConvInteger, PaddingIsTheZeroPoint) {
  // x - 5 = {0, 1, 2}; padded by one each side with real zeros: {0+0+1, 0+1+2, 1+2+0}.
  auto out = run_ok(
      conv_integer({in(u8({1, 1, 3}, {5, 6, 7})), in(u8({1, 1, 3}, {1, 1, 1})), in(u8({}, {5}))},
                   attrs({{"pads", Ints{1, 1}}})));
  expect_exact(out, s32({1, 1, 3}, {1, 3, 3}));
}

TEST(NnConvInteger, Int8Extremes) {
  // x - (-128) = {0, 255}; w = {127, -128}: 255 * -128.
  auto out = run_ok(conv_integer(
      {in(s8({1, 1, 2}, {-128, 127})), in(s8({1, 1, 2}, {127, -128})), in(s8({}, {-128}))}));
  expect_exact(out, s32({1, 1, 1}, {-32640}));
}

TEST(NnConvInteger, GroupsAndStrides) {
  // Depthwise (group 2), stride 2 over 1-D channels {1,2,3,4} and {5,6,7,8}, kernel 1:
  // channel 0 x {1, 3} * 2, channel 1 x {5, 7} * 3.
  auto out =
      run_ok(conv_integer({in(u8({1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8})), in(u8({2, 1, 1}, {2, 3}))},
                          attrs({{"group", int64_t{2}}, {"strides", Ints{2}}})));
  expect_exact(out, s32({1, 2, 2}, {2, 6, 15, 21}));
}

TEST(NnConvInteger, ShapeInferenceKeepsSymbols) {
  auto r = infer("ConvInteger", 10, {},
                 {sym(DType::kU8, {"N", 3, 8, 8}), sym(DType::kI8, {4, 3, 3, 3})});
  EXPECT_EQ(desc_text(r), "int32[N,4,6,6]");
}

TEST(NnConvInteger, Errors) {
  const Tensor x = u8({1, 1, 2}, {1, 2});
  const Tensor w = u8({2, 1, 1}, {1, 1});
  expect_error(conv_integer({in(f32({1, 1, 2}, {1, 2})), in(w)}), StatusCode::kUnsupported,
               "x and w must be uint8 or int8");
  expect_error(conv_integer({in(x), in(w), in(s8({}, {0}))}), StatusCode::kInvalidModel,
               "x_zero_point has dtype int8");
  expect_error(conv_integer({in(x), in(w), in(u8({2}, {0, 0}))}), StatusCode::kInvalidModel,
               "x_zero_point uint8[2] must be a scalar");
  expect_error(conv_integer({in(x), in(w), absent(), in(u8({3}, {0, 0, 0}))}),
               StatusCode::kInvalidModel, "one value per output channel (2)");
  expect_error(conv_integer({in(x), in(u8({2, 2, 1}, {1, 1, 1, 1}))}), StatusCode::kInvalidModel,
               "channels");
}

TEST(NnQLinearConv, RequantizesTheSum) {
  // Real x = 0.5 * (x - 2) = {0, 1, 2, 3}; 2x2 kernel of ones: 6; / y_scale 2 = 3; + 10.
  auto out = run_ok(qlinear_conv(u8({1, 1, 2, 2}, {2, 4, 6, 8}), 0.5f, u8({}, {2}),
                                 s8({1, 1, 2, 2}, {1, 1, 1, 1}), scalar_f(1.0f), s8({}, {0}), 2.0f,
                                 u8({}, {10})));
  expect_exact(out, u8({1, 1, 1, 1}, {13}));
}

TEST(NnQLinearConv, PerChannelScalesRoundHalfToEven) {
  // Channel 0 scales by 0.5: 2.5 -> 2, 3.5 -> 4. Channel 1 by 1: 5, 7.
  auto out =
      run_ok(qlinear_conv(u8({1, 1, 1, 2}, {5, 7}), 1.0f, u8({}, {0}), u8({2, 1, 1, 1}, {1, 1}),
                          f32({2}, {0.5f, 1.0f}), u8({2}, {0, 0}), 1.0f, u8({}, {0})));
  expect_exact(out, u8({1, 2, 1, 2}, {2, 4, 5, 7}));
}

TEST(NnQLinearConv, BiasAndSaturation) {
  // acc = 100 * 2 = 200; + 100 = 300 saturates to 127, - 500 = -300 to -128.
  auto out =
      run_ok(qlinear_conv(u8({1, 1, 1}, {100}), 1.0f, u8({}, {0}), u8({2, 1, 1}, {2, 2}),
                          scalar_f(1.0f), u8({}, {0}), 1.0f, s8({}, {0}), s32({2}, {100, -500})));
  expect_exact(out, s8({1, 2, 1}, {127, -128}));
}

TEST(NnQLinearConv, Errors) {
  const Tensor x = u8({1, 1, 2}, {1, 2});
  const Tensor w = u8({2, 1, 1}, {1, 1});
  const Tensor z = u8({}, {0});
  auto base = [&]() { return qlinear_conv(x, 1.0f, z, w, scalar_f(1.0f), z, 1.0f, z); };
  OpCase c = base();
  c.inputs[1] = in(Tensor::scalar<int32_t>(1));
  expect_error(c, StatusCode::kInvalidModel, "x_scale has dtype int32");
  c = base();
  c.inputs[4] = in(f32({3}, {1, 1, 1}));
  expect_error(c, StatusCode::kInvalidModel, "w_scale float32[3] must be a scalar or 1-D");
  c = base();
  c.inputs[6] = in(f32({2}, {1, 1}));
  expect_error(c, StatusCode::kInvalidModel, "y_scale float32[2] must be a scalar");
  c = base();
  c.inputs[7] = in(scalar_f(0.0f));
  expect_error(c, StatusCode::kUnsupported, "y must be uint8 or int8");
  c = base();
  c.inputs.push_back(in(f32({2}, {0, 0})));
  expect_error(c, StatusCode::kInvalidModel, "bias B has dtype float32");
  c = base();
  c.inputs.push_back(in(s32({3}, {0, 0, 0})));
  expect_error(c, StatusCode::kInvalidModel, "bias B");
  c = base();
  c.inputs[5] = in(s8({}, {0}));
  expect_error(c, StatusCode::kInvalidModel, "w_zero_point has dtype int8");
}

}  // namespace
}  // namespace kiln::nn_test
