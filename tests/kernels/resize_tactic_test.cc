// resize.separable.f32 against the reference Resize.
#include <gtest/gtest.h>

#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace {

constexpr const char* kResize = "resize.separable.f32";

Tensor floats(std::vector<float> v) {
  return Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
}

// Resize-13 with scales (or sizes when `sizes` is set) and the given string attributes.
OpCase resize_case(const Dims& x, std::vector<float> scales, std::vector<int64_t> sizes,
                   std::initializer_list<std::pair<std::string, std::string>> modes,
                   int opset = 13) {
  OpCase c;
  c.op_type = "Resize";
  c.opset = opset;
  for (const auto& [name, value] : modes) c.attrs.set(name, value);
  c.inputs = {in(random_f32(x, 21)), constant(floats({}))};
  if (sizes.empty()) {
    c.inputs.push_back(constant(floats(std::move(scales))));
  } else {
    c.inputs.push_back(constant(floats({})));
    c.inputs.push_back(
        constant(Tensor::from_vector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes)));
  }
  return c;
}

TEST(ResizeTactic, NearestMatchesReferenceInEveryMode) {
  for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
    for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
      for (const auto& scales : {std::vector<float>{1, 1, 2, 2}, std::vector<float>{1, 1, 0.5f, 3},
                                 std::vector<float>{1, 1, 1.7f, 0.6f}}) {
        expect_matches_reference(kResize,
                                 resize_case({2, 3, 5, 7}, scales, {},
                                             {{"mode", "nearest"},
                                              {"coordinate_transformation_mode", coord},
                                              {"nearest_mode", nearest}}),
                                 kPointTol);
      }
    }
  }
}

TEST(ResizeTactic, LinearAndCubicMatchReference) {
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}) {
      expect_matches_reference(
          kResize,
          resize_case({1, 2, 6, 9}, {1, 1, 2, 2}, {},
                      {{"mode", mode}, {"coordinate_transformation_mode", coord}}),
          kPointTol);
      expect_matches_reference(
          kResize,
          resize_case({1, 2, 13, 31}, {}, {1, 2, 7, 40},
                      {{"mode", mode}, {"coordinate_transformation_mode", coord}}),
          kPointTol);
    }
  }
  OpCase excluded = resize_case({1, 1, 8, 8}, {1, 1, 1.5f, 0.75f}, {}, {{"mode", "cubic"}});
  excluded.attrs.set("exclude_outside", int64_t{1});
  expect_matches_reference(kResize, excluded, kPointTol);
}

TEST(ResizeTactic, OtherVersionsRanksAndCropAndResize) {
  // Resize-10: inputs (X, scales), asymmetric coordinates.
  OpCase v10;
  v10.op_type = "Resize";
  v10.opset = 10;
  v10.attrs = attrs({{"mode", std::string("nearest")}});
  v10.inputs = {in(random_f32({1, 2, 3, 4}, 2)), constant(floats({1, 1, 2, 3}))};
  expect_matches_reference(kResize, v10, kPointTol);
  // Resize-18 antialiased downsampling: more than two taps per output coordinate.
  OpCase aa = resize_case({1, 1, 12, 10}, {1, 1, 0.4f, 0.5f}, {}, {{"mode", "linear"}}, 18);
  aa.attrs.set("antialias", int64_t{1});
  expect_matches_reference(kResize, aa, kPointTol);
  // Rank 3 and rank 1.
  expect_matches_reference(kResize, resize_case({3, 4, 5}, {1, 2, 2}, {}, {{"mode", "linear"}}),
                           kPointTol);
  expect_matches_reference(kResize, resize_case({6}, {2.5f}, {}, {{"mode", "linear"}}), kPointTol);
  // tf_crop_and_resize: coordinates outside the crop take the extrapolation value.
  OpCase crop = resize_case(
      {1, 1, 6, 6}, {}, {1, 1, 5, 4},
      {{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}}, 11);
  crop.attrs.set("extrapolation_value", 7.0f);
  crop.inputs[1] = constant(floats({0, 0, -0.2f, 0.3f, 1, 1, 0.9f, 1.4f}));
  expect_matches_reference(kResize, crop, kPointTol);
}

// Upsampled rows take the columns first (resize2d_columns_first): DeepLabV3's 16x bilinear
// upsampling of 21 class planes, and a crop whose outside columns keep the rows-first path.
TEST(ResizeTactic, UpsamplingColumnsFirstMatchesReference) {
  expect_matches_reference(
      kResize,
      resize_case({1, 21, 16, 16}, {}, {1, 21, 256, 256},
                  {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}}),
      kPointTol);
  OpCase crop = resize_case(
      {1, 2, 6, 6}, {}, {1, 2, 11, 9},
      {{"mode", "linear"}, {"coordinate_transformation_mode", "tf_crop_and_resize"}}, 11);
  crop.attrs.set("extrapolation_value", -3.0f);
  crop.inputs[1] = constant(floats({0, 0, 0.1f, -0.3f, 1, 1, 0.8f, 1.3f}));
  expect_matches_reference(kResize, crop, kPointTol);
}

TEST(ResizeTactic, RefusesLeadingAxesAndRuntimeScales) {
  expect_rejected(kResize, resize_case({2, 3, 4, 4}, {1, 2, 2, 2}, {}, {{"mode", "nearest"}}),
                  "axis 1");
  OpCase runtime = resize_case({2, 3, 4, 4}, {1, 1, 2, 2}, {}, {{"mode", "nearest"}});
  runtime.inputs[2].constant = false;
  expect_rejected(kResize, runtime, "scales");
}

}  // namespace
}  // namespace kiln::testing
