// RoiAlign: hand-computed values on a linear ramp (bilinear interpolation of a linear function is
// exact), both coordinate modes, avg and max, spatial_scale, batch indices, validation.
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;
using testing::i64;

// x[h][w] = 4h + w + offset over a 4x4 image.
std::vector<float> ramp(float offset = 0) {
  std::vector<float> v;
  for (int i = 0; i < 16; ++i) v.push_back(static_cast<float>(i) + offset);
  return v;
}

OpCase roi(Tensor x, Tensor rois, Tensor idx, ir::Attributes a, int opset = 16) {
  return OpCase{.op_type = "RoiAlign",
                .opset = opset,
                .attrs = std::move(a),
                .inputs = {in(std::move(x)), in(std::move(rois)), in(std::move(idx))}};
}

const Tensor kX = f32({1, 1, 4, 4}, ramp());

TEST(NnRoiAlign, HalfPixelAverage) {
  // Roi (0,0)-(4,4) shifted by -0.5; 2x2 bins of 2 pixels, 2x2 samples each at y, x in {0, 1} or
  // {2, 3}: bin means 4 * 0.5 + 0.5, 4 * 0.5 + 2.5, 4 * 2.5 + 0.5, 4 * 2.5 + 2.5.
  auto out = run_ok(roi(kX, f32({1, 4}, {0, 0, 4, 4}), i64({1}, {0}),
                        attrs({{"output_height", int64_t{2}}, {"output_width", int64_t{2}}})));
  expect_f32(out, 0, {1, 1, 2, 2}, {2.5, 4.5, 10.5, 12.5});
}

TEST(NnRoiAlign, OutputHalfPixelIsOpset10Behaviour) {
  // No shift; one 3x3 bin, sampling_ratio 2: samples at 0.75 and 2.25 -> 4 * 1.5 + 1.5.
  const ir::Attributes a = attrs({{"sampling_ratio", int64_t{2}}});
  expect_f32(run_ok(roi(kX, f32({1, 4}, {0, 0, 3, 3}), i64({1}, {0}), a, 10)), 0, {1, 1, 1, 1},
             {7.5});
  ir::Attributes b = a;
  b.set("coordinate_transformation_mode", std::string("output_half_pixel"));
  expect_f32(run_ok(roi(kX, f32({1, 4}, {0, 0, 3, 3}), i64({1}, {0}), b)), 0, {1, 1, 1, 1}, {7.5});
}

TEST(NnRoiAlign, MaxTakesTheLargestWeightedNeighbour) {
  // One sample at (1.5, 1.5): neighbours 5, 6, 9, 10 with weight 0.25 each -> max 2.5 (avg 7.5).
  const ir::Attributes a =
      attrs({{"sampling_ratio", int64_t{1}},
             {"mode", std::string("max")},
             {"coordinate_transformation_mode", std::string("output_half_pixel")}});
  expect_f32(run_ok(roi(kX, f32({1, 4}, {0, 0, 3, 3}), i64({1}, {0}), a)), 0, {1, 1, 1, 1}, {2.5});
}

TEST(NnRoiAlign, SpatialScaleBatchIndicesAndOutsideSamples) {
  // Roi 0 is (0,0)-(6,6) * 0.5 on batch 1 (ramp + 100); roi 1 lies beyond the image: 0.
  std::vector<float> two = ramp();
  for (float v : ramp(100)) two.push_back(v);
  const ir::Attributes a =
      attrs({{"sampling_ratio", int64_t{2}},
             {"spatial_scale", 0.5f},
             {"coordinate_transformation_mode", std::string("output_half_pixel")}});
  auto out = run_ok(
      roi(f32({2, 1, 4, 4}, two), f32({2, 4}, {0, 0, 6, 6, 20, 20, 24, 24}), i64({2}, {1, 0}), a));
  expect_f32(out, 0, {2, 1, 1, 1}, {107.5, 0});
}

TEST(NnRoiAlign, ShapeInference) {
  auto r = infer(
      "RoiAlign", 16, attrs({{"output_height", int64_t{7}}, {"output_width", int64_t{5}}}),
      {sym(DType::kF32, {"N", 3, "H", "W"}), sym(DType::kF32, {"R", 4}), sym(DType::kI64, {"R"})});
  EXPECT_EQ(desc_text(r), "float32[R,3,7,5]");
}

TEST(NnRoiAlign, Errors) {
  const Tensor rois = f32({1, 4}, {0, 0, 3, 3});
  const Tensor idx = i64({1}, {0});
  expect_error(roi(kX, rois, i64({1}, {1}), {}), StatusCode::kInvalidModel,
               "batch_indices[0] = 1 is outside [0, 1)");
  expect_error(roi(kX, f32({1, 4}, {0, 0, NAN, 3}), idx, {}), StatusCode::kInvalidModel,
               "non-finite");
  expect_error(roi(kX, f32({1, 3}, {0, 0, 3}), idx, {}), StatusCode::kInvalidModel,
               "must be 2-D [num_rois, 4]");
  expect_error(roi(kX, rois, i64({2}, {0, 0}), {}), StatusCode::kInvalidModel, "disagree");
  expect_error(roi(kX, rois, Tensor::from_vector<int32_t>({1}, {0}), {}), StatusCode::kInvalidModel,
               "expected int64");
  expect_error(roi(f32({1, 4, 4}, ramp()), rois, idx, {}), StatusCode::kInvalidModel,
               "must be 4-D");
  expect_error(roi(kX, rois, idx, attrs({{"mode", std::string("min")}})), StatusCode::kInvalidModel,
               "'mode'");
  expect_error(
      roi(kX, rois, idx, attrs({{"coordinate_transformation_mode", std::string("asymmetric")}})),
      StatusCode::kInvalidModel, "coordinate_transformation_mode");
  expect_error(roi(kX, rois, idx,
                   attrs({{"coordinate_transformation_mode", std::string("half_pixel")}}), 10),
               StatusCode::kInvalidModel, "exists only from opset 16");
  expect_error(roi(kX, rois, idx, attrs({{"output_height", int64_t{0}}})),
               StatusCode::kInvalidModel, "output_height");
  expect_error(roi(kX, rois, idx, attrs({{"sampling_ratio", int64_t{-1}}})),
               StatusCode::kInvalidModel, "sampling_ratio");
  expect_error(roi(kX, f32({1, 4}, {0, 0, 1e12f, 3}), idx, {}), StatusCode::kInvalidModel,
               "input pixels per bin");
}

}  // namespace
}  // namespace kiln::nn_test
