// Resize and Upsample: modes, coordinate transformations, opset differences, shape inference.
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;
using testing::i64;

OpCase resize_scales(Tensor x, std::vector<float> scales, ir::Attributes a, int opset = 13) {
  const auto n = static_cast<int64_t>(scales.size());
  return OpCase{.op_type = "Resize",
                .opset = opset,
                .attrs = std::move(a),
                .inputs = {in(std::move(x)), absent(), constant(f32({n}, scales))}};
}

OpCase resize_sizes(Tensor x, Ints sizes, ir::Attributes a, int opset = 13) {
  const auto n = static_cast<int64_t>(sizes.size());
  return OpCase{.op_type = "Resize",
                .opset = opset,
                .attrs = std::move(a),
                .inputs = {in(std::move(x)), absent(), absent(), constant(i64({n}, sizes))}};
}

ir::Attributes modes(std::string mode, std::string coord) {
  return attrs({{"mode", mode}, {"coordinate_transformation_mode", coord}});
}

TEST(NnResize, NearestUpsample) {
  const Tensor x = f32({1, 1, 2}, {1, 2});
  expect_f32(run_ok(resize_scales(x, {1, 1, 2}, {})), 0, {1, 1, 4}, {1, 1, 2, 2});
  expect_f32(run_ok(resize_sizes(x, {1, 1, 4}, modes("nearest", "asymmetric"))), 0, {1, 1, 4},
             {1, 1, 2, 2});
}

TEST(NnResize, NearestModes) {
  // asymmetric, scale 2: x_original = 0, 0.5, 1, 1.5.
  const Tensor x = f32({1, 1, 2}, {10, 20});
  const std::pair<std::string, std::vector<float>> cases[] = {
      {"round_prefer_floor", {10, 10, 20, 20}},
      {"round_prefer_ceil", {10, 20, 20, 20}},
      {"floor", {10, 10, 20, 20}},
      {"ceil", {10, 20, 20, 20}},
  };
  for (const auto& [mode, expected] : cases) {
    ir::Attributes a = modes("nearest", "asymmetric");
    a.set("nearest_mode", mode);
    expect_f32(run_ok(resize_scales(x, {1, 1, 2}, a)), 0, {1, 1, 4}, expected);
  }
}

TEST(NnResize, LinearCoordinateModes) {
  const Tensor x = f32({1, 1, 2}, {1, 3});
  // half_pixel: x_original = -0.25, 0.25, 0.75, 1.25 (clamped at the edges).
  expect_f32(run_ok(resize_scales(x, {1, 1, 2}, modes("linear", "half_pixel"))), 0, {1, 1, 4},
             {1, 1.5, 2.5, 3});
  expect_f32(run_ok(resize_scales(x, {1, 1, 2}, modes("linear", "asymmetric"))), 0, {1, 1, 4},
             {1, 2, 3, 3});
  expect_f32(run_ok(resize_sizes(x, {1, 1, 3}, modes("linear", "align_corners"))), 0, {1, 1, 3},
             {1, 2, 3});
  // pytorch_half_pixel maps a single output to 0, half_pixel to the centre.
  expect_f32(run_ok(resize_sizes(x, {1, 1, 1}, modes("linear", "pytorch_half_pixel"))), 0,
             {1, 1, 1}, {1});
  expect_f32(run_ok(resize_sizes(x, {1, 1, 1}, modes("linear", "half_pixel"))), 0, {1, 1, 1}, {2});
}

TEST(NnResize, Bilinear2D) {
  // align_corners 2x2 -> 3x3: the centre is the mean of the four corners.
  auto out = run_ok(resize_sizes(f32({1, 1, 2, 2}, {0, 2, 4, 6}), {1, 1, 3, 3},
                                 modes("linear", "align_corners")));
  expect_f32(out, 0, {1, 1, 3, 3}, {0, 1, 2, 2, 3, 4, 4, 5, 6});
}

TEST(NnResize, CubicAndExcludeOutside) {
  // a = -0.75, ratio 0.5: weights [-0.09375, 0.59375, 0.59375, -0.09375].
  const Tensor x = f32({1, 1, 4}, {0, 8, 0, 0});
  expect_f32(run_ok(resize_scales(x, {1, 1, 2}, modes("cubic", "asymmetric"))), 0, {1, 1, 8},
             {0, 4.75, 8, 4.75, 0, -0.75, 0, 0});
  ir::Attributes a = modes("cubic", "asymmetric");
  a.set("exclude_outside", int64_t{1});
  // At x_original 0.5 the tap at -1 is dropped and the rest renormalised: 8 * 0.59375 / 1.09375.
  auto out = run_ok(resize_scales(x, {1, 1, 2}, a));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].value_as_double(1), 8 * 0.59375 / 1.09375, 1e-5);
}

TEST(NnResize, CubicIsSeparableAndAnExtentOneAxisCostsOneTap) {
  // Growing an extent-1 axis (the fuzz case: sizes [1048576, 1, 9, 10] for a [1, 1, 4, 4] input)
  // replicates it: its four cubic taps all clamp to index 0 and merge into one of weight 1.
  const Tensor x = f32({1, 1, 4}, {0, 8, 0, 0});
  const std::vector<float> row = {0, 4.75, 8, 4.75, 0, -0.75, 0, 0};
  std::vector<float> expected;
  for (int i = 0; i < 3; ++i) expected.insert(expected.end(), row.begin(), row.end());
  expect_f32(run_ok(resize_scales(x, {3, 1, 2}, modes("cubic", "asymmetric"))), 0, {3, 1, 8},
             expected);
}

TEST(NnResize, TfCropAndResizeMasksAfterEveryAxis) {
  // Axis 0, roi [0, 1], 2 -> 3: x_original 0, 0.5, 1. Axis 1, roi [0.5, 1.5]: 1, 2, 3 (outside).
  OpCase c{.op_type = "Resize",
           .opset = 13,
           .attrs = modes("linear", "tf_crop_and_resize"),
           .inputs = {in(f32({2, 3}, {0, 10, 20, 30, 40, 50})),
                      constant(f32({4}, {0, 0.5, 1, 1.5})), absent(), constant(i64({2}, {3, 3}))}};
  c.attrs.set("extrapolation_value", 7.0f);
  expect_f32(run_ok(c), 0, {3, 3}, {10, 20, 7, 25, 35, 7, 40, 50, 7});
}

TEST(NnResize, TfCropAndResize) {
  // roi [0.5, 1.5] on the last dim of [0, 10, 20]: x_original = 1, 2, 3 -> 3 is outside.
  OpCase c{.op_type = "Resize",
           .opset = 13,
           .attrs = modes("linear", "tf_crop_and_resize"),
           .inputs = {in(f32({1, 1, 3}, {0, 10, 20})), constant(f32({6}, {0, 0, 0.5, 1, 1, 1.5})),
                      absent(), constant(i64({3}, {1, 1, 3}))}};
  c.attrs.set("extrapolation_value", 7.0f);
  expect_f32(run_ok(c), 0, {1, 1, 3}, {10, 20, 7});
}

TEST(NnResize, AntialiasLinearAtOpset18) {
  // Downsampling by 2 with antialias widens the triangle filter to 4 taps [1,3,3,1]/8.
  ir::Attributes a = modes("linear", "half_pixel");
  a.set("antialias", int64_t{1});
  const Tensor x = f32({1, 1, 4}, {0, 0, 8, 8});
  expect_f32(run_ok(resize_scales(x, {1, 1, 0.5f}, a, 18)), 0, {1, 1, 2}, {1, 7});
  expect_f32(run_ok(resize_scales(x, {1, 1, 0.5f}, modes("linear", "half_pixel"), 18)), 0,
             {1, 1, 2}, {0, 8});
}

TEST(NnResize, AxesAndKeepAspectRatioAtOpset18) {
  ir::Attributes a = attrs({{"axes", Ints{-1}}});
  expect_f32(run_ok(resize_scales(f32({1, 1, 2}, {1, 2}), {2}, a, 18)), 0, {1, 1, 4}, {1, 1, 2, 2});
  // not_larger: scale min(4/2, 4/4) = 1 keeps the input as it is.
  ir::Attributes k =
      attrs({{"axes", Ints{2, 3}}, {"keep_aspect_ratio_policy", std::string("not_larger")}});
  const Tensor x = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  expect_f32(run_ok(resize_sizes(x, {4, 4}, k, 18)), 0, {1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  k.set("keep_aspect_ratio_policy", std::string("not_smaller"));
  auto out = run_ok(resize_sizes(x, {4, 4}, k, 18));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dims(), (Dims{1, 1, 4, 8}));
}

TEST(NnResize, Opset10And11) {
  // Resize-10: asymmetric, nearest rounds up when downsampling: x_original 0, 1.67 -> 0, 2.
  OpCase c10{.op_type = "Resize",
             .opset = 10,
             .attrs = {},
             .inputs = {in(f32({1, 1, 4}, {1, 2, 3, 4})), constant(f32({3}, {1, 1, 0.6f}))}};
  expect_f32(run_ok(c10), 0, {1, 1, 2}, {1, 3});
  // Resize-11 needs roi and scales; scales may be the empty placeholder when sizes are given.
  OpCase c11{.op_type = "Resize",
             .opset = 11,
             .attrs = modes("nearest", "asymmetric"),
             .inputs = {in(f32({1, 1, 2}, {1, 2})), constant(f32({0}, {})), constant(f32({0}, {})),
                        constant(i64({3}, {1, 1, 4}))}};
  expect_f32(run_ok(c11), 0, {1, 1, 4}, {1, 1, 2, 2});
  c11.inputs.pop_back();
  c11.inputs.pop_back();
  expect_error(c11, StatusCode::kInvalidModel, "input 2");
}

TEST(NnResize, IntegerData) {
  const Tensor x = Tensor::from_vector<uint8_t>({1, 1, 2}, {7, 250});
  auto out = run_ok(resize_scales(x, {1, 1, 2}, {}));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kU8);
  EXPECT_EQ(out[0].to_int64_vector(), (Ints{7, 7, 250, 250}));
}

TEST(NnResize, Upsample) {
  const Tensor x = f32({1, 1, 2}, {1, 3});
  OpCase c7{.op_type = "Upsample",
            .opset = 7,
            .attrs = attrs({{"scales", Floats{1, 1, 2}}}),
            .inputs = {in(x)}};
  expect_f32(run_ok(c7), 0, {1, 1, 4}, {1, 1, 3, 3});
  OpCase c9{.op_type = "Upsample",
            .opset = 9,
            .attrs = attrs({{"mode", std::string("linear")}}),
            .inputs = {in(x), constant(f32({3}, {1, 1, 2}))}};
  expect_f32(run_ok(c9), 0, {1, 1, 4}, {1, 2, 3, 3});
  c9.inputs[1] = constant(f32({3}, {1, 1, 0.5f}));
  expect_error(c9, StatusCode::kInvalidModel, ">= 1");
  c7.attrs = {};
  expect_error(c7, StatusCode::kInvalidModel, "scales");
}

TEST(NnResize, ShapeInference) {
  const Tensor scales = f32({4}, {1, 1, 2, 2});
  const Tensor sizes = i64({4}, {1, 3, 64, 48});
  const Tensor empty = f32({0}, {});
  auto r = infer("Resize", 13, {},
                 {sym(DType::kF32, {"batch", 3, 16, 16}), ir::TensorDesc{}, sym(DType::kF32, {4})},
                 {nullptr, nullptr, &scales});
  EXPECT_EQ(desc_text(r), "float32[batch,3,32,32]");
  auto unknown =
      infer("Resize", 13, {},
            {sym(DType::kF32, {"batch", 3, "h", "w"}), ir::TensorDesc{}, sym(DType::kF32, {4})},
            {nullptr, nullptr, &scales});
  EXPECT_EQ(desc_text(unknown), "float32[batch,3,?,?]");
  auto by_size = infer("Resize", 13, {},
                       {sym(DType::kF32, {"b", 3, "h", "w"}), sym(DType::kF32, {0}),
                        sym(DType::kF32, {0}), sym(DType::kI64, {4})},
                       {nullptr, nullptr, &empty, &sizes});
  EXPECT_EQ(desc_text(by_size), "float32[1,3,64,48]");
  auto not_known =
      infer("Resize", 13, {},
            {sym(DType::kF32, {"b", 3, 8, 8}), ir::TensorDesc{}, sym(DType::kF32, {4})});
  EXPECT_EQ(desc_text(not_known), "float32[?,?,?,?]");
}

TEST(NnResize, Validation) {
  const Tensor x = f32({1, 1, 2}, {1, 2});
  OpCase both{
      .op_type = "Resize",
      .opset = 13,
      .attrs = {},
      .inputs = {in(x), absent(), constant(f32({3}, {1, 1, 2})), constant(i64({3}, {1, 1, 4}))}};
  expect_error(both, StatusCode::kInvalidModel, "exactly one of the inputs scales and sizes");
  OpCase neither{.op_type = "Resize", .opset = 13, .attrs = {}, .inputs = {in(x)}};
  expect_error(neither, StatusCode::kInvalidModel, "neither");
  expect_error(resize_scales(x, {1, 2}, {}), StatusCode::kInvalidModel, "scales");
  expect_error(resize_scales(x, {1, 1, 0}, {}), StatusCode::kInvalidModel, "> 0");
  expect_error(resize_sizes(x, {1, 1, 0}, {}), StatusCode::kInvalidModel, "sizes");
  expect_error(resize_scales(x, {1, 1, 2}, attrs({{"mode", std::string("bicubic")}})),
               StatusCode::kInvalidModel, "mode");
  expect_error(resize_scales(x, {1, 1, 2}, modes("linear", "half_pixel_symmetric"), 18),
               StatusCode::kInvalidModel, "half_pixel_symmetric");
  expect_f32(run_ok(resize_scales(x, {1, 1, 2}, modes("nearest", "half_pixel_symmetric"), 19)), 0,
             {1, 1, 4}, {1, 1, 2, 2});
  expect_error(resize_scales(x, {1, 1, 2}, attrs({{"nearest_mode", std::string("round")}})),
               StatusCode::kInvalidModel, "nearest_mode");
  expect_error(resize_scales(x, {2}, attrs({{"axes", Ints{2, 2}}}), 18), StatusCode::kInvalidModel,
               "axes");
  expect_error(resize_sizes(x, {1, 1, int64_t{1} << 40}, {}), StatusCode::kInvalidModel, "GiB");
  expect_error(resize_sizes(f32({1, 1, 0}, {}), {1, 1, 4}, {}), StatusCode::kInvalidModel, "empty");
}

}  // namespace
}  // namespace kiln::nn_test
