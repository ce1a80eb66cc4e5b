// kiln quantize through the real binary: the QDQ model it writes passes ONNX's checker, `kiln
// build` of it (explicit path) runs the same layers in INT8 as `kiln build --int8 --calib` of the
// float model, with close outputs; and its errors. ONNX Runtime runs of the written models:
// tests/ort/.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "io/npy.h"
#include "kiln/kiln.h"
#include "kiln_process.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"
#include "testing/onnx_builder.h"
#include "testing/qdq_models.h"

namespace kiln {
namespace quantize_test {

namespace fs = std::filesystem;
using testing::expect_out;
using testing::OnnxBuilder;

class Quantize : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = testing::write_residual_test_model(dir_.path());
    fs::create_directories(dir_.path() / "data");
    Tensor t(DType::kF32, {8, 3, 8, 8});
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = std::sin(0.37f * i);
    ASSERT_TRUE(io::write_npy(path("data/x.npy"), t).is_ok());
    calib_ = path("m.calib");
    const auto r = testing::run_kiln("calibrate --onnx=" + model_ + " --data=" + path("data") +
                                     " -o " + calib_ + " --algo=minmax");
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  testing::KilnRun quantize(const std::string& flags) const {
    return testing::run_kiln("quantize --onnx=" + model_ + " --calib=" + calib_ + " " + flags);
  }
  testing::KilnRun build(const std::string& onnx, const std::string& plan,
                         const std::string& flags) const {
    return testing::run_kiln("build --onnx=" + onnx + " --saveEngine=" + path(plan) +
                             " --shapes=x:2x3x8x8 --builderOptimizationLevel=0 " + flags);
  }
  // The names of the layers `kiln inspect` lists as kiln.QConv / kiln.QGemm.
  std::set<std::string> int8_layers(const std::string& plan) const {
    const auto r = testing::run_kiln("inspect " + path(plan));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    std::set<std::string> names;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("(kiln.QConv)") == std::string::npos &&
          line.find("(kiln.QGemm)") == std::string::npos) {
        continue;
      }
      const size_t start = line.find("] ") + 2;
      names.insert(line.substr(start, line.find(" (kiln.Q") - start));
    }
    return names;
  }
  Tensor run_engine(const std::string& plan, const Tensor& x) const {
    Result<Engine> e = Runtime::load(path(plan));
    EXPECT_TRUE(e.is_ok()) << e.status().to_string();
    if (!e.is_ok()) return Tensor();
    Result<ExecutionContext> ctx = e->create_execution_context();
    EXPECT_TRUE(ctx.is_ok()) << ctx.status().to_string();
    if (!ctx.is_ok()) return Tensor();
    Result<std::vector<Tensor>> out = ctx->run({{"x", x}});
    EXPECT_TRUE(out.is_ok()) << out.status().to_string();
    return out.is_ok() ? out->at(0) : Tensor();
  }
  testing::TempDir dir_;
  std::string model_, calib_;
};

double quantize_test_cosine(const Tensor& a, const Tensor& b) {
  if (a.numel() != b.numel() || a.dtype() != DType::kF32 || b.dtype() != DType::kF32) return 0;
  double ab = 0, aa = 0, bb = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    ab += x * y, aa += x * x, bb += y * y;
  }
  return ab / std::sqrt(aa * bb + 1e-30);
}

TEST_F(Quantize, WritesACheckedQdqModelThatBuildsTheSameInt8Layers) {
  expect_out(
      quantize("-o " + path("m.qdq.onnx")), 0,
      {"3 layers with int8 weights", "1 residual Add inputs", "QDQ model (int8 activations"});
  onnx::ModelProto m;
  std::ifstream in(path("m.qdq.onnx"), std::ios::binary);
  ASSERT_TRUE(m.ParseFromIstream(&in));
  EXPECT_NO_THROW(onnx::checker::check_model(m));
  std::multiset<std::string> ops;
  for (const auto& n : m.graph().node()) ops.insert(n.op_type());
  EXPECT_EQ(ops.count("BatchNormalization"), 0u);  // folded into conv2's weights
  EXPECT_EQ(ops.count("Conv"), 2u);
  EXPECT_EQ(ops.count("Relu"), 2u);
  EXPECT_EQ(ops.count("Add"), 1u);
  EXPECT_EQ(ops.count("QuantizeLinear"), 3u);  // x, r1 (conv2 and the residual), the Gemm's input
  // DQ: 3 activations, 3 weights; int8 files keep float biases (TensorRT takes no int32 DQ).
  EXPECT_EQ(ops.count("DequantizeLinear"), 6u);
  for (const auto& n : m.graph().node()) {
    if (n.op_type() != "Relu") continue;  // nothing between a convolution and its activation
    EXPECT_NE(n.input(0).find("QuantizeLinear"), 0u);
  }

  expect_out(build(model_, "implicit.plan", "--int8 --calib=" + calib_), 0, {"3 layers in INT8"});
  expect_out(build(path("m.qdq.onnx"), "explicit.plan", ""), 0,
             {"3 layers in INT8", "the model's QuantizeLinear/DequantizeLinear scales"});
  const std::set<std::string> implicit = int8_layers("implicit.plan");
  EXPECT_EQ(implicit, (std::set<std::string>{"conv1", "conv2", "fc"}));
  EXPECT_EQ(int8_layers("explicit.plan"), implicit);
  Tensor x(DType::kF32, {2, 3, 8, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(0.21f * i);
  EXPECT_GE(quantize_test_cosine(run_engine("explicit.plan", x), run_engine("implicit.plan", x)),
            0.999);
}

TEST_F(Quantize, Uint8ActivationsGiveKilnsImplicitEngineExactly) {
  // uint8: int32 biases (conv2's comes from the folded BN), and pairs on INT8 outputs read by
  // float layers (r2, read by the pooling) and on conv2's own output before its residual Add.
  expect_out(quantize("-o " + path("u.qdq.onnx") + " --activationType=uint8"), 0,
             {"5 activation Q/DQ pairs", "3 int32 biases", "QDQ model (uint8 activations"});
  expect_out(build(model_, "implicit.plan", "--int8 --calib=" + calib_), 0, {"3 layers in INT8"});
  expect_out(build(path("u.qdq.onnx"), "explicit.plan", ""), 0, {"3 layers in INT8"});
  Tensor x(DType::kF32, {2, 3, 8, 8});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(0.21f * i);
  EXPECT_GE(quantize_test_cosine(run_engine("explicit.plan", x), run_engine("implicit.plan", x)),
            0.99999);
}

TEST_F(Quantize, LayersKeptInFloatGetNoQdq) {
  expect_out(quantize("-o " + path("p.qdq.onnx") +
                      " --layerPrecisions=fc:fp32 --precisionConstraints=obey"),
             0, {"2 layers with int8 weights", "2 layers in INT8, 1 left in float"});
  expect_out(build(path("p.qdq.onnx"), "p.plan", ""), 0, {"2 layers in INT8"});
  EXPECT_EQ(int8_layers("p.plan"), (std::set<std::string>{"conv1", "conv2"}));
}

TEST_F(Quantize, ErrorsNameTheProblemAndWriteNothing) {
  const std::string out = path("e.qdq.onnx");
  const testing::KilnRun no_calib = testing::run_kiln("quantize --onnx=" + model_ + " -o " + out);
  EXPECT_NE(no_calib.exit_code, 0);
  EXPECT_NE(no_calib.out.find("--calib"), std::string::npos) << no_calib.out;
  expect_out(testing::run_kiln("quantize --onnx=" + model_ + " --calib=" + path("none.calib") +
                               " -o " + out),
             1, {"--calib=", "none.calib"});
  expect_out(quantize("-o " + path("no/such/dir/m.onnx")), 1,
             {"is not an existing folder", "no/such/dir"});
  expect_out(quantize("-o " + path("m.calib/m.onnx")), 1, {"is not an existing folder"});
  expect_out(quantize("-o " + path("data")), 1, {"is a folder"});
  expect_out(quantize("-o " + model_), 1, {"would overwrite the input model"});
  expect_out(quantize("-o " + out + " --activationType=int4"), 1, {"'int4'", "int8 or uint8"});
  expect_out(quantize("-o " + out + " --layerPrecisions=conv1:fp16 --precisionConstraints=obey"), 1,
             {"layer 'conv1'", "fp16", "obey"});
  std::ofstream(path("bad.calib")) << "not a calibration";
  expect_out(testing::run_kiln("quantize --onnx=" + model_ + " --calib=" + path("bad.calib") +
                               " -o " + out),
             1, {"bad.calib"});
  EXPECT_FALSE(fs::exists(out));
  // A QDQ model is already quantized.
  expect_out(quantize("-o " + path("m.qdq.onnx")), 0, {});
  expect_out(testing::run_kiln("quantize --onnx=" + path("m.qdq.onnx") + " --calib=" + calib_ +
                               " -o " + out),
             1, {"already holds QuantizeLinear/DequantizeLinear"});
  EXPECT_FALSE(fs::exists(out));
  // An output that cannot be written: a read-only folder (root ignores permissions: skip that
  // part then).
  fs::create_directories(path("ro"));
  fs::permissions(path("ro"), fs::perms::owner_read | fs::perms::owner_exec);
  if (std::ofstream(path("ro/probe")).good()) {
    fs::remove(path("ro/probe"));
  } else {
    expect_out(quantize("-o " + path("ro/m.qdq.onnx")), 1, {"ro/m.qdq.onnx"});
  }
  fs::permissions(path("ro"), fs::perms::owner_all);
}

TEST_F(Quantize, OpsetsBelow13AreRefused) {
  OnnxBuilder old(12, 7);
  old.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).output("y");
  old.initializer("w", {4, 3, 1, 1}, testing::test_wave(12, 0.5f, 0.3f));
  old.node("Conv", {"x", "w"}, {"y"}, "conv");
  fs::create_directories(dir_.path() / "old");
  const std::string old_model = old.write(dir_.path() / "old").string();
  expect_out(testing::run_kiln("quantize --onnx=" + old_model + " --calib=" + calib_ + " -o " +
                               path("old.qdq.onnx")),
             1, {"opset 12", "opset 13 or newer"});
  EXPECT_FALSE(fs::exists(path("old.qdq.onnx")));
}

TEST_F(Quantize, OpsetsTheCheckerDoesNotKnowAreWrittenWithAWarning) {
  OnnxBuilder newer(18, 9);
  newer.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).output("y");
  newer.initializer("w", {4, 3, 1, 1}, testing::test_wave(12, 0.5f, 0.3f));
  newer.node("Conv", {"x", "w"}, {"y"}, "conv");
  fs::create_directories(dir_.path() / "newer");
  const std::string newer_model = newer.write(dir_.path() / "newer").string();
  expect_out(testing::run_kiln("quantize --onnx=" + newer_model + " --calib=" + calib_ + " -o " +
                               path("n.qdq.onnx")),
             0, {"is written unchecked", "opset 18"});
  expect_out(testing::run_kiln("build --onnx=" + path("n.qdq.onnx") +
                               " --saveEngine=" + path("n.plan") + " --builderOptimizationLevel=0"),
             0, {"1 layers in INT8"});
}

TEST_F(Quantize, CalibrationOfAnotherModelWarns) {
  OnnxBuilder other;
  other.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8}).output("y");
  other.initializer("w", {4, 3, 1, 1}, testing::test_wave(12, 0.5f, 0.3f));
  other.node("Conv", {"x", "w"}, {"y"}, "conv");
  fs::create_directories(dir_.path() / "other");
  const std::string other_model = other.write(dir_.path() / "other").string();
  expect_out(testing::run_kiln("quantize --onnx=" + other_model + " --calib=" + calib_ + " -o " +
                               path("o.qdq.onnx")),
             0, {"was made from another model"});
}

}  // namespace quantize_test
}  // namespace kiln
