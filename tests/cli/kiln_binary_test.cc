// Runs the real `kiln` binary as a user would and checks exit codes, messages and written files.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kiln_process.h"
#include "list_ops.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace kiln_binary_test {

using testing::OnnxBuilder;
using testing::TempDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

using RunResult = testing::KilnRun;
using testing::run_kiln;

class KilnBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    OnnxBuilder b;
    b.input("x", kFloat, {-1, 4}, {"batch", ""}).output("y");
    b.node("Relu", {"x"}, {"y"}, "relu1");
    model_ = b.write(dir_.path()).string();
  }
  void expect_failure(const std::string& args, std::vector<std::string> fragments) {
    RunResult r = run_kiln(args);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    for (const auto& f : fragments) {
      EXPECT_NE(r.out.find(f), std::string::npos) << "'" << f << "' not in:\n" << r.out;
    }
  }
  TempDir dir_;
  std::string model_;
};

TEST_F(KilnBinary, RunsAModelAndExportsOutputs) {
  const std::string json = (dir_.path() / "out.json").string();
  RunResult r = run_kiln("run --onnx=" + model_ + " --shapes=x:2x4 --exportOutput=" + json);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("output 'y': float32[2x4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reference executor"), std::string::npos) << r.out;
  std::ifstream in(json);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("\"dimensions\""), std::string::npos) << ss.str();
}

TEST_F(KilnBinary, WarnsAndDefaultsDynamicDims) {
  RunResult r = run_kiln("run --onnx=" + model_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("dynamic dims (batch)"), std::string::npos) << r.out;
}

TEST_F(KilnBinary, BadInputsGiveNamedErrorsAndExitCode1) {
  expect_failure("run --onnx=" + model_ + " --shapes=x:2x5",
                 {"input 'x'", "2x5", "float32[batch,4]"});
  expect_failure("run --onnx=" + model_ + " --shapes=nope:1x4", {"no input 'nope'"});
  expect_failure("run --onnx=" + model_ + " --shapes=x:1x-4", {"negative"});
  expect_failure("run --onnx=" + model_ + " --shapes=x:4000000000x4000000000x4000000000",
                 {"input 'x'", "overflow"});
  expect_failure("run --onnx=" + (dir_.path() / "missing.onnx").string(), {"does not exist"});
  const auto junk = dir_.path() / "junk.onnx";
  std::ofstream(junk) << "definitely not protobuf";
  expect_failure("run --onnx=" + junk.string(), {"not a valid ONNX model"});
  expect_failure("run --onnx=" + model_ + " --loadInputs=x:" + (dir_.path() / "none.npy").string(),
                 {"none.npy"});
}

TEST_F(KilnBinary, FailedRunWritesNoOutputFile) {
  const auto json = dir_.path() / "out.json";
  RunResult r =
      run_kiln("run --onnx=" + model_ + " --shapes=x:2x5 --exportOutput=" + json.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(std::filesystem::exists(json));
}

TEST_F(KilnBinary, UnknownFlagIsAnErrorNamingIt) {
  RunResult r = run_kiln("run --onnx=" + model_ + " --frobnicate=3");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128) << "crashed: " << r.out;
  EXPECT_NE(r.out.find("frobnicate"), std::string::npos) << r.out;
}

TEST(OperatorsDoc, IsUpToDate) {
  std::ifstream in(std::string(KILN_SOURCE_DIR) + "/docs/operators.md");
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), cli::list_ops_markdown())
      << "docs/operators.md is stale: regenerate with `kiln list-ops --format=md > "
         "docs/operators.md`";
}

}  // namespace kiln_binary_test
}  // namespace kiln
