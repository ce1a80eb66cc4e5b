// NonMaxSuppression: IoU suppression, score threshold, per-class limits, both box formats, output
// ordering and validation.
#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace {

// Six unit boxes (y1, x1, y2, x2): 0-2 overlap heavily (IoU 0.9/1.1), 3-4 likewise, 5 is alone.
Tensor six_boxes() {
  return f32({1, 6, 4}, {0, 0,  1, 1,  0, 0.1f,  1, 1.1f,  0, -0.1f, 1, 0.9f,
                         0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100,   1, 101});
}
Tensor six_scores() { return f32({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f}); }

OpCase nms(Tensor boxes, Tensor scores, int64_t max_out, float iou,
           std::optional<float> score_threshold = std::nullopt, int64_t center = 0) {
  ir::Attributes a;
  a.set("center_point_box", center);
  OpCase c{.op_type = "NonMaxSuppression",
           .opset = 11,
           .attrs = a,
           .inputs = {in(std::move(boxes)), in(std::move(scores)), in(i64({1}, {max_out})),
                      in(f32({1}, {iou}))}};
  if (score_threshold) c.inputs.push_back(in(f32({1}, {*score_threshold})));
  return c;
}

TEST(MathNms, SuppressesByIou) {
  expect_output(nms(six_boxes(), six_scores(), 3, 0.5f), i64({3, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(MathNms, ScoreThresholdAndLimit) {
  expect_output(nms(six_boxes(), six_scores(), 3, 0.5f, 0.4f), i64({2, 3}, {0, 0, 3, 0, 0, 0}));
  expect_output(nms(six_boxes(), six_scores(), 1, 0.5f), i64({1, 3}, {0, 0, 3}));
  // An IoU threshold of 1 suppresses nothing: all six by descending score.
  expect_output(nms(six_boxes(), six_scores(), 10, 1.0f),
                i64({6, 3}, {0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
}

TEST(MathNms, CenterPointFormat) {
  const Tensor boxes = f32({1, 3, 4}, {0.5f, 0.5f, 1, 1, 0.5f, 0.6f, 1, 1, 0.5f, 10.5f, 1, 1});
  expect_output(nms(boxes, f32({1, 1, 3}, {0.9f, 0.8f, 0.7f}), 3, 0.5f, std::nullopt, 1),
                i64({2, 3}, {0, 0, 0, 0, 0, 2}));
}

TEST(MathNms, OrdersByBatchThenClass) {
  // Two batches of the same two boxes; class 1 prefers box 1.
  const Tensor boxes = f32({2, 2, 4}, {0, 0, 1, 1, 0, 5, 1, 6, 0, 0, 1, 1, 0, 5, 1, 6});
  const Tensor scores = f32({2, 2, 2}, {0.9f, 0.1f, 0.2f, 0.8f, 0.3f, 0.4f, 0.6f, 0.5f});
  expect_output(nms(boxes, scores, 1, 0.5f), i64({4, 3}, {0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0}));
}

TEST(MathNms, NoLimitSelectsNothing) {
  expect_output(
      {.op_type = "NonMaxSuppression", .opset = 11, .inputs = {in(six_boxes()), in(six_scores())}},
      i64({0, 3}, {}));
}

TEST(MathNms, Validation) {
  expect_error(nms(f32({1, 2, 5}, std::vector<float>(10)), f32({1, 1, 2}, {1, 1}), 1, 0.5f),
               StatusCode::kInvalidModel, "boxes must be [num_batches, num_boxes, 4]");
  expect_error(nms(six_boxes(), f32({1, 1, 5}, std::vector<float>(5)), 1, 0.5f),
               StatusCode::kInvalidModel, "disagree");
  expect_error(nms(six_boxes(), six_scores(), 1, 1.5f), StatusCode::kInvalidModel,
               "iou_threshold must be in [0, 1]");
  expect_error(nms(six_boxes(), six_scores(), 1, 0.5f, std::nullopt, 2), StatusCode::kInvalidModel,
               "center_point_box must be 0 or 1");
}

}  // namespace
}  // namespace kiln::testing::math
