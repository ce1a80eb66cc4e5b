// kiln pipeline's postprocessing on synthetic tensors: softmax and top-k, YOLOv8 decoding, greedy
// class-aware NMS, and mapping boxes back through the resize and center crop.
#include <gtest/gtest.h>

#include <cmath>

#include "pipeline/classify.h"
#include "pipeline/detection.h"

namespace kiln::cli::pipeline {
namespace pipeline_postprocess_test {

Detection det(int64_t cls, float score, float x1, float y1, float x2, float y2) {
  return {cls, score, {x1, y1, x2, y2}};
}

TEST(PipelineSoftmax, IsStableForHugeLogitsAndSumsToOne) {
  std::vector<float> p;
  softmax(std::vector<float>{1000.0f, 1001.0f, 999.0f}, p);
  ASSERT_EQ(p.size(), 3u);
  for (float v : p) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NEAR(p[0] + p[1] + p[2], 1.0f, 1e-6f);
  const double e = std::exp(1.0);
  EXPECT_NEAR(p[1], e / (1 + e + 1 / e), 1e-6);
  softmax(std::vector<float>{-1e30f, 0.0f}, p);
  EXPECT_NEAR(p[1], 1.0f, 1e-7f);
  softmax({}, p);
  EXPECT_TRUE(p.empty());
}

TEST(PipelineTopK, BestFirstTiesByLowerIndexAndKCapped) {
  const std::vector<float> s = {0.1f, 0.4f, 0.4f, 0.05f, 0.05f};
  auto t = top_k(s, 3);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].index, 1);
  EXPECT_EQ(t[1].index, 2);
  EXPECT_EQ(t[2].index, 0);
  EXPECT_FLOAT_EQ(t[0].score, 0.4f);
  EXPECT_EQ(top_k(s, 10).size(), 5u);
}

TEST(PipelineIou, HandCases) {
  const Box a{0, 0, 10, 10}, b{5, 0, 15, 10};
  EXPECT_NEAR(iou(a, b), 50.0f / 150.0f, 1e-6f);
  EXPECT_FLOAT_EQ(iou(a, a), 1.0f);
  EXPECT_FLOAT_EQ(iou(a, {20, 20, 30, 30}), 0.0f);
  EXPECT_FLOAT_EQ(iou({0, 0, 0, 0}, {0, 0, 0, 0}), 0.0f);  // empty boxes: no division by zero
}

TEST(PipelineNms, SuppressesOverlapsOfTheSameClassOnly) {
  std::vector<Detection> c = {det(0, 0.9f, 0, 0, 10, 10), det(0, 0.8f, 1, 1, 11, 11),
                              det(1, 0.7f, 1, 1, 11, 11), det(0, 0.6f, 50, 50, 60, 60)};
  auto kept = nms(c, 0.45f, 100);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
  EXPECT_EQ(kept[1].cls, 1);  // same box, other class: kept
  EXPECT_FLOAT_EQ(kept[2].score, 0.6f);
}

TEST(PipelineNms, IouThresholdIsStrict) {
  // IoU of these two is exactly 1/3.
  std::vector<Detection> c = {det(0, 0.9f, 0, 0, 10, 10), det(0, 0.8f, 5, 0, 15, 10)};
  EXPECT_EQ(nms(c, 0.5f, 10).size(), 2u);
  EXPECT_EQ(nms(c, 0.3f, 10).size(), 1u);
}

TEST(PipelineNms, EqualScoresKeepTheEarlierCandidate) {
  std::vector<Detection> c = {det(0, 0.5f, 0, 0, 10, 10), det(0, 0.5f, 1, 0, 11, 10)};
  auto kept = nms(c, 0.5f, 10);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_FLOAT_EQ(kept[0].box.x1, 0.0f);
}

TEST(PipelineNms, StopsAtMaxDetectionsWithTheBestScores) {
  std::vector<Detection> c;
  for (int i = 0; i < 10; ++i) {
    c.push_back(det(0, 0.1f * static_cast<float>(i), 20.0f * i, 0, 20.0f * i + 10, 10));
  }
  auto kept = nms(c, 0.5f, 3);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_FLOAT_EQ(kept[0].score, 0.9f);
  EXPECT_FLOAT_EQ(kept[2].score, 0.7f);
}

TEST(PipelineYolo, ShapeChecks) {
  auto ok = yolo_shape("out", {1, 84, 2100});
  ASSERT_TRUE(ok.is_ok());
  EXPECT_EQ(ok->classes, 80);
  EXPECT_EQ(ok->anchors, 2100);
  for (const Dims& bad : {Dims{1, 4, 10}, Dims{1, 84}, Dims{2, 84, 10}, Dims{1, 10, 84, 1}}) {
    auto r = yolo_shape("out", bad);
    ASSERT_FALSE(r.is_ok()) << dims_to_string(bad);
    EXPECT_NE(r.status().message().find("'out'"), std::string::npos);
  }
}

TEST(PipelineYolo, DecodesBestClassPerAnchorAboveTheThreshold) {
  // 3 anchors, 2 classes: rows cx, cy, w, h, p0, p1 (anchor-major columns).
  const std::vector<float> out = {
      10,   50,   90,    // cx
      20,   50,   80,    // cy
      4,    10,   20,    // w
      8,    10,   20,    // h
      0.9f, 0.1f, 0.2f,  // class 0
      0.3f, 0.2f, 0.6f,  // class 1
  };
  auto d = decode_yolo(out, {2, 3}, 0.25f);
  ASSERT_EQ(d.size(), 2u);  // anchor 1's best is 0.2 < 0.25
  EXPECT_EQ(d[0].cls, 0);
  EXPECT_FLOAT_EQ(d[0].score, 0.9f);
  EXPECT_FLOAT_EQ(d[0].box.x1, 8);
  EXPECT_FLOAT_EQ(d[0].box.y1, 16);
  EXPECT_FLOAT_EQ(d[0].box.x2, 12);
  EXPECT_FLOAT_EQ(d[0].box.y2, 24);
  EXPECT_EQ(d[1].cls, 1);
  EXPECT_FLOAT_EQ(d[1].box.x1, 80);
  EXPECT_FLOAT_EQ(d[1].box.y2, 90);
}

TEST(PipelineYolo, BoxesMapBackThroughResizeAndCenterCrop) {
  // 640x480 image, shorter side resized to 240 -> 320x240, center crop 240x240 at left 40.
  io::ImagePreprocess p;
  p.resize_shorter = 240;
  p.crop_height = p.crop_width = 240;
  auto g = io::preprocess_geometry(640, 480, p);
  ASSERT_TRUE(g.is_ok()) << g.status().to_string();
  EXPECT_EQ(g->resized_width, 320);
  EXPECT_EQ(g->left, 40);
  EXPECT_EQ(g->top, 0);
  const Box b = to_original({0, 0, 240, 120}, *g);
  EXPECT_FLOAT_EQ(b.x1, 80);  // (0 + 40) * 2
  EXPECT_FLOAT_EQ(b.x2, 560);
  EXPECT_FLOAT_EQ(b.y2, 240);
  // Boxes reaching past the input are clamped to the image.
  const Box c = to_original({-10, -10, 250, 250}, *g);
  EXPECT_FLOAT_EQ(c.x1, 60);
  EXPECT_FLOAT_EQ(c.y1, 0);
  EXPECT_FLOAT_EQ(c.x2, 580);
  EXPECT_FLOAT_EQ(c.y2, 480);
}

TEST(PipelineYolo, PlainResizeScalesBothAxes) {
  // A square image resized to the square input: no crop, the same factor on both axes.
  io::ImagePreprocess p;
  p.resize_shorter = 100;
  auto g = io::preprocess_geometry(400, 400, p);
  ASSERT_TRUE(g.is_ok());
  const Box b = to_original({10, 20, 30, 40}, *g);
  EXPECT_FLOAT_EQ(b.x1, 40);
  EXPECT_FLOAT_EQ(b.y1, 80);
  EXPECT_FLOAT_EQ(b.x2, 120);
  EXPECT_FLOAT_EQ(b.y2, 160);
  p.crop_height = p.crop_width = 200;
  EXPECT_FALSE(io::preprocess_geometry(400, 400, p).is_ok());  // the crop does not fit
}

}  // namespace pipeline_postprocess_test
}  // namespace kiln::cli::pipeline
