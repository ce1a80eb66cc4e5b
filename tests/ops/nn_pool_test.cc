// MaxPool, AveragePool, LpPool and global pooling: hand-computed values, attributes, validation.
#include <limits>

#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

OpCase pool(std::string op, Tensor x, ir::Attributes a, int opset = 17, int outputs = 1) {
  return OpCase{.op_type = std::move(op),
                .opset = opset,
                .attrs = std::move(a),
                .inputs = {in(x)},
                .num_outputs = outputs};
}

TEST(NnPool, MaxPoolWithIndices) {
  // Two channels of the same 3x3 plane; 2x2 windows, stride 1.
  const std::vector<float> plane = {1, 9, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> data = plane;
  data.insert(data.end(), plane.begin(), plane.end());
  const Tensor x = f32({1, 2, 3, 3}, data);
  auto out = run_ok(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2, 2}}}), 17, 2));
  expect_f32(out, 0, {1, 2, 2, 2}, {9, 9, 7, 8, 9, 9, 7, 8});
  ASSERT_EQ(out.size(), 2u);
  // Flat indices include the channel offset (9 per plane).
  EXPECT_EQ(out[1].to_int64_vector(), (Ints{1, 1, 7, 8, 10, 10, 16, 17}));
  auto col = run_ok(pool(
      "MaxPool", x, attrs({{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t{1}}}), 17, 2));
  ASSERT_EQ(col.size(), 2u);
  // Column-major: (row, col) -> row + col * 3.
  EXPECT_EQ(col[1].to_int64_vector(), (Ints{3, 3, 5, 8, 12, 12, 14, 17}));
}

// A NaN never wins, wherever it lies in the window (the first tap included); indices point at the
// best number; a window of NaNs gives lowest().
TEST(NnPool, MaxPoolSkipsNaNWhereverItLies) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = f32({1, 1, 6}, {nan, 1, nan, 3, nan, nan});
  auto out = run_ok(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2}}}), 17, 2));
  expect_f32(out, 0, {1, 1, 5}, {1, 1, 3, 3, std::numeric_limits<float>::lowest()});
  ASSERT_EQ(out.size(), 2u);
  const Ints indices = out[1].to_int64_vector();
  ASSERT_EQ(indices.size(), 5u);
  EXPECT_EQ(Ints(indices.begin(), indices.begin() + 4), (Ints{1, 1, 3, 3}));
}

TEST(NnPool, MaxPoolPaddingIsIgnoredNotZero) {
  auto out = run_ok(pool("MaxPool", f32({1, 1, 3}, {-1, -2, -3}),
                         attrs({{"kernel_shape", Ints{2}}, {"pads", Ints{1, 1}}})));
  expect_f32(out, 0, {1, 1, 4}, {-1, -1, -2, -3});
}

TEST(NnPool, MaxPoolCeilModeAndDilations) {
  const Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  expect_f32(run_ok(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2}}, {"strides", Ints{2}}}))),
             0, {1, 1, 2}, {2, 4});
  expect_f32(
      run_ok(pool(
          "MaxPool", x,
          attrs({{"kernel_shape", Ints{2}}, {"strides", Ints{2}}, {"ceil_mode", int64_t{1}}}))),
      0, {1, 1, 3}, {2, 4, 5});
  expect_f32(run_ok(pool("MaxPool", f32({1, 1, 5}, {1, 5, 2, 4, 3}),
                         attrs({{"kernel_shape", Ints{2}}, {"dilations", Ints{2}}}))),
             0, {1, 1, 3}, {2, 5, 3});
}

TEST(NnPool, MaxPoolUint8AndSameUpper) {
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 4}, {10, 200, 30, 40});
  auto out = run_ok(pool(
      "MaxPool", x, attrs({{"kernel_shape", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}})));
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].dtype(), DType::kU8);
  EXPECT_EQ(out[0].to_int64_vector(), (Ints{200, 200, 40, 40}));
  // int8/uint8 arrived at opset 12.
  expect_error(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2}}}), 11), StatusCode::kUnsupported,
               "uint8");
}

TEST(NnPool, AveragePoolCountIncludePad) {
  const Tensor x = f32({1, 1, 3}, {1, 2, 3});
  expect_f32(
      run_ok(pool("AveragePool", x, attrs({{"kernel_shape", Ints{2}}, {"pads", Ints{1, 1}}}))), 0,
      {1, 1, 4}, {1, 1.5, 2.5, 3});
  expect_f32(run_ok(pool("AveragePool", x,
                         attrs({{"kernel_shape", Ints{2}},
                                {"pads", Ints{1, 1}},
                                {"count_include_pad", int64_t{1}}}))),
             0, {1, 1, 4}, {0.5, 1.5, 2.5, 1.5});
}

TEST(NnPool, AveragePoolCeilModeAnd2D) {
  // The ceil_mode window [5, beyond] averages only what it covers, with or without
  // count_include_pad.
  const Tensor x = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  for (int64_t include : {0, 1}) {
    expect_f32(run_ok(pool("AveragePool", x,
                           attrs({{"kernel_shape", Ints{2}},
                                  {"strides", Ints{2}},
                                  {"ceil_mode", int64_t{1}},
                                  {"count_include_pad", include}}))),
               0, {1, 1, 3}, {1.5, 3.5, 5});
  }
  expect_f32(run_ok(pool("AveragePool", f32({1, 1, 2, 2}, {1, 2, 3, 6}),
                         attrs({{"kernel_shape", Ints{2, 2}}}))),
             0, {1, 1, 1, 1}, {3});
}

TEST(NnPool, LpPool) {
  // p = 2: sqrt(3^2 + 4^2) = 5.
  expect_f32(run_ok(pool("LpPool", f32({1, 1, 2}, {3, -4}), attrs({{"kernel_shape", Ints{2}}}))), 0,
             {1, 1, 1}, {5});
  expect_f32(run_ok(pool("GlobalLpPool", f32({1, 1, 2}, {3, -4}), attrs({{"p", int64_t{1}}}))), 0,
             {1, 1, 1}, {7});
  expect_error(pool("GlobalLpPool", f32({1, 1, 2}, {3, -4}), attrs({{"p", int64_t{0}}})),
               StatusCode::kInvalidModel, "'p'");
}

TEST(NnPool, GlobalPools) {
  const Tensor x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8});
  expect_f32(run_ok(pool("GlobalAveragePool", x, {})), 0, {1, 2, 1, 1}, {2.5, -3.5});
  expect_f32(run_ok(pool("GlobalMaxPool", x, {})), 0, {1, 2, 1, 1}, {4, -1});
  auto r = infer("GlobalAveragePool", 17, {}, {sym(DType::kF32, {"batch", 2048, "h", "w"})});
  EXPECT_EQ(desc_text(r), "float32[batch,2048,1,1]");
  expect_error(pool("GlobalMaxPool", f32({2, 2}, {1, 2, 3, 4}), {}), StatusCode::kInvalidModel,
               "rank >= 3");
}

TEST(NnPool, ShapeInference) {
  auto r = infer(
      "MaxPool", 17,
      attrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}),
      {sym(DType::kF32, {"batch", 64, 112, 112})}, {}, 2);
  EXPECT_EQ(desc_text(r, 0), "float32[batch,64,56,56]");
  EXPECT_EQ(desc_text(r, 1), "int64[batch,64,56,56]");
  auto same = infer("AveragePool", 17,
                    attrs({{"kernel_shape", Ints{3, 3}}, {"auto_pad", std::string("SAME_LOWER")}}),
                    {sym(DType::kF32, {"n", 8, "h", "w"})});
  EXPECT_EQ(desc_text(same), "float32[n,8,h,w]");
}

TEST(NnPool, Validation) {
  const Tensor x = f32({1, 1, 3, 3}, std::vector<float>(9, 1));
  expect_error(pool("MaxPool", x, {}), StatusCode::kInvalidModel, "kernel_shape");
  expect_error(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2}}})), StatusCode::kInvalidModel,
               "kernel_shape");
  expect_error(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{1, 0}}})),
               StatusCode::kInvalidModel, "strides");
  expect_error(pool("AveragePool", x, attrs({{"kernel_shape", Ints{4, 4}}})),
               StatusCode::kInvalidModel, "output spatial dims [0,0]");
  expect_error(
      pool("MaxPool", x, attrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{-1, 0, 0, 0}}})),
      StatusCode::kInvalidModel, "pads");
  expect_error(
      pool("MaxPool", x, attrs({{"kernel_shape", Ints{2, 2}}, {"storage_order", int64_t{2}}})),
      StatusCode::kInvalidModel, "storage_order");
  expect_error(pool("MaxPool", x, attrs({{"kernel_shape", Ints{2, 2}}}), 7, 2),
               StatusCode::kInvalidModel, "Indices");
  expect_error(pool("AveragePool", x,
                    attrs({{"kernel_shape", Ints{2, 2}},
                           {"pads", Ints{1, 1, 1, 1}},
                           {"auto_pad", std::string("VALID")}})),
               StatusCode::kInvalidModel, "auto_pad");
  expect_error(pool("LpPool", x, attrs({{"kernel_shape", Ints{2, 2}}, {"p", int64_t{0}}})),
               StatusCode::kInvalidModel, "'p'");
}

}  // namespace
}  // namespace kiln::nn_test
