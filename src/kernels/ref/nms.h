#pragma once
// Reference NonMaxSuppression (ONNX semantics, as ONNX Runtime implements them).

#include <array>
#include <cstdint>
#include <vector>

namespace kiln::kernels::ref {

// boxes: [num_batches, num_boxes, 4], either corners (y1, x1, y2, x2) in any order
// (center_point_box = false) or (x_center, y_center, width, height). scores: [num_batches,
// num_classes, num_boxes].
struct NmsParams {
  int64_t num_batches = 0;
  int64_t num_classes = 0;
  int64_t num_boxes = 0;
  bool center_point_box = false;
  int64_t max_output_boxes_per_class = 0;  // <= 0 selects nothing
  float iou_threshold = 0.0f;              // a box is suppressed when IoU > threshold
  bool has_score_threshold = false;
  float score_threshold = 0.0f;  // only boxes with score > threshold are candidates
};

// Selected (batch, class, box) triples ordered by batch, then class, then selection order (score
// descending; equal scores keep the lower box index first).
std::vector<std::array<int64_t, 3>> non_max_suppression(const NmsParams& p, const float* boxes,
                                                        const float* scores);

}  // namespace kiln::kernels::ref
