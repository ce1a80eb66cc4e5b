// End-to-end: every model exported by models/export.py runs through import + reference executor and
// matches PyTorch's own output on the same input. Skips, saying how to export, when the model set
// is not there (scripts/test.sh and CI always export it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/builder.h"
#include "engine/serialize.h"
#include "frontend/onnx/importer.h"
#include "io/npy.h"
#include "runtime/engine.h"
#include "runtime/execution_context.h"
#include "runtime/reference_executor.h"
#include "testing/model_set.h"
#include "testing/onnx_builder.h"
#include "testing/tensor_compare.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Float32 accumulation order differs from PyTorch's (oneDNN/BLAS), so deep networks get an absolute
// tolerance of 1e-4 of the output's range on top of ONNX's rtol.
testing::Tolerance tolerance_for(const Tensor& expected) {
  double max_abs = 0;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    max_abs = std::max(max_abs, std::abs(expected.value_as_double(i)));
  }
  return {1e-3, 1e-4 * max_abs};
}

// Index c of axis 1 of a tensor of rank >= 2, as a copy of dims [d0, 1, d2, ...].
Tensor channel(const Tensor& t, int64_t c) {
  Dims dims = t.dims();
  const int64_t channels = dims[1];
  dims[1] = 1;
  Tensor out(t.dtype(), dims);
  const size_t inner = static_cast<size_t>(out.numel() / dims[0]) * dtype_size(t.dtype());
  const auto* src = static_cast<const std::byte*>(t.raw_data());
  auto* dst = static_cast<std::byte*>(out.raw_data());
  for (int64_t n = 0; n < dims[0]; ++n) {
    std::memcpy(dst + n * inner, src + (n * channels + c) * inner, inner);
  }
  return out;
}

// Outputs with a channel axis (rank >= 3: detection rows, segmentation classes) can mix quantities
// of very different scales (YOLO's box coordinates in pixels and its class probabilities), so each
// channel is compared with a tolerance relative to its own range: a tolerance from the largest
// would leave the small ones unchecked. Empty when the outputs match.
std::string compare_output(const Tensor& actual, const Tensor& expected) {
  const testing::Tolerance whole = tolerance_for(expected);
  if (expected.rank() < 3 || actual.dims() != expected.dims()) {
    return testing::compare_tensors(actual, expected, whole);
  }
  for (int64_t c = 0; c < expected.dim(1); ++c) {
    const Tensor want = channel(expected, c);
    testing::Tolerance tol = tolerance_for(want);
    if (tol.atol == 0) tol = whole;  // an all-zero channel: its own range says nothing
    const std::string diff = testing::compare_tensors(channel(actual, c), want, tol);
    if (!diff.empty()) return "output channel " + std::to_string(c) + ": " + diff;
  }
  return "";
}

// Item n of the batch of `t`, as a copy with batch 1.
Tensor batch_item(const Tensor& t, int64_t n) {
  Dims dims = t.dims();
  dims[0] = 1;
  Tensor out(t.dtype(), dims);
  std::memcpy(out.raw_data(), static_cast<const std::byte*>(t.raw_data()) + n * out.nbytes(),
              out.nbytes());
  return out;
}

class ModelZoo : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const fs::path dir = testing::model_dir();
    const std::string name = GetParam();
    if (!fs::exists(dir / (name + ".json"))) {
      GTEST_SKIP() << "model '" << name << "' not exported; run: /usr/bin/python3 models/export.py "
                   << name;
    }
    auto graph = frontend::import_onnx_file(dir / (name + ".onnx"));
    ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
    graph_ = std::move(*graph);
    auto input = io::read_npy(dir / (name + ".input.npy"));
    ASSERT_TRUE(input.is_ok()) << input.status().to_string();
    input_ = std::move(*input);
    auto expected = io::read_npy(dir / (name + ".output.npy"));
    ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
    expected_ = std::move(*expected);
    ASSERT_GT(tolerance_for(expected_).atol, 0)
        << "PyTorch's output is all zeros: the comparison would be vacuous";
  }

  // The reference executor's output on the exported input, computed once per model per process.
  const Tensor& reference_output() {
    static std::map<std::string, Tensor> cache;
    Tensor& t = cache[GetParam()];
    if (!t.defined()) t = run(input_);
    return t;
  }

  // Runs the model on `input` and returns its (single) output.
  Tensor run(const Tensor& input) {
    EXPECT_EQ(graph_.outputs.size(), 1u);
    return testing::run_reference(graph_, input);
  }

  ir::Graph graph_;
  Tensor input_;
  Tensor expected_;
};

TEST_P(ModelZoo, MatchesPyTorch) {
  const Tensor& out = reference_output();
  ASSERT_TRUE(out.defined());
  EXPECT_EQ(compare_output(out, expected_), "");
}

// The batch axis is exported as dynamic ("batch"): a batch of two copies of the input runs (shape
// inference and every Reshape/Expand/Concat that depends on the batch) and gives PyTorch's output
// for each item.
using ModelZooBatch = ModelZoo;

TEST_P(ModelZooBatch, DynamicBatch) {
  const ir::TensorDesc& in = graph_.value(graph_.inputs[0]).desc;
  ASSERT_TRUE(in.has_rank() && in.rank() >= 1) << in.to_string();
  EXPECT_EQ(in.dim(0).symbol, "batch") << in.to_string();
  const Tensor out = run(testing::repeat_batch(input_, 2));
  ASSERT_TRUE(out.defined());
  ASSERT_GE(out.rank(), 1);
  ASSERT_EQ(out.dim(0), 2) << out.desc();
  for (int64_t n = 0; n < 2; ++n) {
    EXPECT_EQ(compare_output(batch_item(out, n), expected_), "") << "batch item " << n;
  }
}

// Worst absolute and relative (to the reference's largest magnitude) error of `got` against `want`.
std::pair<double, double> worst_error(const Tensor& got, const Tensor& want) {
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    worst = std::max(worst, std::abs(got.value_as_double(i) - want.value_as_double(i)));
    scale = std::max(scale, std::abs(want.value_as_double(i)));
  }
  return {worst, scale > 0 ? worst / scale : worst};
}

// The numerical contract of an FP32 engine: every model of the set, built with a dynamic-batch
// profile, saved, loaded and run, matches the reference executor within rtol 1e-3 / atol 1e-4 —
// and, through the reference, PyTorch. The worst error is printed per model.
TEST_P(ModelZoo, EngineMatchesReference) {
  const Tensor& want = reference_output();
  ASSERT_TRUE(want.defined());
  const std::string input = graph_.value(graph_.inputs[0]).name;
  Dims one = input_.dims(), four = input_.dims();
  four[0] = 4;
  engine::BuildOptions options;
  options.profiles.push_back({{input, ShapeRange{one, one, four}}});
  auto plan = engine::build_plan(graph_, options);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  testing::TempDir dir;
  const fs::path file = dir.path() / (GetParam() + ".plan");
  ASSERT_TRUE(engine::save_plan(*plan, file).is_ok());
  auto loaded = engine::load_plan(file);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  auto eng = runtime::Engine::create(std::move(loaded).value());
  ASSERT_TRUE(eng.is_ok()) << eng.status().to_string();
  auto ctx = (*eng)->create_execution_context();
  ASSERT_TRUE(ctx.is_ok()) << ctx.status().to_string();
  auto out = (*ctx)->run({{input, input_}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ(testing::compare_tensors((*out)[0], want, {1e-3, 1e-4}), "");
  EXPECT_EQ(compare_output((*out)[0], expected_), "") << "against PyTorch";
  const auto [abs_err, rel_err] = worst_error((*out)[0], want);
  std::printf(
      "[ engine  ] %s: worst error vs reference %.3g (%.3g of the output's range), "
      "%zu layers\n",
      GetParam().c_str(), abs_err, rel_err, (*eng)->plan().layers.size());
  RecordProperty("worst_abs_error", std::to_string(abs_err));
}

// All activations share one arena; the bar is that ResNet-50 and MobileNetV2 stay within
// 10% of the peak live set (the lower bound any plan can reach). Printed for every model.
TEST_P(ModelZoo, ArenaNearPeakLive) {
  const std::string input = graph_.value(graph_.inputs[0]).name;
  Dims max = input_.dims();
  max[0] = 8;
  engine::BuildOptions options;
  // The arena holds activations, whichever tactics run them: no tactic timing (the other test of
  // each model tunes), which halves this suite's time.
  options.optimization_level = 0;
  options.profiles.push_back({{input, ShapeRange{input_.dims(), input_.dims(), max}}});
  auto plan = engine::build_plan(graph_, options);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const engine::MemoryLayout& m = plan->profiles[0].memory;
  const double ratio = static_cast<double>(m.arena_bytes) / static_cast<double>(m.peak_live_bytes);
  std::printf(
      "[ memory  ] %s at batch 8: arena %.2f MiB, peak live %.2f MiB (x%.3f), no reuse "
      "%.2f MiB\n",
      GetParam().c_str(), static_cast<double>(m.arena_bytes) / 1048576.0,
      static_cast<double>(m.peak_live_bytes) / 1048576.0, ratio,
      static_cast<double>(m.no_reuse_bytes) / 1048576.0);
  EXPECT_LE(m.peak_live_bytes, m.arena_bytes);
  EXPECT_LT(m.arena_bytes, m.no_reuse_bytes);
  if (GetParam() == "resnet50" || GetParam() == "mobilenet_v2") {
    EXPECT_LE(ratio, 1.10);
  }
}

// Every model models/export.py makes (scripts/test.sh exports them all).
std::vector<std::string> all_models() {
  return {"resnet18",
          "resnet50",
          "mobilenet_v2",
          "mobilenet_v3_large",
          "efficientnet_b0",
          "yolov8n",
          "deeplabv3_mobilenet_v3_large",
          "vit_tiny",
          "tiny_bert"};
}

// The batch-2 run doubles a model's time: ResNet-50 is left out, its batch handling (Flatten before
// the classifier) being exactly ResNet-18's.
std::vector<std::string> batch_models() {
  std::vector<std::string> models = all_models();
  std::erase(models, "resnet50");
  return models;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

INSTANTIATE_TEST_SUITE_P(Exported, ModelZoo, ::testing::ValuesIn(all_models()), param_name);
INSTANTIATE_TEST_SUITE_P(Exported, ModelZooBatch, ::testing::ValuesIn(batch_models()), param_name);

}  // namespace
}  // namespace kiln
