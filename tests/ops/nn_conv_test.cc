// Conv and ConvTranspose: hand-computed values, attributes, shape inference, validation.
#include <limits>

#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

OpCase conv(Tensor x, Tensor w, ir::Attributes a = {}, int opset = 17) {
  return OpCase{.op_type = "Conv", .opset = opset, .attrs = std::move(a), .inputs = {in(x), in(w)}};
}

TEST(NnConv, Basic2D) {
  // X = 0..8 as 3x3, 2x2 kernel of ones: each output sums a 2x2 block.
  auto out = run_ok(conv(f32({1, 1, 3, 3}, iota(9)), f32({1, 1, 2, 2}, {1, 1, 1, 1})));
  expect_f32(out, 0, {1, 1, 2, 2}, {8, 12, 20, 24});
}

TEST(NnConv, PadsAndStrides) {
  // Windows start at -1 with stride 2: {x00}, {x01,x02}, {x10,x20}, {x11,x12,x21,x22}.
  auto out = run_ok(conv(f32({1, 1, 3, 3}, iota(9)), f32({1, 1, 2, 2}, {1, 1, 1, 1}),
                         attrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {0, 3, 9, 24});
}

TEST(NnConv, AsymmetricPads) {
  // 1-D, pads begin 0, end 1: [1,2,3] with kernel [1,1] -> [3, 5, 3].
  auto out = run_ok(
      conv(f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 2}, {1, 1}), attrs({{"pads", Ints{0, 1}}})));
  expect_f32(out, 0, {1, 1, 3}, {3, 5, 3});
}

TEST(NnConv, Dilation1D) {
  // Kernel [1, 10] dilated by 2 reads x[i] and x[i+2].
  auto out = run_ok(conv(f32({1, 1, 5}, {1, 2, 3, 4, 5}), f32({1, 1, 2}, {1, 10}),
                         attrs({{"dilations", Ints{2}}})));
  expect_f32(out, 0, {1, 1, 3}, {31, 42, 53});
}

TEST(NnConv, AutoPadSameUpperAndLower) {
  const Tensor x = f32({1, 1, 4}, {1, 2, 3, 4});
  const Tensor w = f32({1, 1, 2}, {1, 1});
  // One unit of padding: at the end for SAME_UPPER, at the beginning for SAME_LOWER.
  expect_f32(run_ok(conv(x, w, attrs({{"auto_pad", std::string("SAME_UPPER")}}))), 0, {1, 1, 4},
             {3, 5, 7, 4});
  expect_f32(run_ok(conv(x, w, attrs({{"auto_pad", std::string("SAME_LOWER")}}))), 0, {1, 1, 4},
             {1, 3, 5, 7});
  expect_f32(run_ok(conv(x, w, attrs({{"auto_pad", std::string("VALID")}}))), 0, {1, 1, 3},
             {3, 5, 7});
}

TEST(NnConv, GroupsDepthwiseAndBias) {
  OpCase c =
      conv(f32({1, 2, 1, 1}, {1, 2}), f32({2, 1, 1, 1}, {3, 4}), attrs({{"group", int64_t{2}}}));
  c.inputs.push_back(in(f32({2}, {10, 20})));
  expect_f32(run_ok(c), 0, {1, 2, 1, 1}, {13, 28});
}

TEST(NnConv, GroupsWithMultiplier) {
  // group 2, 2 input channels, 4 output channels: outputs 0,1 read channel 0; outputs 2,3
  // channel 1.
  auto out = run_ok(
      conv(f32({1, 2, 1}, {1, 2}), f32({4, 1, 1}, {1, 2, 3, 4}), attrs({{"group", int64_t{2}}})));
  expect_f32(out, 0, {1, 4, 1}, {1, 2, 6, 8});
}

TEST(NnConv, SumsOverInputChannelsAndBatches) {
  // c0 = [1,2], c1 = [3,4]; weights [1, 10] over channels; batch 2 repeats with doubled data.
  auto out = run_ok(conv(f32({2, 2, 2}, {1, 2, 3, 4, 2, 4, 6, 8}), f32({1, 2, 1}, {1, 10})));
  expect_f32(out, 0, {2, 1, 2}, {31, 42, 62, 84});
}

TEST(NnConv, ThreeD) {
  auto out =
      run_ok(conv(f32({1, 1, 2, 2, 2}, iota(8)), f32({1, 1, 2, 2, 2}, std::vector<float>(8, 1))));
  expect_f32(out, 0, {1, 1, 1, 1, 1}, {28});
}

TEST(NnConv, Float16AndFloat64) {
  auto x = cast_tensor(f32({1, 1, 3, 3}, iota(9)), DType::kF16).value();
  auto w = cast_tensor(f32({1, 1, 2, 2}, {1, 1, 1, 1}), DType::kF16).value();
  auto out = run_ok(conv(x, w));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kF16);
  expect_f32({cast_tensor(out[0], DType::kF32).value()}, 0, {1, 1, 2, 2}, {8, 12, 20, 24});
  auto xd = cast_tensor(f32({1, 1, 3}, {1, 2, 3}), DType::kF64).value();
  auto wd = cast_tensor(f32({1, 1, 2}, {1, -1}), DType::kF64).value();
  auto outd = run_ok(conv(xd, wd));
  ASSERT_EQ(outd.size(), 1u);
  EXPECT_EQ(outd[0].dtype(), DType::kF64);
  expect_f32({cast_tensor(outd[0], DType::kF32).value()}, 0, {1, 1, 2}, {-1, -1});
}

TEST(NnConv, KernelShapeAttributeMustMatchW) {
  const Tensor x = f32({1, 1, 3, 3}, iota(9));
  const Tensor w = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  expect_f32(run_ok(conv(x, w, attrs({{"kernel_shape", Ints{2, 2}}}))), 0, {1, 1, 2, 2},
             {8, 12, 20, 24});
  expect_error(conv(x, w, attrs({{"kernel_shape", Ints{3, 3}}})), StatusCode::kInvalidModel,
               "kernel_shape");
}

TEST(NnConv, SymbolicBatchIsKept) {
  auto r = infer("Conv", 17, attrs({{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}}),
                 {sym(DType::kF32, {"batch", 3, 224, 224}), sym(DType::kF32, {64, 3, 7, 7})});
  EXPECT_EQ(desc_text(r), "float32[batch,64,112,112]");
  // Unknown spatial dims stay unknown unless SAME with stride 1 keeps them equal.
  auto same = infer("Conv", 17, attrs({{"auto_pad", std::string("SAME_UPPER")}}),
                    {sym(DType::kF32, {"n", 3, "h", "w"}), sym(DType::kF32, {8, 3, 3, 3})});
  EXPECT_EQ(desc_text(same), "float32[n,8,h,w]");
  auto strided = infer("Conv", 17, attrs({{"strides", Ints{2, 2}}}),
                       {sym(DType::kF32, {"n", 3, "h", "w"}), sym(DType::kF32, {8, 3, 3, 3})});
  EXPECT_EQ(desc_text(strided), "float32[n,8,?,?]");
}

TEST(NnConv, Validation) {
  const Tensor x = f32({1, 2, 3, 3}, std::vector<float>(18, 1));
  expect_error(conv(x, f32({1, 2, 2}, {1, 1, 1, 1})), StatusCode::kInvalidModel, "same rank");
  expect_error(conv(x, f32({1, 3, 1, 1}, {1, 1, 1})), StatusCode::kInvalidModel, "channels");
  expect_error(conv(x, f32({3, 1, 1, 1}, {1, 1, 1}), attrs({{"group", int64_t{2}}})),
               StatusCode::kInvalidModel, "not divisible by group 2");
  expect_error(conv(x, f32({1, 2, 1, 1}, {1, 1}), attrs({{"group", int64_t{0}}})),
               StatusCode::kInvalidModel, "group");
  expect_error(conv(x, f32({1, 2, 1, 1}, {1, 1}), attrs({{"strides", Ints{0, 1}}})),
               StatusCode::kInvalidModel, "strides");
  expect_error(conv(x, f32({1, 2, 1, 1}, {1, 1}), attrs({{"dilations", Ints{1, -1}}})),
               StatusCode::kInvalidModel, "dilations");
  expect_error(conv(x, f32({1, 2, 1, 1}, {1, 1}), attrs({{"pads", Ints{1, 1}}})),
               StatusCode::kInvalidModel, "pads");
  expect_error(conv(x, f32({1, 2, 1, 1}, {1, 1}), attrs({{"auto_pad", std::string("SAME")}})),
               StatusCode::kInvalidModel, "auto_pad");
  expect_error(conv(x, f32({1, 2, 4, 4}, std::vector<float>(32, 1))), StatusCode::kInvalidModel,
               "output spatial dims [0,0]");
  OpCase bias = conv(x, f32({1, 2, 1, 1}, {1, 1}));
  bias.inputs.push_back(in(f32({2}, {1, 2})));
  expect_error(bias, StatusCode::kInvalidModel, "bias");
  expect_error(conv(f32({1, 2}, {1, 2}), f32({1, 2}, {1, 1})), StatusCode::kInvalidModel,
               "rank >= 3");
  OpCase ints{.op_type = "Conv",
              .attrs = {},
              .inputs = {in(testing::i64({1, 1, 1}, {1})), in(testing::i64({1, 1, 1}, {1}))}};
  expect_error(ints, StatusCode::kUnsupported, "int64");
}

// --- ConvTranspose
// --------------------------------------------------------------------------------

OpCase convt(Tensor x, Tensor w, ir::Attributes a = {}) {
  return OpCase{.op_type = "ConvTranspose", .attrs = std::move(a), .inputs = {in(x), in(w)}};
}

TEST(NnConvTranspose, ScatterStride1And2) {
  expect_f32(run_ok(convt(f32({1, 1, 3}, {1, 2, 3}), f32({1, 1, 2}, {1, 1}))), 0, {1, 1, 4},
             {1, 3, 5, 3});
  expect_f32(
      run_ok(convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}), attrs({{"strides", Ints{2}}}))),
      0, {1, 1, 4}, {1, 1, 2, 2});
}

TEST(NnConvTranspose, OutputPaddingPadsAndBias) {
  OpCase c = convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}),
                   attrs({{"strides", Ints{2}}, {"output_padding", Ints{1}}}));
  c.inputs.push_back(in(f32({1}, {1})));
  expect_f32(run_ok(c), 0, {1, 1, 5}, {2, 2, 3, 3, 1});
  expect_f32(run_ok(convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}),
                          attrs({{"strides", Ints{2}}, {"pads", Ints{1, 0}}}))),
             0, {1, 1, 3}, {1, 2, 2});
}

TEST(NnConvTranspose, OutputShapeAndAutoPad) {
  const Tensor x = f32({1, 1, 2}, {1, 2});
  // Full result [1,1,2,2]; output_shape 5 appends one output that only the bias reaches.
  expect_f32(run_ok(convt(x, f32({1, 1, 2}, {1, 1}),
                          attrs({{"strides", Ints{2}}, {"output_shape", Ints{5}}}))),
             0, {1, 1, 5}, {1, 1, 2, 2, 0});
  // Kernel 3, stride 2: full [1,1,3,2,2] cropped to in*stride = 4, extra pad at the end (UPPER)
  // or at the beginning (LOWER).
  const Tensor w = f32({1, 1, 3}, {1, 1, 1});
  expect_f32(
      run_ok(convt(x, w, attrs({{"strides", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}}))),
      0, {1, 1, 4}, {1, 1, 3, 2});
  expect_f32(
      run_ok(convt(x, w, attrs({{"strides", Ints{2}}, {"auto_pad", std::string("SAME_LOWER")}}))),
      0, {1, 1, 4}, {1, 3, 2, 2});
}

TEST(NnConvTranspose, ChannelsAndGroups) {
  // W is [C_in, C_out / group, k]: one input channel feeding two output channels.
  expect_f32(run_ok(convt(f32({1, 1, 1}, {2}), f32({1, 2, 1}, {3, 4}))), 0, {1, 2, 1}, {6, 8});
  expect_f32(
      run_ok(convt(f32({1, 2, 1}, {1, 2}), f32({2, 1, 1}, {3, 4}), attrs({{"group", int64_t{2}}}))),
      0, {1, 2, 1}, {3, 8});
  // Dilation 2: kernel taps land 2 apart.
  expect_f32(
      run_ok(convt(f32({1, 1, 1}, {1}), f32({1, 1, 2}, {1, 5}), attrs({{"dilations", Ints{2}}}))),
      0, {1, 1, 3}, {1, 0, 5});
}

TEST(NnConvTranspose, GroupWhoseChannelProductOverflowsIsRejected) {
  // X's channels are symbolic, so nothing else stops W.shape[1] x group from overflowing.
  auto r = infer("ConvTranspose", 17, attrs({{"group", std::numeric_limits<int64_t>::max()}}),
                 {sym(DType::kF32, {1, "c", 4}), sym(DType::kF32, {2, 2, 1})});
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find(
                "node 'node0' (ConvTranspose): W.shape[1] x group overflows int64: 2 * "
                "9223372036854775807"),
            std::string::npos)
      << r.status().to_string();
}

TEST(NnConvTranspose, ShapeInferenceAndValidation) {
  auto r = infer("ConvTranspose", 17, attrs({{"strides", Ints{2, 2}}}),
                 {sym(DType::kF32, {"batch", 8, 16, 16}), sym(DType::kF32, {8, 4, 2, 2})});
  EXPECT_EQ(desc_text(r), "float32[batch,4,32,32]");
  expect_error(convt(f32({1, 2, 1}, {1, 2}), f32({1, 2, 1}, {3, 4})), StatusCode::kInvalidModel,
               "W.shape[0]");
  expect_error(convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}),
                     attrs({{"output_padding", Ints{2}}, {"strides", Ints{2}}})),
               StatusCode::kInvalidModel, "output_padding");
  expect_error(
      convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}), attrs({{"output_shape", Ints{3, 3}}})),
      StatusCode::kInvalidModel, "output_shape");
  expect_error(convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}), attrs({{"pads", Ints{2, 2}}})),
               StatusCode::kInvalidModel, "output spatial dims [-1]");
  expect_error(convt(f32({1, 1, 2}, {1, 2}), f32({1, 1, 2}, {1, 1}),
                     attrs({{"output_shape", Ints{int64_t{1} << 50}}})),
               StatusCode::kInvalidModel, "GiB");
}

}  // namespace
}  // namespace kiln::nn_test
