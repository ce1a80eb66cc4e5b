// The fusion passes' place in the pipeline: their relative order, and a ResNet block (Conv, Add of
// the block input, Relu) becoming one FusedConv through run_pipeline.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "fusion_test_util.h"
#include "passes/pipeline.h"

namespace kiln {
namespace fusion_pipeline_test {

TEST(FusionPipeline, FusionsRunInOrder) {
  std::vector<std::string_view> names;
  for (const passes::PassDef& p : passes::pipeline_passes()) names.push_back(p.name);
  auto at = [&](std::string_view name) {
    const auto it = std::find(names.begin(), names.end(), name);
    EXPECT_NE(it, names.end()) << name;
    return it - names.begin();
  };
  EXPECT_LT(at("matmul_add_fusion"), at("conv_residual_fusion"));
  EXPECT_LT(at("conv_residual_fusion"), at("conv_activation_fusion"));
  EXPECT_LT(at("conv_activation_fusion"), at("gemm_activation_fusion"));
}

TEST(FusionPipeline, ResNetBlockBecomesOneFusedConv) {
  testing::OnnxBuilder b = testing::conv_model();
  b.input("z", 1, {1, 3, 5, 5});
  b.node("Add", {"z", "c"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  const ir::Graph before = testing::import_model(b);
  ir::Graph after = before;
  passes::PassLog log;
  const Status st = passes::run_pipeline(after, {}, log);
  ASSERT_TRUE(st.is_ok()) << st.to_string();
  ASSERT_EQ(testing::op_types(after), (std::vector<std::string>{"kiln.FusedConv"}));
  EXPECT_EQ(after.nodes[0].fused_from, (std::vector<std::string>{"conv", "add", "relu"}));
  EXPECT_EQ(log.count("conv_residual_fusion"), 1u);
  EXPECT_EQ(log.count("conv_activation_fusion"), 1u);
  testing::expect_same_outputs(before, after);

  // Disabled by name, the block stays as it was.
  ir::Graph unfused = before;
  passes::PassLog none;
  ASSERT_TRUE(passes::run_pipeline(
                  unfused, {.disabled = {"conv_residual_fusion", "conv_activation_fusion"}}, none)
                  .is_ok());
  EXPECT_EQ(testing::op_types(unfused), (std::vector<std::string>{"Conv", "Add", "Relu"}));
}

// A ResNet block, a MatMul + bias and an attention block: every fusion pass has something to do.
testing::OnnxBuilder fusable_model() {
  testing::OnnxBuilder b = testing::conv_model();
  b.input("z", 1, {1, 3, 5, 5});
  b.node("Add", {"z", "c"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  b.input("a", 1, {3, 4});
  b.initializer("mw", {4, 4}, std::vector<float>(16, 0.25f));
  b.initializer("mbias", {4}, {1.0f, 2.0f, 3.0f, 4.0f});
  b.node("MatMul", {"a", "mw"}, {"aw"}, "mm");
  b.node("Add", {"aw", "mbias"}, {"g"}, "mm_bias");
  b.output("g");
  for (const char* n : {"q", "k", "v"}) b.input(n, 1, {2, 5, 4});
  b.initializer("two", {}, {2.0f});
  b.node("Div", {"q", "two"}, {"qs"}, "scale");
  testing::set_attr_ints(b.node("Transpose", {"k"}, {"kt"}, "tk"), "perm", {0, 2, 1});
  b.node("MatMul", {"qs", "kt"}, {"scores"}, "mm1");
  testing::set_attr_int(b.node("Softmax", {"scores"}, {"p"}, "softmax"), "axis", -1);
  b.node("MatMul", {"p", "v"}, {"o"}, "mm2");
  b.output("o");
  return b;
}

bool has_kiln_op(const ir::Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [](const ir::Node& n) { return !n.domain.empty() && n.domain != "ai.onnx"; });
}

// kiln quantize writes its QDQ model from the pipeline without fusion_pass_names(): no pass left
// on may write a kiln op, or ONNX Runtime and TensorRT could not read the model (vit_tiny's
// kiln.Attention was written so once).
TEST(FusionPipeline, WithoutTheFusionPassesOnlyOnnxOpsRemain) {
  const ir::Graph before = testing::import_model(fusable_model());
  ir::Graph fused = before;
  passes::PassLog log;
  ASSERT_TRUE(passes::run_pipeline(fused, {}, log).is_ok());
  const std::vector<std::string> ops = testing::op_types(fused);
  for (const char* op : {"kiln.FusedConv", "kiln.FusedGemm", "kiln.Attention"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }

  ir::Graph unfused = before;
  passes::PassLog none;
  ASSERT_TRUE(
      passes::run_pipeline(unfused, {.disabled = passes::fusion_pass_names()}, none).is_ok());
  EXPECT_FALSE(has_kiln_op(unfused))
      << fmt::format("{}", fmt::join(testing::op_types(unfused), ", "));
  testing::expect_same_outputs(before, unfused);
}

}  // namespace fusion_pipeline_test
}  // namespace kiln
