#pragma once
// Detection postprocessing for YOLOv8-style outputs: decoding the (batch, 4 + classes, anchors)
// tensor, class-aware non-maximum suppression and mapping boxes back to the original image.

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "io/image.h"

namespace kiln::cli::pipeline {

struct Box {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;  // corners, x2 >= x1 and y2 >= y1
};

struct Detection {
  int64_t cls = 0;
  float score = 0;
  Box box;
};

struct YoloShape {
  int64_t classes = 0, anchors = 0;
};

// The classes and anchors of an output of dims (1, 4 + C, A) with C >= 1; the error names the
// output and its dims.
Result<YoloShape> yolo_shape(const std::string& output, const Dims& dims);

// One candidate per anchor whose best class probability is >= conf (YOLOv8's single-label
// decoding): rows 0..3 hold (cx, cy, w, h) in input pixels, rows 4.. the class probabilities.
// Candidates come in anchor order.
std::vector<Detection> decode_yolo(std::span<const float> output, YoloShape shape, float conf);

// Intersection over union; 0 when either box is empty.
float iou(const Box& a, const Box& b);

// Greedy class-aware NMS: candidates by descending score (equal scores: the earlier candidate
// first), each kept unless a kept box of the same class overlaps it with IoU > iou_threshold;
// stops after max_detections boxes.
std::vector<Detection> nms(std::vector<Detection> candidates, float iou_threshold,
                           size_t max_detections);

// A box in model-input pixels as original-image pixels: undoes the center crop (adds the crop's
// corner) and the resize (scales by original / resized), then clamps to the image.
Box to_original(const Box& b, const io::ImageGeometry& g);

}  // namespace kiln::cli::pipeline
