#include "kernels/ref/nms.h"

#include <algorithm>

namespace kiln::kernels::ref {
namespace {

struct Corners {
  float y_min, x_min, y_max, x_max;
};

Corners corners(const float* b, bool center_point_box) {
  if (center_point_box) {
    const float half_w = b[2] / 2.0f;
    const float half_h = b[3] / 2.0f;
    return {b[1] - half_h, b[0] - half_w, b[1] + half_h, b[0] + half_w};
  }
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// IoU(a, b) > threshold; boxes without area or overlap never suppress.
bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min);
  const float iy_min = std::max(a.y_min, b.y_min);
  const float ix_max = std::min(a.x_max, b.x_max);
  const float iy_max = std::min(a.y_max, b.y_max);
  if (ix_max <= ix_min || iy_max <= iy_min) return false;
  const float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  const float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0.0f || area_b <= 0.0f || uni <= 0.0f) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

std::vector<std::array<int64_t, 3>> non_max_suppression(const NmsParams& p, const float* boxes,
                                                        const float* scores) {
  std::vector<std::array<int64_t, 3>> selected;
  if (p.max_output_boxes_per_class <= 0) return selected;
  std::vector<int64_t> order;
  std::vector<Corners> kept;
  for (int64_t batch = 0; batch < p.num_batches; ++batch) {
    const float* batch_boxes = boxes + batch * p.num_boxes * 4;
    for (int64_t cls = 0; cls < p.num_classes; ++cls) {
      const float* s = scores + (batch * p.num_classes + cls) * p.num_boxes;
      order.clear();
      for (int64_t i = 0; i < p.num_boxes; ++i) {
        if (!p.has_score_threshold || s[i] > p.score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(),
                       [s](int64_t a, int64_t b) { return s[a] > s[b]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= p.max_output_boxes_per_class) break;
        const Corners c = corners(batch_boxes + i * 4, p.center_point_box);
        const bool drop = std::any_of(kept.begin(), kept.end(), [&](const Corners& k) {
          return suppresses(k, c, p.iou_threshold);
        });
        if (drop) continue;
        kept.push_back(c);
        selected.push_back({batch, cls, i});
      }
    }
  }
  return selected;
}

}  // namespace kiln::kernels::ref
