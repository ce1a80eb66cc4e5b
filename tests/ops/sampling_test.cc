// GridSample. Expected values follow by hand from the ONNX definition: denormalisation
// ((g + 1) / 2 * (D - 1) with align_corners, ((g + 1) * D - 1) / 2 without), padding, and
// bilinear / nearest / Keys-cubic (a = -0.75) interpolation.
#include <cmath>
#include <limits>

#include "elementwise_test_util.h"
#include "math_test_util.h"

namespace kiln::testing {
namespace {

using namespace ew;

// [[1, 2], [3, 4]]
Tensor image() { return t<float>({1, 1, 2, 2}, {1, 2, 3, 4}); }

OpCase gs(Tensor x, Tensor grid, ir::Attributes a = {}, int opset = 16) {
  return op("GridSample", {std::move(x), std::move(grid)}, opset, std::move(a));
}
ir::Attributes opts(int64_t align, const char* mode = "bilinear", const char* pad = "zeros") {
  return attrs(
      {{"align_corners", align}, {"mode", std::string(mode)}, {"padding_mode", std::string(pad)}});
}

TEST(GridSample, BilinearAlignCorners) {
  // With align_corners -1 and 1 are the corner pixel centres: (0, 0) is the image centre.
  const Tensor grid = t<float>({1, 1, 4, 2}, {0, 0, -1, -1, 1, -1, -1, 1});
  expect_op(gs(image(), grid, opts(1)), t<float>({1, 1, 1, 4}, {2.5f, 1, 2, 3}));
}

TEST(GridSample, BilinearPaddingModes) {
  // Without align_corners: g = -1 -> -0.5, g = 0 -> 0.5, g = -0.5 -> 0, g = 1 -> 1.5.
  const Tensor grid = t<float>({1, 1, 4, 2}, {-1, -1, 0, 0, -0.5f, -0.5f, 1, 1});
  // zeros: the corner points read half a pixel of image in each dim: 1 / 4 and 4 / 4.
  expect_op(gs(image(), grid), t<float>({1, 1, 1, 4}, {0.25f, 2.5f, 1, 1}));
  // border: the coordinates clamp to the corner pixels.
  expect_op(gs(image(), grid, opts(0, "bilinear", "border")),
            t<float>({1, 1, 1, 4}, {1, 2.5f, 1, 4}));
  // reflection: taps beyond the edge read the pixel reflected at the border (-1 -> 0, 2 -> 1).
  expect_op(gs(image(), grid, opts(0, "bilinear", "reflection")),
            t<float>({1, 1, 1, 4}, {1, 2.5f, 1, 4}));
  // A coordinate far outside reflects back in: x = 2.5 -> 0.5 (borders -0.5 and 1.5).
  expect_op(gs(image(), t<float>({1, 1, 1, 2}, {2, 0}), opts(0, "bilinear", "reflection")),
            t<float>({1, 1, 1, 1}, {2.5f}));
}

TEST(GridSample, Nearest) {
  // x = 0.4 -> 0; (x 1.1, y -0.1) -> (1, 0); an exact half (0.5, 0.5) rounds to even: (0, 0).
  const Tensor grid = t<float>({1, 1, 3, 2}, {-0.1f, -0.1f, 0.6f, -0.6f, 0, 0});
  expect_op(gs(image(), grid, opts(0, "nearest")), t<float>({1, 1, 1, 3}, {1, 2, 1}));
}

TEST(GridSample, Bicubic) {
  // Every row is [1, 2, 4, 8]. At x = y = 1.5 the weights are [-0.09375, 0.59375, 0.59375,
  // -0.09375] in each dim (summing to 1): -0.09375 + 1.1875 + 2.375 - 0.75 = 2.71875.
  // On a pixel centre cubic interpolation returns the pixel.
  const Tensor x = t<float>({1, 1, 4, 4}, {1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 4, 8});
  const Tensor grid = t<float>({1, 1, 2, 2}, {0, 0, -1, -1});
  expect_op(gs(x, grid, opts(1, "bicubic")), t<float>({1, 1, 1, 2}, {2.71875f, 1}));
  // Opset 20 names it cubic and allows one spatial dim.
  expect_op(gs(t<float>({1, 1, 4}, {1, 2, 4, 8}), t<float>({1, 1, 1}, {0}), opts(1, "cubic"), 20),
            t<float>({1, 1, 1}, {2.71875f}));
}

TEST(GridSample, BatchesChannelsAndTypes) {
  // One row of two pixels per image; n0 samples x = 0.5, n1 samples x = 1 (align_corners).
  const Tensor x = t<float>({2, 2, 1, 2}, {1, 2, 10, 20, 100, 200, 1000, 2000});
  const Tensor grid = t<float>({2, 1, 1, 2}, {0, 0, 1, 0});
  expect_op(gs(x, grid, opts(1)), t<float>({2, 2, 1, 1}, {1.5f, 15, 200, 2000}));
  expect_op(gs(t<double>({1, 1, 2, 2}, {1, 2, 3, 4}), t<float>({1, 1, 1, 2}, {0, 0}), opts(1)),
            t<double>({1, 1, 1, 1}, {2.5}));
  expect_op(gs(f16({1, 1, 2, 2}, {1, 2, 3, 4}), t<double>({1, 1, 1, 2}, {0, 0}), opts(1)),
            f16({1, 1, 1, 1}, {2.5f}));
  // Opset 20's linear mode (also under its opset-16 name) on a 3-D volume: the centre of a 2x2x2
  // cube with values 0..7 is their mean, 3.5.
  const Tensor cube = t<float>({1, 1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  expect_op(gs(cube, t<float>({1, 1, 1, 1, 3}, {0, 0, 0}), opts(1, "linear"), 20),
            t<float>({1, 1, 1, 1, 1}, {3.5f}));
  expect_op(gs(cube, t<float>({1, 1, 1, 1, 3}, {0, 0, 0}), opts(1, "bilinear"), 20),
            t<float>({1, 1, 1, 1, 1}, {3.5f}));
  // A NaN coordinate gives NaN.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  expect_op(gs(image(), t<float>({1, 1, 1, 2}, {nan, 0})), t<float>({1, 1, 1, 1}, {nan}));
}

TEST(GridSample, ShapeInference) {
  using math::sym;
  const auto x = ir::TensorDesc::of(DType::kF32, {sym("N"), ir::Dim::known(3), sym("H"), sym("W")});
  const auto grid = ir::TensorDesc::of(
      DType::kF32, {ir::Dim::unknown(), sym("h"), ir::Dim::known(7), ir::Dim::known(2)});
  auto r = math::infer_one("GridSample", 16, {}, {x, grid});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].to_string(), "float32[N,3,h,7]");
}

TEST(GridSample, InvalidModels) {
  const Tensor grid = t<float>({1, 1, 1, 2}, {0, 0});
  const auto err = [](const OpCase& c, const char* fragment,
                      StatusCode code = StatusCode::kInvalidModel) {
    expect_error(c, code, fragment);
  };
  err(gs(image(), grid, opts(0, "linear")), "mode is 'linear'");  // an opset-20 name at 16
  err(gs(image(), grid, opts(0, "area")), "mode");
  err(gs(image(), grid, opts(0, "bilinear", "wrap")), "padding_mode");
  err(gs(t<float>({1, 1, 2}, {1, 2}), t<float>({1, 1, 1}, {0})), "4-D");
  err(gs(image(), t<float>({1, 1, 1, 3}, {0, 0, 0})), "input 1 (grid)");
  err(gs(image(), t<float>({2, 1, 1, 2}, {0, 0, 0, 0})), "different batch sizes");
  err(gs(image(), t<int64_t>({1, 1, 1, 2}, {0, 0})), "float tensor");
  err(gs(t<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}), grid), "int32", StatusCode::kUnsupported);
  err(gs(t<float>({1, 1, 0, 2}, {}), grid), "empty spatial dim");
  err(gs(t<float>({1, 1}, {1}), t<float>({1, 1}, {0}), {}, 20), "rank >= 3");
  EXPECT_FALSE(run_op(gs(image(), grid, {}, 15)).is_ok());
}

}  // namespace
}  // namespace kiln::testing
