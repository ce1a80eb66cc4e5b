// INT8 through the real binary: kiln calibrate -> kiln build --int8 --calib (kiln's file and a
// TensorRT cache) -> kiln inspect / kiln exec, and the precision flags' errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/npy.h"
#include "kiln_process.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace int8_build_test {

namespace fs = std::filesystem;
using testing::expect_out;
using testing::OnnxBuilder;

class Int8Build : public ::testing::Test {
 protected:
  void SetUp() override {
    const OnnxBuilder b =
        testing::conv_relu_conv_model({-1, 3, 8, 8}, {"batch", "", "", ""}, 0.2f, 0.3f);
    model_ = b.write(dir_.path()).string();
    fs::create_directories(dir_.path() / "data");
    Tensor t(DType::kF32, {6, 3, 8, 8});
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(0.37f * i);
    EXPECT_TRUE(io::write_npy(dir_.path() / "data" / "x.npy", t).is_ok());
    calib_ = path("m.calib");
    trt_cache_ = path("m.cache");
    const auto r =
        testing::run_kiln("calibrate --onnx=" + model_ + " --data=" + path("data") + " -o " +
                          calib_ + " --algo=minmax --export-trt-cache=" + trt_cache_);
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  std::string build(const std::string& flags, const std::string& plan = "m.plan") const {
    return "build --onnx=" + model_ + " --saveEngine=" + path(plan) + " --shapes=x:2x3x8x8 " +
           "--builderOptimizationLevel=0 " + flags;
  }
  testing::TempDir dir_;
  std::string model_, calib_, trt_cache_;
};

TEST_F(Int8Build, CalibratedBuildRunsInInt8AndInspectSaysWhy) {
  expect_out(testing::run_kiln(build("--int8 --calib=" + calib_)), 0,
             {"int8: 2 layers in INT8, 0 left in float", "layer precisions: fp32->uint8 1, int8 2",
              "qconv."});
  expect_out(testing::run_kiln("inspect " + path("m.plan")), 0,
             {"kiln.QConv", "int8", "precision: int8: input 'x' as uint8", "writes uint8"});
  // TensorRT's cache carries the same ranges.
  expect_out(testing::run_kiln(build("--int8 --calib=" + trt_cache_, "t.plan")), 0,
             {"int8: 2 layers in INT8", "ranges from TRT-8601-MinMaxCalibration"});
}

TEST_F(Int8Build, ExecReportsInt8InItsSummary) {
  const std::string summary = path("s.json");
  expect_out(testing::run_kiln("exec --onnx=" + model_ + " --shapes=x:1x3x8x8 --int8 --calib=" +
                               calib_ + " --iterations=3 --duration=0 --warmUp=0 " +
                               "--builderOptimizationLevel=0 --exportSummary=" + summary),
             0, {"Latency:", "Precision: FP32+INT8", "Calibration: " + calib_});
  EXPECT_NE(testing::read_text(summary).find("\"precision\": \"int8\""), std::string::npos);
  expect_out(testing::run_kiln("exec --onnx=" + model_ + " --shapes=x:1x3x8x8 --int8 --calib=" +
                               calib_ + " --int8WeightBits=7 --iterations=3 --duration=0 " +
                               "--warmUp=0 --builderOptimizationLevel=0 --verbose"),
             0, {"int8: 7-bit weights", "Latency:"});
  expect_out(testing::run_kiln("exec --onnx=" + model_ + " --int8 --int8WeightBits=9"), 1,
             {"--int8WeightBits"});
}

TEST_F(Int8Build, LayerPrecisionsKeepALayerInFloat) {
  expect_out(testing::run_kiln(build("--int8 --calib=" + calib_ +
                                     " --layerPrecisions=conv2:fp32 --precisionConstraints=obey")),
             0, {"int8: 1 layers in INT8, 1 left in float"});
  expect_out(testing::run_kiln(build("--int8 --calib=" + calib_ + " --layerPrecisions=conv2:fp32")),
             0,
             {"--layerPrecisions is ignored without --precisionConstraints", "2 layers in INT8"});
}

// --int8WeightBits=7: the build log and kiln inspect say so; without --int8 it is a warning.
TEST_F(Int8Build, SevenBitWeightsAreLoggedAndInspected) {
  expect_out(testing::run_kiln(build("--int8 --calib=" + calib_ + " --int8WeightBits=7")), 0,
             {"int8: 7-bit weights ([-63, 63], --int8WeightBits=7)", "2 layers in INT8"});
  expect_out(testing::run_kiln("inspect " + path("m.plan")), 0, {"weights in [-63, 63]"});
  expect_out(testing::run_kiln(build("--int8WeightBits=7", "f.plan")), 0,
             {"[W] --int8WeightBits is unused without --int8 or --best"});
}

TEST_F(Int8Build, PlaceholderRangesWarn) {
  expect_out(testing::run_kiln(build("--int8")), 0,
             {"[W] --int8 without calibration: placeholder ranges"});
}

TEST_F(Int8Build, ErrorsNameTheFlagAndWriteNoEngine) {
  expect_out(testing::run_kiln(build("--int8 --calib=" + path("missing.calib"))), 1,
             {"--calib=", "missing.calib"});
  expect_out(testing::run_kiln(build("--int8 --precisionConstraints=strict")), 1,
             {"none, prefer or obey", "'strict'"});
  expect_out(testing::run_kiln(build("--int8 --layerPrecisions=conv1:fp16 "
                                     "--precisionConstraints=obey")),
             1, {"layer 'conv1'", "fp16", "obey"});
  expect_out(testing::run_kiln(build("--int8 --int8WeightBits=6")), 1,
             {"--int8WeightBits=6", "8 or 7"});
  std::ofstream(path("bad.calib")) << "not a calibration";
  expect_out(testing::run_kiln(build("--int8 --calib=" + path("bad.calib"))), 1, {"bad.calib"});
  EXPECT_FALSE(fs::exists(path("m.plan")));
}

TEST_F(Int8Build, CalibrationOfAnotherModelWarns) {
  OnnxBuilder other;
  other.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).output("y");
  other.node("Relu", {"x"}, {"y"}, "relu");
  fs::create_directories(dir_.path() / "other");
  const std::string other_model = other.write(dir_.path() / "other").string();
  expect_out(testing::run_kiln("build --onnx=" + other_model + " --saveEngine=" + path("o.plan") +
                               " --int8 --calib=" + calib_),
             0, {"was made from another model"});
}

}  // namespace int8_build_test
}  // namespace kiln
