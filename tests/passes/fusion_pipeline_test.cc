// The fusion passes' place in the pipeline: their relative order, and a ResNet block (Conv, Add of
// the block input, Relu) becoming one FusedConv through run_pipeline.
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

}  // namespace fusion_pipeline_test
}  // namespace kiln
