// FP16 through the real binary: kiln build --fp16 -> kiln inspect (layers labelled fp16 and why),
// the engine file against the FP32 one, kiln exec --fp16's summary and kiln sweep's fp16 engines.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "kiln_process.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace fp16_build_test {

namespace fs = std::filesystem;
using testing::expect_out;
using testing::OnnxBuilder;

class Fp16Build : public ::testing::Test {
 protected:
  void SetUp() override {
    // x[batch,3,8,8] -> Conv(3->8, 3x3) -> Relu -> Flatten -> Gemm(512 -> 64) -> y
    OnnxBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {-1, 3, 8, 8}, {"batch", "", "", ""}).output("y");
    std::vector<float> w1(8 * 3 * 9), wg(512 * 64);
    for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.2f * std::sin(0.9f * static_cast<float>(i));
    for (size_t i = 0; i < wg.size(); ++i) wg[i] = 0.05f * std::cos(0.7f * static_cast<float>(i));
    b.initializer("w1", {8, 3, 3, 3}, w1).initializer("wg", {512, 64}, wg);
    testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
    b.node("Relu", {"c1"}, {"r1"}, "relu1");
    b.node("Flatten", {"r1"}, {"f"}, "flatten");
    b.node("Gemm", {"f", "wg"}, {"y"}, "fc");
    model_ = b.write(dir_.path()).string();
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  std::string build(const std::string& flags, const std::string& plan) const {
    return "build --onnx=" + model_ + " --saveEngine=" + path(plan) + " --shapes=x:1x3x8x8 " +
           "--builderOptimizationLevel=0 " + flags;
  }
  testing::TempDir dir_;
  std::string model_;
};

TEST_F(Fp16Build, BuildLabelsLayersAndHalvesTheWeights) {
  expect_out(testing::run_kiln(build("--fp16", "h.plan")), 0, {"fp16: 2 layers with fp16 weights"});
  expect_out(testing::run_kiln("inspect " + path("h.plan")), 0,
             {"fp16", "precision: fp16: weights stored fp16, computed in fp32"});
  expect_out(testing::run_kiln(build("", "f.plan")), 0, {});
  // 33 KiB of float32 weights: the FP16 file is smaller by at least half of them.
  const double weight_bytes = 4.0 * (8 * 3 * 9 + 512 * 64);
  EXPECT_GE(static_cast<double>(fs::file_size(path("f.plan"))) -
                static_cast<double>(fs::file_size(path("h.plan"))),
            0.45 * weight_bytes);
}

TEST_F(Fp16Build, LayerPrecisionsAndBest) {
  expect_out(testing::run_kiln(
                 build("--fp16 --layerPrecisions=fc:fp32 --precisionConstraints=obey", "o.plan")),
             0, {"fp16: 1 layers with fp16 weights"});
  expect_out(
      testing::run_kiln(build("--layerPrecisions=fc:fp16 --precisionConstraints=obey", "n.plan")),
      1, {"fp16", "has no --fp16", "obey"});
  // --best: INT8 (placeholder ranges here) where it can, fp16 for the rest; no warning about it.
  const testing::KilnRun best = testing::run_kiln(
      build("--best --layerPrecisions=fc:fp16 --precisionConstraints=obey", "b.plan"));
  expect_out(best, 0, {"layer precisions:", "fp16 1", "int8 1"});
  EXPECT_EQ(best.out.find("no fp16 kernels"), std::string::npos) << best.out;
}

TEST_F(Fp16Build, ExecAndSweepReportFp16) {
  const std::string summary = path("s.json");
  expect_out(testing::run_kiln("exec --onnx=" + model_ + " --shapes=x:1x3x8x8 --fp16 " +
                               "--iterations=3 --duration=0 --warmUp=0 " +
                               "--builderOptimizationLevel=0 --exportSummary=" + summary),
             0, {"Latency:"});
  EXPECT_NE(testing::read_text(summary).find("\"precision\": \"fp16\""), std::string::npos);
  const std::string best = path("best.json");
  expect_out(testing::run_kiln("exec --onnx=" + model_ + " --shapes=x:1x3x8x8 --best " +
                               "--layerPrecisions=fc:fp16 --precisionConstraints=obey " +
                               "--iterations=3 --duration=0 --warmUp=0 " +
                               "--builderOptimizationLevel=0 --exportSummary=" + best),
             0, {"Precision: FP32+FP16+INT8"});
  EXPECT_NE(testing::read_text(best).find("\"precision\": \"int8+fp16\""), std::string::npos);
  expect_out(testing::run_kiln("sweep --onnx=" + model_ + " --batch=1 --out=" + path("res") +
                               " --precisions=fp32,fp16 --warmUp=0 --duration=0 --iterations=2"),
             0, {"fp16"});
  bool found = false;
  for (const auto& e : fs::directory_iterator(path("res"))) {
    found |= e.path().filename().string().find("-fp16-b1.json") != std::string::npos;
  }
  EXPECT_TRUE(found) << "no fp16 summary in res/";
}

}  // namespace fp16_build_test
}  // namespace kiln
