// `kiln build`, `kiln run --loadEngine` and `kiln inspect` through the real binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/cpu_features.h"
#include "kiln_process.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace engine_commands_test {

namespace fs = std::filesystem;
using testing::OnnxBuilder;
using testing::TempDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

using Output = testing::KilnRun;
constexpr auto kiln = testing::run_kiln;
constexpr auto read_all = testing::read_text;

class EngineCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    // x[batch,2,4,4] -> Conv(1x1) -> Relu -> y: the fusion the verbose log must name.
    OnnxBuilder b;
    b.input("x", kFloat, {-1, 2, 4, 4}, {"batch", "", "", ""}).output("y");
    b.initializer("w", {3, 2, 1, 1}, {0.5f, -1, 2, 0.25f, -0.5f, 1});
    b.node("Conv", {"x", "w"}, {"c"}, "conv_a");
    b.node("Relu", {"c"}, {"y"}, "relu_b");
    model_ = b.write(dir_.path()).string();
    plan_ = (dir_.path() / "m.plan").string();
  }
  void expect(const Output& r, int code, std::vector<std::string> fragments) {
    EXPECT_EQ(r.exit_code, code) << r.out;
    for (const auto& f : fragments) {
      EXPECT_NE(r.out.find(f), std::string::npos) << "'" << f << "' not in:\n" << r.out;
    }
  }
  std::string build_flags() const {
    return "build --onnx=" + model_ + " --saveEngine=" + plan_ +
           " --minShapes=x:1x2x4x4 --optShapes=x:2x2x4x4 --maxShapes=x:4x2x4x4";
  }
  TempDir dir_;
  std::string model_, plan_;
};

TEST_F(EngineCommands, TuningTimesCandidatesAndTheCacheMakesRebuildsFree) {
  const std::string cache = (dir_.path() / "t.cache").string();
  expect(kiln(build_flags() + " --timingCacheFile=" + cache + " --threads=2"), 0,
         {"does not exist yet", "tuning: 1 layer timed", "[I] packing: ", " MiB, in "});
  expect(kiln(build_flags() + " --timingCacheFile=" + cache + " --threads=2"), 0,
         {"times loaded", "tuning: 0 layers timed, 0 times measured"});
  // The timings depend on the thread count: another count is measured afresh.
  expect(kiln(build_flags() + " --timingCacheFile=" + cache + " --threads=1"), 0,
         {"tuning: 1 layer timed"});
  // Every candidate of the contested layer is shown, the chosen one marked.
  expect(kiln("inspect " + plan_), 0,
         {"* fused_conv.", " ms", "- ref.generic", "reference fallback"});
  expect(kiln(build_flags() + " --builderOptimizationLevel=0"), 0, {"0 times measured"});
}

TEST_F(EngineCommands, TuningFlagErrors) {
  expect(kiln(build_flags() + " --tacticSources=-CUDNN"), 1,
         {"unknown tactic source 'CUDNN'", "kiln"});
  expect(kiln(build_flags() + " --builderOptimizationLevel=9"), 105,
         {"--builderOptimizationLevel"});
  std::ofstream(dir_.path() / "bad.cache") << "{";
  expect(kiln(build_flags() + " --timingCacheFile=" + (dir_.path() / "bad.cache").string()), 1,
         {"bad.cache", "not valid JSON"});
  EXPECT_FALSE(fs::exists(plan_));
}

TEST_F(EngineCommands, AnUnknownIsaCapStopsTheBuild) {
  // The cap's error, not an engine built for no CPU features at all (every layer on ref.generic).
  expect(testing::run_kiln_env("KILN_MAX_ISA=sse9", build_flags()), 1,
         {"KILN_MAX_ISA=sse9: unknown ISA cap 'sse9'", "valid values"});
  EXPECT_FALSE(fs::exists(plan_));
}

TEST_F(EngineCommands, BuildRunInspect) {
  expect(kiln(build_flags() + " --verbose"), 0,
         {"fused conv_a + relu_b into kiln.FusedConv 'conv_a'", "engine saved to"});
  const std::string json = (dir_.path() / "out.json").string();
  expect(kiln("run --loadEngine=" + plan_ + " --shapes=x:3x2x4x4 --exportOutput=" + json), 0,
         {"loaded in", "output 'y': float32[3x3x4x4]"});
  EXPECT_NE(read_all(json).find("\"dimensions\""), std::string::npos);
  // No --shapes: the profile's opt shape, as trtexec does.
  expect(kiln("run --loadEngine=" + plan_), 0, {"using 2x2x4x4", "output 'y': float32[2x3x4x4]"});
  expect(kiln("inspect " + plan_), 0,
         {"fused: conv_a + relu_b", "x: min 1x2x4x4 opt 2x2x4x4 max 4x2x4x4", "arena"});
  const Output j = kiln("inspect " + plan_ + " --format=json");
  expect(j, 0, {"\"onnx_nodes\"", "\"tactic\"", "\"arena_bytes\"", "\"packed_only_weight_bytes\""});
  // Untimed, the preferred tactic (kiln's x86 1x1 convolution) packs w (24 bytes): the file keeps
  // only its dims, and inspect says what the packed weights stand in for.
  expect(kiln(build_flags() + " --builderOptimizationLevel=0"), 0, {"engine saved to"});
  expect(kiln("inspect " + plan_), 0,
         {"packed at build: ", "(in place of 24 bytes of weights, stored as dims only)",
          "stored as dims only: 1 tensors)"});
  const Output j0 = kiln("inspect " + plan_ + " --format=json");
  expect(j0, 0, {"\"dims_only_values\": 1", "\"dims_only_bytes\": 24"});
}

// A residual read last by the convolution it is added to (not that convolution's input): inspect
// says the output is written over it; read again after the add, it says nothing (the two tensors
// then need their own bytes). On the blocked layout (nchw16c_layout) the layers read r1's blocked
// twin, which dies at the add either way.
TEST_F(EngineCommands, InspectNamesTheResidualAnOutputIsWrittenOver) {
  const bool can_block = (host_cpu_features() & kIsaAvx2) == kIsaAvx2;
  for (const bool blocked : {false, true}) {
    for (const bool read_later : {false, true}) {
      SCOPED_TRACE(::testing::Message() << (read_later ? "read later" : "read last by the add")
                                        << (blocked ? ", blocked" : ", NCHW"));
      if (blocked && !can_block) continue;
      OnnxBuilder b;
      b.input("x", kFloat, {1, 2, 4, 4}).output("y");
      // 8 channels: fewer would stay NCHW (the blocked layout would pad them to 16).
      std::vector<float> w1;
      for (int i = 0; i < 16; ++i) w1.push_back(0.25f * static_cast<float>(i % 5) - 0.5f);
      b.initializer("w1", {8, 2, 1, 1}, w1);
      b.initializer("w2", {8, 8, 1, 1}, std::vector<float>(64, 0.125f));
      b.initializer("w3", {8, 8, 1, 1}, std::vector<float>(64, -0.25f));
      b.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
      b.node("Relu", {"c1"}, {"r1"}, "relu1");
      b.node("Conv", {"r1", "w2"}, {"c2a"}, "conv2a");
      b.node("Relu", {"c2a"}, {"a"}, "relu2a");
      b.node("Conv", {"a", "w3"}, {"c2"}, "conv2");
      b.node("Add", {"c2", "r1"}, {"s"}, "add");
      b.node("Relu", {"s"}, {"t"}, "relu2");
      if (read_later) b.node("Mul", {"t", "r1"}, {"m"}, "mul");
      b.node("GlobalAveragePool", {read_later ? "m" : "t"}, {"y"}, "pool");
      const std::string model = b.write(dir_.path()).string();
      // Level 0: the first applicable tactic (kiln's x86 ones, which run in place), not the one
      // that wins a timing of microseconds on a busy machine.
      const std::string flags = std::string(" --builderOptimizationLevel=0") +
                                (blocked ? "" : " --disablePasses=nchw16c_layout");
      ASSERT_EQ(kiln("build --onnx=" + model + " --saveEngine=" + plan_ + flags).exit_code, 0);
      const Output text = kiln("inspect " + plan_);
      const Output j = kiln("inspect " + plan_ + " --format=json");
      ASSERT_EQ(text.exit_code, 0) << text.out;
      const std::string residual = blocked ? "r1.nchw16c" : "r1";
      const std::string line =
          "in place: the output is written over the residual '" + residual + "', read last here";
      EXPECT_EQ(text.out.find(line) != std::string::npos, blocked || !read_later) << text.out;
      EXPECT_EQ(j.out.find("\"residual\": \"" + residual + "\"") != std::string::npos,
                blocked || !read_later)
          << j.out;
    }
  }
}

TEST_F(EngineCommands, ShapeOutsideTheProfileIsRefused) {
  ASSERT_EQ(kiln(build_flags()).exit_code, 0);
  expect(kiln("run --loadEngine=" + plan_ + " --shapes=x:5x2x4x4"), 1,
         {"input 'x': shape 5x2x4x4 is outside every optimization profile",
          "min 1x2x4x4, max 4x2x4x4"});
}

TEST_F(EngineCommands, BadBuildFlagsAreNamed) {
  expect(kiln("build --onnx=" + model_ + " --saveEngine=" + plan_ +
              " --minShapes=x:4x2x4x4 "
              "--maxShapes=x:1x2x4x4"),
         1, {"min <= opt <= max"});
  expect(kiln("build --onnx=" + model_ + " --saveEngine=" + plan_ + " --disablePasses=nope"), 1,
         {"unknown pass 'nope'"});
  expect(kiln("build --onnx=" + model_), 1, {"--saveEngine is required"});
  EXPECT_FALSE(fs::exists(plan_));
  expect(
      kiln("build --onnx=" + model_ + " --saveEngine=" + dir_.path().string() + "/missing/m.plan"),
      1, {"missing"});
  expect(kiln("build --listPasses"), 0, {"constant_folding", "conv_activation_fusion"});
}

TEST_F(EngineCommands, DamagedEnginesAreRefused) {
  ASSERT_EQ(kiln(build_flags()).exit_code, 0);
  const std::string bytes = read_all(plan_);
  const fs::path cut = dir_.path() / "cut.plan", flipped = dir_.path() / "flipped.plan";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::string damaged = bytes;
  damaged[damaged.size() - 3] ^= 0x40;
  std::ofstream(flipped, std::ios::binary) << damaged;
  expect(kiln("run --loadEngine=" + cut.string()), 1, {"truncated"});
  expect(kiln("run --loadEngine=" + flipped.string()), 1, {"checksum"});
  expect(kiln("inspect " + model_), 1, {"ONNX"});
}

}  // namespace engine_commands_test
}  // namespace kiln
