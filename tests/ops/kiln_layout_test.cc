// kiln.ToNchw16c, kiln.FromNchw16c and kiln.ConvNchw16c: the blocked layout's element order by
// hand, the padding lanes, a round trip, a blocked convolution against Conv (with a channel scale
// on X too), and a negative test for each validation.
#include "ops/kiln_layout.h"

#include "kernels/tactic_test_util.h"
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

OpCase layout_op(std::string op, std::vector<OpInput> inputs, ir::Attributes a = {}) {
  return OpCase{.op_type = std::move(op),
                .opset = 1,
                .attrs = std::move(a),
                .inputs = std::move(inputs),
                .domain = "kiln"};
}

// x[c, p] = 100 c + p for c < 18 channels of 2 pixels: 2 blocks, the second with 2 channels.
Tensor ramp(int64_t c, int64_t p) {
  std::vector<float> v;
  for (int64_t i = 0; i < c; ++i) {
    for (int64_t j = 0; j < p; ++j) v.push_back(static_cast<float>(100 * i + j));
  }
  return f32({1, c, 1, p}, v);
}

TEST(KilnLayout, ToNchw16cPutsAPixelsSixteenChannelsTogetherAndZeroesThePadding) {
  const auto out = run_ok(layout_op("ToNchw16c", {in(ramp(18, 2))}));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dims(), (Dims{1, 32, 1, 2}));
  const float* y = out[0].data<float>();
  EXPECT_EQ(y[0], 0.0f);    // block 0, pixel 0, channel 0
  EXPECT_EQ(y[1], 100.0f);  // channel 1
  EXPECT_EQ(y[16], 1.0f);   // pixel 1, channel 0
  EXPECT_EQ(y[16 + 15], 1501.0f);
  EXPECT_EQ(y[32], 1600.0f);  // block 1, pixel 0, channel 16
  EXPECT_EQ(y[32 + 1], 1700.0f);
  EXPECT_EQ(y[32 + 16 + 1], 1701.0f);
  for (int l = 2; l < 16; ++l) {
    EXPECT_EQ(y[32 + l], 0.0f) << l;
    EXPECT_EQ(y[48 + l], 0.0f) << l;
  }
}

TEST(KilnLayout, FromNchw16cInvertsTheReorder) {
  const Tensor x = ramp(18, 2);
  const auto blocked = run_ok(layout_op("ToNchw16c", {in(x)}));
  const auto back = run_ok(layout_op("FromNchw16c", {in(blocked[0])}, attrs({{"channels", 18}})));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(testing::compare_tensors(back[0], x, {0, 0}), "");
}

TEST(KilnLayout, ConvNchw16cIsConvBetweenReorders) {
  const Tensor x = testing::random_f32({2, 5, 4, 3}, 1);
  const Tensor w = testing::random_f32({3, 5, 1, 1}, 2);
  const Tensor b = f32({3}, {0.5f, -1.0f, 0.25f});
  const auto plain = run_ok(OpCase{.op_type = "Conv", .inputs = {in(x), constant(w), constant(b)}});
  const auto xb = run_ok(layout_op("ToNchw16c", {in(x)}));
  const auto yb = run_ok(layout_op("ConvNchw16c", {in(xb[0]), constant(w), constant(b)},
                                   attrs({{"activation", std::string("Relu")}})));
  ASSERT_EQ(yb[0].dims(), (Dims{2, 16, 4, 3}));
  const auto y = run_ok(layout_op("FromNchw16c", {in(yb[0])}, attrs({{"channels", 3}})));
  Tensor relu = plain[0];
  for (int64_t i = 0; i < relu.numel(); ++i) {
    relu.data<float>()[i] = std::max(relu.data<float>()[i], 0.0f);
  }
  EXPECT_EQ(testing::compare_tensors(y[0], relu, {1e-6, 1e-6}), "");
}

TEST(KilnLayout, ConvNchw16cWithAnNchwInputBlocksOnlyItsOutput) {
  const Tensor x = testing::random_f32({1, 3, 6, 5}, 3);
  const Tensor w = testing::random_f32({20, 3, 3, 3}, 4);
  ir::Attributes a = attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
  const auto plain = run_ok(OpCase{.op_type = "Conv", .attrs = a, .inputs = {in(x), constant(w)}});
  a.set("x_layout", std::string("nchw"));
  const auto yb = run_ok(layout_op("ConvNchw16c", {in(x), constant(w)}, a));
  ASSERT_EQ(yb[0].dims(), (Dims{1, 32, 3, 3}));
  const auto y = run_ok(layout_op("FromNchw16c", {in(yb[0])}, attrs({{"channels", 20}})));
  EXPECT_EQ(testing::compare_tensors(y[0], plain[0], {1e-6, 1e-6}), "");
}

TEST(KilnLayout, ConvNchw16cWithAChannelScaleConvolvesTheScaledInput) {
  const Tensor x = testing::random_f32({2, 18, 3, 4}, 5);
  const Tensor s = testing::random_f32({2, 18, 1, 1}, 6);
  const Tensor w = testing::random_f32({5, 18, 1, 1}, 7);
  const auto scaled = run_ok(OpCase{.op_type = "Mul", .inputs = {in(x), in(s)}});
  const auto plain = run_ok(OpCase{.op_type = "Conv", .inputs = {in(scaled[0]), constant(w)}});
  const auto xb = run_ok(layout_op("ToNchw16c", {in(x)}));
  const auto sb = run_ok(layout_op("ToNchw16c", {in(s)}));
  const auto yb =
      run_ok(layout_op("ConvNchw16c", {in(xb[0]), constant(w), absent(), absent(), in(sb[0])}));
  const auto y = run_ok(layout_op("FromNchw16c", {in(yb[0])}, attrs({{"channels", 5}})));
  EXPECT_EQ(testing::compare_tensors(y[0], plain[0], {1e-5, 1e-5}), "");
}

TEST(KilnLayout, ErrorsNameTheProblem) {
  expect_error(layout_op("ToNchw16c", {in(f32({1, 4}, {1, 2, 3, 4}))}), StatusCode::kUnsupported,
               "is not 4-D");
  const Tensor blocked(DType::kF32, {1, 16, 2, 2});
  expect_error(layout_op("FromNchw16c", {in(blocked)}), StatusCode::kInvalidModel,
               "attribute channels must be positive");
  expect_error(layout_op("FromNchw16c", {in(blocked)}, attrs({{"channels", 20}})),
               StatusCode::kInvalidModel, "must have 32 channels (20 rounded up to 16)");
  expect_error(
      layout_op("ConvNchw16c", {in(blocked), constant(Tensor(DType::kF32, {4, 17, 1, 1}))}),
      StatusCode::kInvalidModel, "must have 32 channels (17 rounded up to 16)");
  expect_error(layout_op("ConvNchw16c", {in(blocked), constant(Tensor(DType::kF32, {4, 16, 1, 1}))},
                         attrs({{"x_layout", std::string("nhwc")}})),
               StatusCode::kInvalidModel, "x_layout must be \"nchw16c\" or \"nchw\", got \"nhwc\"");
  const OpInput w16 = constant(Tensor(DType::kF32, {4, 16, 1, 1}));
  expect_error(layout_op("ConvNchw16c", {in(blocked), w16, absent(), absent(),
                                         in(Tensor(DType::kF32, {1, 16, 2, 1}))}),
               StatusCode::kInvalidModel, "must be [1 or N, C, 1, 1]");
  expect_error(
      layout_op("ConvNchw16c",
                {in(Tensor(DType::kF32, {1, 3, 2, 2})), constant(Tensor(DType::kF32, {4, 3, 1, 1})),
                 absent(), absent(), in(Tensor(DType::kF32, {1, 16, 1, 1}))},
                attrs({{"x_layout", std::string("nchw")}})),
      StatusCode::kInvalidModel, "needs a blocked X");
}

}  // namespace
}  // namespace kiln::nn_test
