// kiln.Patches: hand-computed values, shape inference, validation.
#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

OpCase patches(Dims x_dims, std::vector<int64_t> kernel) {
  std::vector<float> x(static_cast<size_t>(dims_numel(x_dims)));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  return OpCase{.op_type = "Patches",
                .opset = 1,
                .attrs = attrs({{"kernel_shape", kernel}}),
                .inputs = {in(f32(std::move(x_dims), std::move(x)))},
                .domain = "kiln"};
}

TEST(KilnPatches, RowsArePatchesInRowMajorOrder) {
  // X [1, 2, 2, 4] = 0..15 (channel 0: 0..7, channel 1: 8..15) in patches of 2 x 2: the left
  // patch takes columns 0-1 of both rows of each channel, the right one columns 2-3.
  auto out = run_ok(patches({1, 2, 2, 4}, {2, 2}));
  expect_f32(out, 0, {1, 2, 8}, {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15});
}

TEST(KilnPatches, BatchAndRectangularPatches) {
  // X [2, 1, 2, 3] in patches of 1 x 3: each image's rows.
  auto out = run_ok(patches({2, 1, 2, 3}, {1, 3}));
  expect_f32(out, 0, {2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST(KilnPatches, RejectsWhatDoesNotCutIntoPatches) {
  expect_error(patches({1, 2, 5, 4}, {2, 2}), StatusCode::kInvalidModel, "not a multiple");
  expect_error(patches({1, 2, 4}, {2, 2}), StatusCode::kInvalidModel, "must be 4-D");
  expect_error(patches({1, 2, 4, 4}, {2}), StatusCode::kInvalidModel, "two positive sizes");
  expect_error(patches({1, 2, 4, 4}, {0, 2}), StatusCode::kInvalidModel, "two positive sizes");
  // Sizes whose product overflows int64 are an error, not a wrapped shape.
  expect_error(patches({1, 2, 0, 0}, {int64_t{1} << 40, int64_t{1} << 40}),
               StatusCode::kInvalidModel, "kh x kw");
}

}  // namespace
}  // namespace kiln::nn_test
