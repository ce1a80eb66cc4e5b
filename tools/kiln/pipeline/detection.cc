#include "pipeline/detection.h"

#include <algorithm>

namespace kiln::cli::pipeline {

Result<YoloShape> yolo_shape(const std::string& output, const Dims& dims) {
  if (dims.size() != 3 || dims[0] != 1 || dims[1] < 5 || dims[2] < 1) {
    return invalid_argument(
        "--task=detect needs a YOLOv8-style output (1, 4 + classes, anchors) with at least one "
        "class; output '{}' is [{}]",
        output, dims_to_string(dims));
  }
  return YoloShape{dims[1] - 4, dims[2]};
}

std::vector<Detection> decode_yolo(std::span<const float> out, YoloShape s, float conf) {
  std::vector<Detection> found;
  const auto a_count = static_cast<size_t>(s.anchors);
  auto at = [&](int64_t row, size_t a) { return out[static_cast<size_t>(row) * a_count + a]; };
  for (size_t a = 0; a < a_count; ++a) {
    int64_t best = 0;
    for (int64_t c = 1; c < s.classes; ++c) {
      if (at(4 + c, a) > at(4 + best, a)) best = c;
    }
    const float score = at(4 + best, a);
    if (!(score >= conf)) continue;  // NaN scores are dropped too
    const float cx = at(0, a), cy = at(1, a), w = at(2, a), h = at(3, a);
    found.push_back({best, score, {cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2}});
  }
  return found;
}

float iou(const Box& a, const Box& b) {
  const float area_a = std::max(0.0f, a.x2 - a.x1) * std::max(0.0f, a.y2 - a.y1);
  const float area_b = std::max(0.0f, b.x2 - b.x1) * std::max(0.0f, b.y2 - b.y1);
  const float iw = std::max(0.0f, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const float ih = std::max(0.0f, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const float inter = iw * ih;
  const float uni = area_a + area_b - inter;
  return uni > 0 ? inter / uni : 0.0f;
}

std::vector<Detection> nms(std::vector<Detection> c, float iou_threshold, size_t max_detections) {
  std::stable_sort(c.begin(), c.end(),
                   [](const Detection& a, const Detection& b) { return a.score > b.score; });
  std::vector<Detection> kept;
  for (const Detection& d : c) {
    if (kept.size() >= max_detections) break;
    const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](const Detection& k) {
      return k.cls == d.cls && iou(k.box, d.box) > iou_threshold;
    });
    if (!suppressed) kept.push_back(d);
  }
  return kept;
}

Box to_original(const Box& b, const io::ImageGeometry& g) {
  const float sx = static_cast<float>(g.width) / static_cast<float>(g.resized_width);
  const float sy = static_cast<float>(g.height) / static_cast<float>(g.resized_height);
  auto fx = [&](float x) {
    return std::clamp((x + static_cast<float>(g.left)) * sx, 0.0f, static_cast<float>(g.width));
  };
  auto fy = [&](float y) {
    return std::clamp((y + static_cast<float>(g.top)) * sy, 0.0f, static_cast<float>(g.height));
  };
  return {fx(b.x1), fy(b.y1), fx(b.x2), fy(b.y2)};
}

}  // namespace kiln::cli::pipeline
