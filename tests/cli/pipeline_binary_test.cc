// `kiln pipeline` through the real binary: a classifier over real photos (python3-skimage's data
// folder), a YOLOv8-shaped detector over generated images, the JSON export against
// docs/pipeline.schema.json, and the errors (never a crash, never a half-written JSON).
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "json_schema.h"
#include "kiln_process.h"
#include "testing/model_set.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace pipeline_binary_test {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::OnnxBuilder;
constexpr int kPipeFloat = onnx::TensorProto::FLOAT;
const fs::path kSkimageData = "/usr/lib/python3/dist-packages/skimage/data";

std::vector<float> pipeline_weights(size_t n, float scale) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = scale * std::sin(0.37f * static_cast<float>(i));
  return w;
}

void write_test_png(const fs::path& path, int w, int h) {
  std::vector<unsigned char> px(static_cast<size_t>(w) * h * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<unsigned char>((i * 7) % 251);
  ASSERT_TRUE(stbi_write_png(path.string().c_str(), w, h, 3, px.data(), w * 3));
}

class Pipeline : public ::testing::Test {
 protected:
  void SetUp() override {
    images_ = dir_.path() / "images";
    fs::create_directories(images_);
  }
  fs::path path(const std::string& name) const { return dir_.path() / name; }
  // x[1,3,32,32] -> Conv(3->5, 32x32) -> Flatten -> logits[1,5], built into cls.plan.
  std::string classifier() {
    OnnxBuilder b;
    b.input("x", kPipeFloat, {1, 3, 32, 32}).output("logits");
    b.initializer("w", {5, 3, 32, 32}, pipeline_weights(5 * 3 * 32 * 32, 0.01f));
    b.node("Conv", {"x", "w"}, {"c"}, "conv");
    b.node("Flatten", {"c"}, {"logits"}, "flatten");
    return build(b, "cls");
  }
  // x[1,3,32,32] -> Conv(3->6, 8x8 stride 8) -> Reshape [1,6,16] -> Sigmoid -> Mul 32: a YOLOv8
  // output with 2 classes and 16 anchors (boxes in 0..32 input pixels, probabilities 0..32 too).
  std::string detector() {
    OnnxBuilder b;
    b.input("x", kPipeFloat, {1, 3, 32, 32}).output("out");
    b.initializer("w", {6, 3, 8, 8}, pipeline_weights(6 * 3 * 8 * 8, 0.05f));
    b.initializer_i64("shape", {3}, {1, 6, 16});
    b.initializer("k", {}, {32.0f});
    auto& conv = b.node("Conv", {"x", "w"}, {"c"}, "conv");
    testing::set_attr_ints(conv, "strides", {8, 8});
    b.node("Reshape", {"c", "shape"}, {"r"}, "reshape");
    b.node("Sigmoid", {"r"}, {"s"}, "sigmoid");
    b.node("Mul", {"s", "k"}, {"out"}, "scale");
    return build(b, "det");
  }
  std::string build(OnnxBuilder& b, const std::string& name) {
    const fs::path model_dir = dir_.path() / name;
    fs::create_directories(model_dir);
    const std::string onnx = b.write(model_dir).string();
    const std::string plan = path(name + ".plan").string();
    const auto r = testing::run_kiln("build --onnx=" + onnx + " --saveEngine=" + plan +
                                     " --builderOptimizationLevel=0");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return plan;
  }
  bool copy_photos() {
    for (const char* f : {"astronaut.png", "chelsea.png", "coffee.png"}) {
      std::error_code ec;
      fs::copy_file(kSkimageData / f, images_ / f, ec);
      if (ec) return false;
    }
    return true;
  }
  json read_json(const fs::path& p) {
    const std::string text = testing::read_text(p);
    return json::parse(text, nullptr, false);
  }
  void expect_schema(const json& j) {
    const json schema =
        json::parse(testing::read_text(fs::path(KILN_SOURCE_DIR) / "docs/pipeline.schema.json"));
    for (const std::string& e : testing::check_schema(j, schema)) ADD_FAILURE() << e;
  }
  testing::TempDir dir_;
  fs::path images_;
};

TEST_F(Pipeline, ClassifiesRealPhotosAndReportsEveryStage) {
  if (!copy_photos()) GTEST_SKIP() << "python3-skimage's photos are not installed";
  const std::string plan = classifier();
  std::ofstream(path("names.txt")) << "zero\none\ntwo\nthree\nfour\n";
  const fs::path out = path("out.json");
  const auto r =
      testing::run_kiln("pipeline --engine=" + plan + " --images=" + images_.string() +
                        " --topk=3 --labels=" + path("names.txt").string() +
                        " --budget=1us --warmUp=1 --repeat=2 --threads=1 --json=" + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* s :
       {"decode", "preprocess", "inference", "postprocess", "end-to-end", "images/s", "budget: p50",
        "budget: p99", "must shrink", "astronaut.png:"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s << " not in\n" << r.out;
  }
  const json j = read_json(out);
  ASSERT_FALSE(j.is_discarded());
  expect_schema(j);
  ASSERT_EQ(j["images"].size(), 6u);  // 3 photos x 2 passes; the warm-up image left out
  EXPECT_EQ(j["images"][0]["file"], "astronaut.png");
  EXPECT_EQ(j["images"][5]["pass"], 1);
  for (const json& img : j["images"]) {
    ASSERT_EQ(img["top_k"].size(), 3u);
    double sum = 0, last = 2;
    for (const json& c : img["top_k"]) {
      EXPECT_LE(c["score"].get<double>(), last);
      last = c["score"].get<double>();
      sum += last;
      EXPECT_TRUE(c.contains("label"));
    }
    EXPECT_LE(sum, 1.0 + 1e-5);
  }
  EXPECT_EQ(j["statistics"]["images"], 6);
  EXPECT_FALSE(j["budget"]["levels"][1]["meets"].get<bool>());  // 1 us cannot be met
  // The same run with a generous budget meets it.
  const auto ok = testing::run_kiln("pipeline --engine=" + plan + " --images=" + images_.string() +
                                    " --budget=1000s");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("budget: p99 end-to-end"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("meets the"), std::string::npos) << ok.out;
}

TEST_F(Pipeline, DetectsWithAYoloShapedOutputAndMapsBoxesToTheOriginal) {
  const std::string plan = detector();
  write_test_png(images_ / "a.png", 64, 48);  // resized to 43x32, cropped to 32x32
  write_test_png(images_ / "b.png", 40, 40);
  const fs::path out = path("det.json");
  const auto r = testing::run_kiln(
      "pipeline --task=detect --engine=" + plan + " --images=" + images_.string() +
      " --conf=0 --iou=0.5 --maxDetections=4 " + "--json=" + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = read_json(out);
  ASSERT_FALSE(j.is_discarded());
  expect_schema(j);
  ASSERT_EQ(j["images"].size(), 2u);
  const std::pair<int, int> sizes[] = {{64, 48}, {40, 40}};
  for (size_t i = 0; i < 2; ++i) {
    const json& dets = j["images"][i]["detections"];
    EXPECT_GE(dets.size(), 1u);  // --conf=0 keeps every anchor before NMS
    EXPECT_LE(dets.size(), 4u);
    for (const json& d : dets) {
      EXPECT_LT(d["class"].get<int>(), 2);
      const auto box = d["box"].get<std::vector<double>>();
      EXPECT_LE(box[0], box[2]);
      EXPECT_LE(box[1], box[3]);
      EXPECT_LE(box[2], sizes[i].first);
      EXPECT_LE(box[3], sizes[i].second);
    }
  }
  EXPECT_TRUE(j["budget"].is_null());
}

// The exported YOLOv8n (models/export.py yolov8n: 320x320, output 1x84x2100) over real photos:
// skipped when the model set or the photos are not there.
TEST_F(Pipeline, ExportedYolov8nOverRealPhotos) {
  const fs::path onnx = testing::model_dir() / "yolov8n.onnx";
  if (!fs::exists(onnx)) GTEST_SKIP() << "yolov8n not exported (models/export.py yolov8n)";
  if (!copy_photos()) GTEST_SKIP() << "python3-skimage's photos are not installed";
  const std::string plan = path("yolo.plan").string();
  const auto b = testing::run_kiln("build --onnx=" + onnx.string() + " --saveEngine=" + plan +
                                   " --builderOptimizationLevel=0");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  const fs::path out = path("yolo.json");
  const auto r = testing::run_kiln("pipeline --task=detect --engine=" + plan + " --images=" +
                                   images_.string() + " --maxDetections=20 --json=" + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("1x84x2100"), std::string::npos) << r.out;
  const json j = read_json(out);
  ASSERT_FALSE(j.is_discarded());
  expect_schema(j);
  ASSERT_EQ(j["images"].size(), 3u);
  for (const json& img : j["images"]) {
    EXPECT_LE(img["detections"].size(), 20u);
    for (const json& d : img["detections"]) {
      EXPECT_LT(d["class"].get<int>(), 80);
      EXPECT_GE(d["score"].get<double>(), 0.25);  // --conf's default
    }
  }
}

TEST_F(Pipeline, WarmUpCyclesTheFolderAndIsNotTimed) {
  const std::string plan = classifier();
  write_test_png(images_ / "only.png", 36, 36);
  const fs::path out = path("w.json");
  const auto r = testing::run_kiln("pipeline --engine=" + plan + " --images=" + images_.string() +
                                   " --warmUp=3 --json=" + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = read_json(out);
  EXPECT_EQ(j["images"].size(), 1u);
  EXPECT_EQ(j["warm_up"], 3);
}

void expect_pipeline_error(const testing::KilnRun& r, const std::vector<std::string>& fragments) {
  EXPECT_EQ(r.exit_code, 1) << r.out;
  for (const auto& f : fragments) {
    EXPECT_NE(r.out.find(f), std::string::npos) << "'" << f << "' not in:\n" << r.out;
  }
}

TEST_F(Pipeline, ErrorsNameTheFileOrFlagAndWriteNoJson) {
  const std::string plan = classifier();
  const fs::path out = path("never.json");
  const std::string json_flag = " --json=" + out.string();
  const std::string base = "pipeline --engine=" + plan + json_flag;
  expect_pipeline_error(testing::run_kiln(base + " --images=" + path("missing").string()),
                        {"'" + path("missing").string() + "' does not exist"});
  expect_pipeline_error(testing::run_kiln(base + " --images=" + images_.string()),
                        {"has no images"});
  write_test_png(images_ / "good.png", 40, 40);
  std::ofstream(images_ / "bad.jpg") << "not a jpeg";
  expect_pipeline_error(testing::run_kiln(base + " --images=" + images_.string()),
                        {"bad.jpg", "cannot be decoded"});
  fs::remove(images_ / "bad.jpg");
  const std::string ok = base + " --images=" + images_.string();
  expect_pipeline_error(testing::run_kiln(ok + " --task=detect"),
                        {"(1, 4 + classes, anchors)", "'logits' is [1x5]"});
  expect_pipeline_error(testing::run_kiln(ok + " --budget=fast"), {"--budget", "'fast'"});
  expect_pipeline_error(testing::run_kiln(ok + " --budget=-3ms"), {"--budget"});
  expect_pipeline_error(testing::run_kiln(ok + " --conf=1.5"), {"--conf must be in [0, 1]"});
  expect_pipeline_error(testing::run_kiln(ok + " --iou=-0.1"), {"--iou"});
  expect_pipeline_error(testing::run_kiln(ok + " --task=segment"), {"--task"});
  expect_pipeline_error(testing::run_kiln(ok + " --topk=0"), {"--topk"});
  expect_pipeline_error(testing::run_kiln(ok + " --mean=1,2"), {"--mean needs three"});
  expect_pipeline_error(testing::run_kiln("pipeline --engine=" + path("nope.plan").string() +
                                          json_flag + " --images=" + images_.string()),
                        {"nope.plan"});
  // An engine whose input is not an image of rank 4.
  OnnxBuilder b;
  b.input("v", kPipeFloat, {1, 8}).output("y");
  b.node("Relu", {"v"}, {"y"}, "relu");
  const std::string flat = build(b, "flat");
  expect_pipeline_error(
      testing::run_kiln("pipeline --engine=" + flat + json_flag + " --images=" + images_.string()),
      {"rank 4", "'v'"});
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace pipeline_binary_test
}  // namespace kiln
