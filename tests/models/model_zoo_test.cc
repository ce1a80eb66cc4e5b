// End-to-end: every model exported by models/export.py runs through import + reference executor and
// matches PyTorch's own output on the same input. Skips, saying how to export, when the model set
// is not there (scripts/test.sh and CI always export it).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "frontend/onnx/importer.h"
#include "io/npy.h"
#include "runtime/reference_executor.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

fs::path model_dir() {
  const char* env = std::getenv("KILN_MODEL_DIR");
  return env != nullptr ? fs::path(env) : fs::path(KILN_MODEL_DIR);
}

// Float32 accumulation order differs from PyTorch's (oneDNN/BLAS), so deep networks get an absolute
// tolerance of 1e-4 of the output's range on top of ONNX's rtol.
testing::Tolerance tolerance_for(const Tensor& expected) {
  double max_abs = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    max_abs = std::max(max_abs, std::abs(expected.value_as_double(i)));
  }
  return {1e-3, 1e-4 * max_abs};
}

class ModelZoo : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelZoo, MatchesPyTorch) {
  const fs::path dir = model_dir();
  const std::string name = GetParam();
  if (!fs::exists(dir / (name + ".json"))) {
    GTEST_SKIP() << "model '" << name << "' not exported; run: /usr/bin/python3 models/export.py "
                 << name;
  }
  auto graph = frontend::import_onnx_file(dir / (name + ".onnx"));
  ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
  auto input = io::read_npy(dir / (name + ".input.npy"));
  ASSERT_TRUE(input.is_ok()) << input.status().to_string();
  auto expected = io::read_npy(dir / (name + ".output.npy"));
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
  auto exec = runtime::ReferenceExecutor::create(*graph);
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto out = exec->run({{graph->value(graph->inputs[0]).name, *input}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const testing::Tolerance tol = tolerance_for(*expected);
  ASSERT_GT(tol.atol, 0) << "PyTorch's output is all zeros: the comparison would be vacuous";
  EXPECT_EQ(testing::compare_tensors((*out)[0], *expected, tol), "");
}

INSTANTIATE_TEST_SUITE_P(Exported, ModelZoo,
                         ::testing::Values("resnet18", "mobilenet_v2", "mobilenet_v3_large",
                                           "tiny_bert"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kiln
