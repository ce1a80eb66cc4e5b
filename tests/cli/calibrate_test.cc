// `kiln calibrate` through the real binary: .npy and image data, the calibration file and the
// TensorRT cache it writes, and its errors.
#include <gtest/gtest.h>
#include <stb/stb_image_write.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/npy.h"
#include "kiln_process.h"
#include "quant/calibration_file.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace calibrate_test {

namespace fs = std::filesystem;
using testing::OnnxBuilder;
constexpr int kFloat = onnx::TensorProto::FLOAT;

class Calibrate : public ::testing::Test {
 protected:
  void SetUp() override {
    // x[batch,3,8,8] -> Conv(3->4, 3x3, pad 1) -> Relu -> y
    OnnxBuilder b;
    b.input("x", kFloat, {-1, 3, 8, 8}, {"batch", "", "", ""}).output("y");
    std::vector<float> w(4 * 3 * 9);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * std::sin(static_cast<float>(i));
    b.initializer("w", {4, 3, 3, 3}, w);
    auto& conv = b.node("Conv", {"x", "w"}, {"c"}, "conv");
    testing::set_attr_ints(conv, "pads", {1, 1, 1, 1});
    b.node("Relu", {"c"}, {"y"}, "relu");
    model_ = b.write(dir_.path()).string();
    data_ = dir_.path() / "data";
    fs::create_directories(data_);
  }
  // Writes `n` samples of [3,8,8] with values i * step - 1 into one .npy file; returns max |x|.
  float write_samples(const std::string& file, int64_t n, float step, bool batched) {
    Dims dims = batched ? Dims{n, 3, 8, 8} : Dims{3, 8, 8};
    Tensor t(DType::kF32, dims);
    float amax = 0;
    for (int64_t i = 0; i < t.numel(); ++i) {
      t.data<float>()[i] = static_cast<float>(i % 50) * step - 1.0f;
      amax = std::max(amax, std::fabs(t.data<float>()[i]));
    }
    EXPECT_TRUE(io::write_npy(data_ / file, t).is_ok());
    return amax;
  }
  testing::TempDir dir_;
  std::string model_;
  fs::path data_;
};

TEST_F(Calibrate, NpyDataMinMaxRecordsEveryTensorAndExportsTensorRtsCache) {
  const float a1 = write_samples("a.npy", 1, 0.01f, false);
  const float a2 = write_samples("b.npy", 4, 0.1f, true);
  const std::string calib = (dir_.path() / "m.calib").string();
  const std::string trt = (dir_.path() / "m.cache").string();
  const auto r =
      testing::run_kiln("calibrate --onnx=" + model_ + " --data=" + data_.string() + " -o " +
                        calib + " --algo=minmax --batch=2 --export-trt-cache=" + trt);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("5 samples"), std::string::npos) << r.out;
  auto c = quant::read_calibration(calib);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->samples, 5);
  EXPECT_EQ(c->method.algo, quant::CalibrationAlgo::kMinMax);
  ASSERT_TRUE(c->tensors.count("x"));
  ASSERT_TRUE(c->tensors.count("y"));  // the fused conv + relu's output keeps the model's name
  EXPECT_FLOAT_EQ(static_cast<float>(c->tensors.at("x").amax), std::max(a1, a2));
  EXPECT_EQ(c->tensors.at("x").stats->total(), 5u * 3 * 8 * 8);
  EXPECT_GE(c->tensors.at("y").stats->min(), 0.0f);  // after ReLU
  EXPECT_FALSE(c->model_hash.empty());
  auto t = quant::read_calibration(trt);
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_NE(t->origin.find("MinMaxCalibration"), std::string::npos);
  EXPECT_NEAR(t->tensors.at("x").amax, c->tensors.at("x").amax, 1e-5);
}

// Two convolutions in a row: an engine with the blocked layout would compute the tensor between
// them only as its blocked twin ("m.nchw16c"). The calibration engine keeps NCHW, so that tensor
// has a range under its own name, over its 8 real channels, and no blocked name is recorded.
TEST_F(Calibrate, TensorsBetweenBlockedConvolutionsKeepTheirNames) {
  OnnxBuilder b;
  b.input("x", kFloat, {-1, 3, 8, 8}, {"batch", "", "", ""}).output("y");
  std::vector<float> w1(8 * 3 * 9), w2(8 * 8 * 9);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.1f * std::sin(static_cast<float>(i));
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.05f * std::cos(static_cast<float>(i));
  b.initializer("w1", {8, 3, 3, 3}, w1).initializer("w2", {8, 8, 3, 3}, w2);
  testing::set_attr_ints(b.node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"m"}, "relu1");
  testing::set_attr_ints(b.node("Conv", {"m", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  b.node("Relu", {"c2"}, {"y"}, "relu2");
  const std::string model = b.write(dir_.path(), "chain.onnx").string();
  write_samples("a.npy", 3, 0.05f, true);
  const std::string calib = (dir_.path() / "chain.calib").string();
  const auto r = testing::run_kiln("calibrate --onnx=" + model + " --data=" + data_.string() +
                                   " -o " + calib + " --algo=minmax");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto c = quant::read_calibration(calib);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_TRUE(c->tensors.count("m")) << r.out;
  EXPECT_EQ(c->tensors.at("m").stats->total(), 3u * 8 * 8 * 8);
  for (const auto& [name, t] : c->tensors) {
    EXPECT_EQ(name.find("nchw16c"), std::string::npos) << name;
  }
}

TEST_F(Calibrate, ImagesArePreprocessedAndTheDataHashFollowsTheSpec) {
  std::vector<unsigned char> px(20 * 16 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<unsigned char>(i * 7 % 256);
  ASSERT_NE(stbi_write_png((data_ / "a.png").string().c_str(), 20, 16, 3, px.data(), 20 * 3), 0);
  ASSERT_NE(stbi_write_png((data_ / "b.png").string().c_str(), 20, 16, 3, px.data(), 20 * 3), 0);
  const std::string calib = (dir_.path() / "m.calib").string();
  const std::string base =
      "calibrate --onnx=" + model_ + " --data=" + data_.string() + " -o " + calib;
  auto r = testing::run_kiln(base + " --resize=8 --mean=0,0,0 --std=1,1,1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto c = quant::read_calibration(calib);
  ASSERT_TRUE(c.is_ok());
  // Values are pixels / 255 with a zero mean and unit std: within [0, 1].
  EXPECT_LE(c->tensors.at("x").amax, 1.0);
  EXPECT_GT(c->tensors.at("x").amax, 0.1);
  const std::string hash = c->data_hash;
  r = testing::run_kiln(base + " --resize=8 --channelOrder=BGR");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(quant::read_calibration(calib)->data_hash, hash);
}

TEST_F(Calibrate, OneNpyFileIsDataToo) {
  const float amax = write_samples("batch.npy", 3, 0.05f, true);
  const std::string calib = (dir_.path() / "m.calib").string();
  const auto r =
      testing::run_kiln("calibrate --onnx=" + model_ + " --data=" + (data_ / "batch.npy").string() +
                        " -o " + calib + " --algo=minmax");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto c = quant::read_calibration(calib);
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  EXPECT_EQ(c->samples, 3);
  EXPECT_FLOAT_EQ(static_cast<float>(c->tensors.at("x").amax), amax);
}

TEST_F(Calibrate, ErrorsNameTheProblemAndWriteNothing) {
  const std::string calib = (dir_.path() / "m.calib").string();
  const std::string base = "calibrate --onnx=" + model_ + " -o " + calib;
  auto r = testing::run_kiln(base + " --data=" + (dir_.path() / "none").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("is neither a folder nor a .npy file"), std::string::npos) << r.out;
  r = testing::run_kiln(base + " --data=" + data_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("has no images"), std::string::npos) << r.out;
  Tensor wrong(DType::kF32, {3, 4, 4});
  ASSERT_TRUE(io::write_npy(data_ / "w.npy", wrong).is_ok());
  r = testing::run_kiln(base + " --data=" + data_.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("w.npy"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3x4x4; the model's input needs 3x8x8"), std::string::npos) << r.out;
  r = testing::run_kiln(base + " --data=" + data_.string() + " --algo=kl");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(calib));
}

}  // namespace calibrate_test
}  // namespace kiln
