// The pipeline over the models models/export.py exports: every pass leaves a valid graph (the
// pipeline verifies and re-infers shapes after each) and the reference executor computes the same
// output before and after. Skips, saying how to export, when a model is not there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "frontend/onnx/importer.h"
#include "io/npy.h"
#include "passes/pipeline.h"
#include "runtime/reference_executor.h"
#include "testing/model_set.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace pipeline_models_test {

namespace fs = std::filesystem;

struct ModelCase {
  std::string name;
  // The batch sizes at which outputs are compared before/after. Batch 2 is for the models whose
  // shape computations depend on the dynamic batch, where folding a dim that is not known would
  // show. The reference executor is slow: ResNet-50 only checks that the pipeline succeeds (with
  // its per-pass verification), ResNet-18 compares the same rewrites, and DeepLabV3 runs batch 2
  // only.
  std::vector<int64_t> batches;
  // False for the models whose reference runs take 15-30 s under the sanitizers
  // (testing::kSanitizedBuild): their passes still run there, the comparison in the release build.
  bool compare_when_sanitized = true;
};

// gtest prints the model's name, not the struct's bytes, when a case fails.
void PrintTo(const ModelCase& c, std::ostream* os) { *os << c.name; }

std::string op_histogram(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (const ir::Node& n : g.nodes) ++counts[n.op_type];
  std::string out;
  for (const auto& [op, n] : counts) out += fmt::format("{}{}:{}", out.empty() ? "" : " ", op, n);
  return out;
}

// Runs both graphs on `input` and expects the same output. Folding a BatchNormalization into
// weights rounds differently from applying it, hence the small tolerance.
void expect_same_output(const ir::Graph& before, const ir::Graph& after, const Tensor& input) {
  const Tensor want = testing::run_reference(before, input);
  const Tensor got = testing::run_reference(after, input);
  ASSERT_TRUE(want.defined() && got.defined());
  double max_abs = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    max_abs = std::max(max_abs, std::abs(want.value_as_double(i)));
  }
  EXPECT_EQ(testing::compare_tensors(got, want, {1e-4, 1e-5 * max_abs}), "")
      << "input " << input.desc();
}

class PipelineOnModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(PipelineOnModels, KeepsTheOutput) {
  const ModelCase& c = GetParam();
  const fs::path dir = testing::model_dir();
  if (!fs::exists(dir / (c.name + ".onnx"))) {
    GTEST_SKIP() << "model '" << c.name << "' not exported in " << dir
                 << "; run: /usr/bin/python3 models/export.py " << c.name;
  }
  Result<ir::Graph> imported = frontend::import_onnx_file(dir / (c.name + ".onnx"));
  ASSERT_TRUE(imported.is_ok()) << imported.status().to_string();
  const ir::Graph before = std::move(imported).value();
  ir::Graph after = before;
  passes::PassLog log;
  const Status st = passes::run_pipeline(after, {}, log);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_LE(after.nodes.size(), before.nodes.size());
  RecordProperty("nodes_before", static_cast<int>(before.nodes.size()));
  RecordProperty("nodes_after", static_cast<int>(after.nodes.size()));
  std::cout << c.name << ": " << before.nodes.size() << " -> " << after.nodes.size()
            << " nodes\n  before: " << op_histogram(before) << "\n  after:  " << op_histogram(after)
            << "\n";
  for (const passes::PassDef& p : passes::pipeline_passes()) {
    std::cout << "  " << p.name << ": " << log.count(p.name) << " log entries\n";
  }
  if (c.batches.empty()) return;
  if (testing::kSanitizedBuild && !c.compare_when_sanitized) {
    std::cout << "  outputs compared in the release build only (reference runs too slow here)\n";
    return;
  }
  Result<Tensor> input = io::read_npy(dir / (c.name + ".input.npy"));
  ASSERT_TRUE(input.is_ok()) << input.status().to_string();
  for (int64_t batch : c.batches)
    expect_same_output(before, after, testing::repeat_batch(*input, batch));
}

INSTANTIATE_TEST_SUITE_P(
    Exported, PipelineOnModels,
    ::testing::Values(ModelCase{"resnet18", {1}, false}, ModelCase{"resnet50", {}},
                      ModelCase{"mobilenet_v2", {1}}, ModelCase{"mobilenet_v3_large", {1}},
                      ModelCase{"efficientnet_b0", {1}}, ModelCase{"yolov8n", {1, 2}, false},
                      ModelCase{"deeplabv3_mobilenet_v3_large", {2}, false},
                      ModelCase{"vit_tiny", {1, 2}}, ModelCase{"tiny_bert", {1, 2}}),
    [](const ::testing::TestParamInfo<ModelCase>& info) { return info.param.name; });

}  // namespace pipeline_models_test
}  // namespace kiln
