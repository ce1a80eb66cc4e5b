// kiln debug precision: the bisection and pruning over a ranking (with a fake evaluator), the
// --layerPrecisions line it prints, and the command on a model whose calibration ruins one layer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "debug/precision_search.h"
#include "kiln_process.h"
#include "quant/calibration_file.h"
#include "testing/onnx_builder.h"

namespace kiln {
namespace debug_precision_test {

using cli::debug::Trial;

std::vector<std::string> ten_layers() {
  std::vector<std::string> v;
  for (int i = 0; i < 10; ++i) v.push_back("r" + std::to_string(i));
  return v;
}

// Passes when every layer of `needed` is kept in FP32.
cli::debug::Evaluate needs(std::vector<std::string> needed, int& calls) {
  return [needed, &calls](const std::vector<std::string>& fp32) -> Result<Trial> {
    ++calls;
    bool all = true;
    for (const std::string& n : needed) {
      all = all && std::find(fp32.begin(), fp32.end(), n) != fp32.end();
    }
    return Trial{all, all ? 0.999 : 0.5, ""};
  };
}

TEST(DebugPrecisionSearch, BisectsToTheShortestPassingPrefixThenPrunes) {
  int calls = 0;
  const auto eval = needs({"r3", "r7"}, calls);
  auto r = cli::debug::search_fp32_prefix(ten_layers(), eval, nullptr);
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(r->found);
  EXPECT_EQ(r->fp32_layers.size(), 8u);  // r0..r7
  EXPECT_LE(calls, 5);                   // about log2(10)
  auto pruned = cli::debug::prune_fp32_set(*r, eval, nullptr);
  ASSERT_TRUE(pruned.is_ok());
  EXPECT_EQ(pruned->fp32_layers, (std::vector<std::string>{"r3", "r7"}));
  EXPECT_TRUE(pruned->trial.passed);
}

TEST(DebugPrecisionSearch, FirstLayerAloneAndWholeRanking) {
  int calls = 0;
  auto r = cli::debug::search_fp32_prefix(ten_layers(), needs({"r0"}, calls), nullptr);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->fp32_layers, std::vector<std::string>{"r0"});
  r = cli::debug::search_fp32_prefix(ten_layers(), needs({"r9"}, calls), nullptr);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->fp32_layers.size(), 10u);
  EXPECT_TRUE(r->found);
  EXPECT_FALSE(cli::debug::search_fp32_prefix({}, needs({}, calls), nullptr).is_ok());
}

TEST(DebugPrecisionSearch, FlagQuotesNamesTheParserWouldSplit) {
  EXPECT_EQ(cli::debug::layer_precisions_flag({"a", "b/c"}), "--layerPrecisions=a:fp32,b/c:fp32");
  EXPECT_EQ(cli::debug::layer_precisions_flag({"x,y", "p:q"}),
            "--layerPrecisions='x,y':fp32,'p:q':fp32");
}

// x -> Conv(3->8) -> Relu -> Conv(8->4) -> y, with a TensorRT cache whose range for the Relu's
// output is a hundredth of its real one: conv2's input is clipped to nothing, and only keeping
// conv2 in FP32 (its reader, not its writer) repairs the output.
TEST(DebugPrecision, FindsTheLayerToKeepInFp32) {
  testing::TempDir dir;
  const testing::OnnxBuilder b = testing::conv_relu_conv_model({2, 3, 6, 6}, {}, 0.3f, 0.4f);
  const std::string model = b.write(dir.path()).string();
  const std::string cache = (dir.path() / "m.cache").string();
  std::ofstream(cache) << "TRT-8601-EntropyCalibration2\nx: " << quant::trt_scale_hex(1.0f / 127)
                       << "\nr1: " << quant::trt_scale_hex(0.02f / 127) << "\n";
  const auto r = testing::run_kiln("debug precision --onnx=" + model + " --calib=" + cache +
                                   " --samples=4 --cosine=0.99");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("INT8 engine: 'y' cosine"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(FAIL)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--layerPrecisions=conv2:fp32 --precisionConstraints=obey"),
            std::string::npos)
      << r.out;
}

TEST(DebugPrecision, Errors) {
  auto r = testing::run_kiln("debug precision");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("--onnx"), std::string::npos) << r.out;
  r = testing::run_kiln("debug precision --onnx=missing.onnx --cosine=2");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("--cosine must be in [0, 1]"), std::string::npos) << r.out;
  r = testing::run_kiln("debug precision --onnx=missing.onnx");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("missing.onnx"), std::string::npos) << r.out;
}

}  // namespace debug_precision_test
}  // namespace kiln
