// The fusion passes over the exported model set (models/export.py): each model computes the same
// output before and after, and the fusions expected for its architecture fire. Skips a model that
// is not exported; KILN_MODEL_DIR overrides where the models are looked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "frontend/onnx/importer.h"
#include "fusion_test_util.h"
#include "io/npy.h"
#include "passes/conv_activation_fusion.h"
#include "passes/conv_residual_fusion.h"
#include "passes/gemm_activation_fusion.h"
#include "passes/matmul_add_fusion.h"
#include "runtime/reference_executor.h"
#include "testing/model_set.h"

namespace kiln {
namespace fusion_models_test {

namespace fs = std::filesystem;

struct ModelCase {
  std::string name;
  // Lower bounds on the fusions per pass (the exports are deterministic; bounds rather than exact
  // counts so that a better matcher does not fail the test).
  std::map<std::string, size_t> min_fusions;
  // False for the models whose reference runs take 9-15 s under the sanitizers
  // (testing::kSanitizedBuild): their fusions are still counted there, outputs compared in release.
  bool compare_when_sanitized = true;
};

class FusionModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(FusionModels, SameOutputAfterFusion) {
  const ModelCase& c = GetParam();
  const fs::path dir = testing::model_dir();
  if (!fs::exists(dir / (c.name + ".onnx"))) {
    GTEST_SKIP() << c.name << " not exported in " << dir
                 << "; run: /usr/bin/python3 models/export.py " << c.name;
  }
  auto before = frontend::import_onnx_file(dir / (c.name + ".onnx"));
  ASSERT_TRUE(before.is_ok()) << before.status().to_string();
  auto input = io::read_npy(dir / (c.name + ".input.npy"));
  ASSERT_TRUE(input.is_ok()) << input.status().to_string();

  passes::PassLog log;
  const ir::Graph after = testing::run_passes(
      *before,
      {&passes::matmul_add_fusion_pass(), &passes::conv_residual_fusion_pass(),
       &passes::conv_activation_fusion_pass(), &passes::gemm_activation_fusion_pass()},
      log);
  std::string counts;
  for (const char* pass : {"matmul_add_fusion", "conv_residual_fusion", "conv_activation_fusion",
                           "gemm_activation_fusion"}) {
    const size_t n = log.count(pass);
    counts += fmt::format(" {}={}", pass, n);
    RecordProperty(pass, static_cast<int>(n));
    const auto want = c.min_fusions.find(pass);
    if (want != c.min_fusions.end()) {
      EXPECT_GE(n, want->second) << pass << "\n" << testing::log_text(log);
    }
  }
  std::printf("[ fusions ] %s:%s (%zu -> %zu nodes)\n", c.name.c_str(), counts.c_str(),
              before->nodes.size(), after.nodes.size());

  if (testing::kSanitizedBuild && !c.compare_when_sanitized) return;
  const Tensor want = testing::run_reference(*before, *input);
  const Tensor got = testing::run_reference(after, *input);
  ASSERT_TRUE(want.defined() && got.defined());
  double max_abs = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    max_abs = std::max(max_abs, std::abs(want.value_as_double(i)));
  }
  EXPECT_EQ(testing::compare_tensors(got, want, {1e-4, 1e-5 * max_abs}), "");
}

std::string param_name(const ::testing::TestParamInfo<ModelCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(
    Exported, FusionModels,
    ::testing::Values(
        ModelCase{"resnet18", {{"conv_residual_fusion", 8}, {"conv_activation_fusion", 17}}, false},
        ModelCase{"mobilenet_v3_large",
                  {{"conv_residual_fusion", 10},
                   {"conv_activation_fusion", 47},
                   {"gemm_activation_fusion", 1}}},
        ModelCase{"vit_tiny", {{"matmul_add_fusion", 9}, {"gemm_activation_fusion", 4}}},
        ModelCase{"tiny_bert", {{"matmul_add_fusion", 3}, {"gemm_activation_fusion", 1}}},
        ModelCase{"yolov8n", {{"conv_activation_fusion", 57}}, false}),
    param_name);

}  // namespace fusion_models_test
}  // namespace kiln
