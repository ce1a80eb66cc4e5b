#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"

namespace kiln {
namespace pipeline_test {

using testing::OnnxBuilder;
using testing::op_types;
using Ops = std::vector<std::string>;

constexpr int kFloat = onnx::TensorProto::FLOAT;

// Identity -> Conv -> BatchNormalization, with a constant Shape chain feeding a Reshape.
OnnxBuilder model() {
  OnnxBuilder b;
  b.input("x", kFloat, {1, 2, 3, 3});
  b.initializer("w", {3, 2, 1, 1}, {0.5f, -1, 2, 0.25f, 1, -0.5f});
  for (const char* p : {"s", "sh", "m"}) b.initializer(p, {3}, {0.5f, 1, 1.5f});
  b.initializer("v", {3}, {1, 2, 3});
  testing::int64_initializer(b, "zero", {}, {0});
  testing::int64_initializer(b, "axes", {1}, {0});
  testing::int64_initializer(b, "minus_one", {1}, {-1});
  b.node("Identity", {"x"}, {"xi"}, "identity");
  b.node("Conv", {"xi", "w"}, {"c"}, "conv");
  b.node("BatchNormalization", {"c", "s", "sh", "m", "v"}, {"bn"}, "bn");
  b.node("Shape", {"bn"}, {"shape"}, "shape");
  b.node("Gather", {"shape", "zero"}, {"n"}, "gather");
  b.node("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze");
  testing::set_attr_int(b.node("Concat", {"n1", "minus_one"}, {"target"}, "concat"), "axis", 0);
  b.node("Reshape", {"bn", "target"}, {"y"}, "flatten");
  b.output("y");
  return b;
}

std::vector<std::string> names(std::span<const passes::PassDef> passes) {
  std::vector<std::string> out;
  for (const passes::PassDef& p : passes) out.emplace_back(p.name);
  return out;
}

TEST(Pipeline, RunsThePassesInOrder) {
  const std::vector<std::string> all = names(passes::pipeline_passes());
  const auto pos = [&](std::string_view name) {
    return std::find(all.begin(), all.end(), name) - all.begin();
  };
  ASSERT_LT(pos("identity_elimination"), pos("constant_folding"));
  EXPECT_LT(pos("constant_folding"), pos("batchnorm_folding"));
  EXPECT_LT(pos("batchnorm_folding"), pos("transpose_reshape_elimination"));
  // Before the Reshape it matches is merged with others, and before the GEMM fusions it feeds.
  EXPECT_LT(pos("patch_embedding"), pos("transpose_reshape_elimination"));
  EXPECT_LT(pos("patch_embedding"), pos("matmul_add_fusion"));
  EXPECT_EQ(all.back(), "dead_node_elimination");
  for (const passes::PassDef& p : passes::pipeline_passes()) {
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_EQ(std::count(all.begin(), all.end(), p.name), 1) << p.name;
  }
}

TEST(Pipeline, OptimizesAModel) {
  const ir::Graph before = testing::import_model(model());
  ir::Graph after = before;
  passes::PassLog log;
  const Status st = passes::run_pipeline(after, {}, log);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(op_types(after), (Ops{"Conv", "Reshape"}));
  EXPECT_EQ(log.count("identity_elimination"), 1u);
  EXPECT_EQ(log.count("batchnorm_folding"), 1u);
  EXPECT_GT(log.count("dead_node_elimination"), 0u);  // the BN's parameters and old weights
  testing::expect_same_outputs(before, after);
}

TEST(Pipeline, DisablesPassesByName) {
  const ir::Graph before = testing::import_model(model());
  ir::Graph after = before;
  passes::PassLog log;
  passes::PipelineOptions options;
  options.disabled = {"identity_elimination", "batchnorm_folding"};
  const Status st = passes::run_pipeline(after, options, log);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(op_types(after), (Ops{"Identity", "Conv", "BatchNormalization", "Reshape"}));
  EXPECT_EQ(log.count("identity_elimination"), 0u);
  EXPECT_EQ(log.count("batchnorm_folding"), 0u);
  EXPECT_GT(log.count("constant_folding"), 0u);
  testing::expect_same_outputs(before, after);
}

TEST(Pipeline, RejectsAnUnknownPassNameListingTheValidOnes) {
  ir::Graph g = testing::import_model(model());
  const std::string before = g.dump();
  passes::PassLog log;
  passes::PipelineOptions options;
  options.disabled = {"constant_folding", "constant_foldng"};
  const Status st = passes::run_pipeline(g, options, log);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("'constant_foldng'"), std::string::npos) << st.message();
  for (const passes::PassDef& p : passes::pipeline_passes()) {
    EXPECT_NE(st.message().find(p.name), std::string::npos) << st.message();
  }
  EXPECT_EQ(g.dump(), before);  // nothing ran
  EXPECT_TRUE(log.entries().empty());
}

}  // namespace pipeline_test
}  // namespace kiln
