// ONNX Runtime (CPU EP, every graph optimization) runs the QDQ models `kiln quantize` writes, and
// agrees with kiln: with kiln's INT8 engine of the same file, and with the float model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "io/npy.h"
#include "kiln/kiln.h"
#include "kiln_process.h"
#include "onnx/onnx_pb.h"
#include "testing/onnx_builder.h"
#include "testing/ort_runtime.h"
#include "testing/qdq_models.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// The library, or a skip outside CI (the install is scripts/test.sh's job); CI must run these.
std::string ort_or_skip_reason(std::string& reason) {
  const std::string lib = testing::ort_library_path();
  if (lib.empty()) {
    reason =
        "ONNX Runtime is not installed: run scripts/test.sh (npm onnxruntime-node into "
        "bench/.cache) or set KILN_ORT_LIB to libonnxruntime.so.1";
  }
  return lib;
}

#define ORT_TEST_LIBRARY(lib)                             \
  std::string ort_reason;                                 \
  const std::string lib = ort_or_skip_reason(ort_reason); \
  if (lib.empty()) {                                      \
    if (std::getenv("CI")) FAIL() << ort_reason;          \
    GTEST_SKIP() << ort_reason;                           \
  }

double ort_test_cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb + 1e-30);
}

std::vector<float> ort_test_values(const Tensor& t) {
  return {t.data<float>(), t.data<float>() + t.numel()};
}

// kiln's engine at `plan` on one input.
std::vector<float> ort_test_kiln_run(const std::string& plan, const std::string& input,
                                     const Tensor& x) {
  Result<Engine> e = Runtime::load(plan);
  EXPECT_TRUE(e.is_ok()) << e.status().to_string();
  if (!e.is_ok()) return {};
  Result<ExecutionContext> ctx = e->create_execution_context();
  EXPECT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  if (!ctx.is_ok()) return {};
  Result<std::vector<Tensor>> out = ctx->run({{input, x}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return out.is_ok() ? ort_test_values(out->at(0)) : std::vector<float>{};
}

void ort_test_kiln(const std::string& args) {
  const testing::KilnRun r = testing::run_kiln(args);
  ASSERT_EQ(r.exit_code, 0) << "kiln " << args << "\n" << r.out;
}

// The op types of the model ONNX Runtime ran, after its optimizations.
std::multiset<std::string> ort_test_op_types(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << path;
  std::multiset<std::string> ops;
  for (const auto& n : m.graph().node()) ops.insert(n.op_type());
  return ops;
}

TEST(OrtQdq, RunsTheResidualModelLikeKiln) {
  ORT_TEST_LIBRARY(lib);
  testing::TempDir dir;
  auto path = [&](const std::string& name) { return (dir.path() / name).string(); };
  const std::string model = testing::write_residual_test_model(dir.path());
  fs::create_directories(dir.path() / "data");
  Tensor calib(DType::kF32, {8, 3, 8, 8});
  for (int64_t i = 0; i < calib.numel(); ++i) calib.data<float>()[i] = std::sin(0.37f * i);
  ASSERT_TRUE(io::write_npy(path("data/x.npy"), calib).is_ok());
  ort_test_kiln("calibrate --onnx=" + model + " --data=" + path("data") + " -o " + path("m.calib") +
                " --algo=minmax");
  for (const std::string type : {"int8", "uint8"}) {
    SCOPED_TRACE(type);
    const std::string qdq = path(type + ".qdq.onnx");
    ort_test_kiln("quantize --onnx=" + model + " --calib=" + path("m.calib") + " -o " + qdq +
                  " --activationType=" + type);
    const std::string shapes = " --shapes=x:4x3x8x8 --builderOptimizationLevel=0";
    ort_test_kiln("build --onnx=" + qdq + " --saveEngine=" + path(type + ".plan") + shapes);
    ort_test_kiln("build --onnx=" + model + " --saveEngine=" + path("fp32.plan") + shapes);
    Tensor x(DType::kF32, {4, 3, 8, 8});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(0.21f * i);
    testing::OrtRunOptions options;
    options.optimized_model_path = path(type + ".ort.onnx");
    Result<std::vector<float>> ort =
        testing::ort_run(lib, qdq, "x", {4, 3, 8, 8}, ort_test_values(x), "y", {4, 5}, options);
    ASSERT_TRUE(ort.is_ok()) << ort.status().to_string();
    const std::vector<float> int8 = ort_test_kiln_run(path(type + ".plan"), "x", x);
    const std::vector<float> fp32 = ort_test_kiln_run(path("fp32.plan"), "x", x);
    EXPECT_GE(ort_test_cosine(*ort, int8), 0.99);
    EXPECT_GE(ort_test_cosine(*ort, fp32), 0.98);
    // ONNX Runtime's integer kernels (uint8 files): conv1's Conv -> Relu -> Q becomes a
    // QLinearConv (Q's zero point 0 lets ONNX Runtime drop the Relu), so does conv2 (a pair on its
    // output before the residual Add), the Gemm a QGemm. int8 files (float biases, Q after the
    // Relu) run in float between DQ and Q there.
    const std::multiset<std::string> ops = ort_test_op_types(options.optimized_model_path);
    if (type == "uint8") {
      EXPECT_EQ(ops.count("QLinearConv"), 2u);
      EXPECT_EQ(ops.count("QGemm"), 1u);
    }
  }
}

// models/digits end to end: calibrate -> quantize -> ONNX Runtime, top-1 as kiln's INT8 engine.
TEST(OrtQdq, DigitsTop1AgreesWithKiln) {
  ORT_TEST_LIBRARY(lib);
  testing::TempDir dir;
  auto path = [&](const std::string& name) { return (dir.path() / name).string(); };
  const fs::path digits = fs::path(KILN_SOURCE_DIR) / "models/digits";
  const std::string model = (digits / "digits.onnx").string();
  ort_test_kiln("calibrate --onnx=" + model + " --data=" + (digits / "calib_x.npy").string() +
                " -o " + path("d.calib"));
  ort_test_kiln("quantize --onnx=" + model + " --calib=" + path("d.calib") + " -o " +
                path("d.qdq.onnx"));
  constexpr int64_t kSamples = 128;
  ort_test_kiln("build --onnx=" + path("d.qdq.onnx") + " --saveEngine=" + path("d.plan") +
                " --shapes=input:128x1x16x16 --builderOptimizationLevel=0");
  ort_test_kiln("build --onnx=" + model + " --int8 --calib=" + path("d.calib") + " --saveEngine=" +
                path("implicit.plan") + " --shapes=input:128x1x16x16 --builderOptimizationLevel=0");
  Result<Tensor> test_x = io::read_npy((digits / "test_x.npy").string());
  Result<Tensor> test_y = io::read_npy((digits / "test_y.npy").string());
  ASSERT_TRUE(test_x.is_ok() && test_y.is_ok());
  Tensor x(DType::kF32, {kSamples, 1, 16, 16});
  std::copy_n(test_x->data<float>(), x.numel(), x.data<float>());
  Result<std::vector<float>> ort =
      testing::ort_run(lib, path("d.qdq.onnx"), "input", {kSamples, 1, 16, 16}, ort_test_values(x),
                       "logits", {kSamples, 10});
  ASSERT_TRUE(ort.is_ok()) << ort.status().to_string();
  const std::vector<float> kiln = ort_test_kiln_run(path("d.plan"), "input", x);
  ASSERT_EQ(kiln.size(), ort->size());
  int agree = 0, ort_correct = 0;
  for (int64_t s = 0; s < kSamples; ++s) {
    auto top1 = [&](const std::vector<float>& v) {
      const auto* row = v.data() + s * 10;
      return std::max_element(row, row + 10) - row;
    };
    agree += top1(*ort) == top1(kiln);
    ort_correct += top1(*ort) == test_y->data<int64_t>()[s];
  }
  std::printf("digits (%lld held-out samples): ONNX Runtime top-1 %d, agreement with kiln %d\n",
              static_cast<long long>(kSamples), ort_correct, agree);
  EXPECT_GE(agree, kSamples - 2) << "top-1 agreement of ONNX Runtime with kiln";
  EXPECT_GE(ort_correct, kSamples * 95 / 100) << "ONNX Runtime's top-1 on the held-out digits";
  EXPECT_GE(ort_test_cosine(*ort, kiln), 0.99);
  // kiln's explicit engine of the QDQ file against its implicit engine of the float model.
  EXPECT_GE(ort_test_cosine(kiln, ort_test_kiln_run(path("implicit.plan"), "input", x)), 0.999);
}

}  // namespace
}  // namespace kiln
