#include "passes/gemm_residual_fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"
#include "io/random_input.h"
#include "passes/gemm_activation_fusion.h"
#include "passes/matmul_add_fusion.h"

namespace kiln {
namespace gemm_residual_fusion_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;
using Ops = std::vector<std::string>;

const passes::PassDef& pass() { return passes::gemm_residual_fusion_pass(); }

void expect_unchanged(const testing::PassResult& r) {
  EXPECT_EQ(r.after.dump(), r.before.dump());
  EXPECT_EQ(r.log.entries().size(), 0u);
}

// x [4, 6] -> Gemm "gemm" (w [6, 6], C c_dims) -> "g"; Add(g, r) "add" -> "y", with r [4, 6] (or
// r_dims) a second input.
OnnxBuilder gemm_residual_model(std::vector<int64_t> c_dims = {6}, bool gemm_first = true,
                                std::vector<int64_t> r_dims = {4, 6}) {
  OnnxBuilder b;
  b.input("x", 1, {4, 6});
  b.input("r", 1, std::move(r_dims));
  b.initializer("w", {6, 6}, testing::weights(36));
  std::vector<std::string> gemm_in = {"x", "w"};
  if (!c_dims.empty()) {
    int64_t n = 1;
    for (int64_t d : c_dims) n *= d;
    b.initializer("c", c_dims, testing::weights(n, 0.5f));
    gemm_in.push_back("c");
  }
  b.node("Gemm", gemm_in, {"g"}, "gemm");
  b.node("Add",
         gemm_first ? std::vector<std::string>{"g", "r"} : std::vector<std::string>{"r", "g"},
         {"y"}, "add");
  b.output("y");
  return b;
}

TEST(GemmResidualFusion, AddOfGemmAndSameShapeValue) {
  for (const bool gemm_first : {true, false}) {
    for (const std::vector<int64_t>& c :
         {std::vector<int64_t>{6}, std::vector<int64_t>{1, 6}, std::vector<int64_t>{}}) {
      const auto r = run_pass(gemm_residual_model(c, gemm_first), pass());
      ASSERT_EQ(op_types(r.after), (Ops{"kiln.FusedGemm"}));
      const ir::Node& fused = r.after.nodes[0];
      ASSERT_EQ(fused.inputs.size(), 4u);
      EXPECT_EQ(fused.inputs[3], r.after.find_value("r"));
      EXPECT_EQ(fused.inputs[2] == ir::kNoValue, c.empty());
      EXPECT_EQ(fused.fused_from, (Ops{"gemm", "add"}));
      EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
      ASSERT_EQ(r.log.entries().size(), 1u);
      EXPECT_EQ(r.log.entries()[0].message, "fused gemm + add into kiln.FusedGemm 'gemm'");
      testing::expect_same_outputs(r.before, r.after);
    }
  }
}

// A transformer's x + fc2(h): MatMul + bias (matmul_add_fusion) on a batched activation, the
// residual added, then nothing else; a Relu after the sum still fuses on top.
TEST(GemmResidualFusion, AfterMatMulAddFusionOnABatchedActivationThenAnActivation) {
  OnnxBuilder b;
  b.input("x", 1, {-1, 5, 6}, {"batch"});
  b.initializer("w", {6, 6}, testing::weights(36));
  b.initializer("bias", {6}, testing::weights(6, 1.0f));
  b.node("MatMul", {"x", "w"}, {"m"}, "fc2");
  b.node("Add", {"m", "bias"}, {"h"}, "fc2_bias");
  b.node("Add", {"x", "h"}, {"s"}, "residual");
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after = testing::run_passes(
      before, {&passes::matmul_add_fusion_pass(), &pass(), &passes::gemm_activation_fusion_pass()},
      log);
  ASSERT_EQ(op_types(after), (Ops{"kiln.FusedGemm"}));
  const ir::Node& fused = after.nodes[0];
  ASSERT_EQ(fused.inputs.size(), 4u);
  EXPECT_EQ(fused.inputs[3], after.find_value("x"));
  EXPECT_EQ(fused.attrs.get_string("activation", ""), "Relu");
  EXPECT_EQ(fused.fused_from, (Ops{"fc2", "fc2_bias", "residual", "relu"}));
  Result<Tensor> x = io::random_tensor(DType::kF32, {3, 5, 6}, 5);
  ASSERT_TRUE(x.is_ok());
  testing::expect_same_outputs(before, after, {{"x", *x}});
}

// Guards: a residual that broadcasts, a C with a row per output row (the kernels' addend is
// taken), a Gemm output read elsewhere, a GEMM whose activation would apply before the sum.
TEST(GemmResidualFusion, BroadcastingOperandIsNot) {
  expect_unchanged(run_pass(gemm_residual_model({6}, true, {1, 6}), pass()));
}

TEST(GemmResidualFusion, NotWithAFullC) {
  expect_unchanged(run_pass(gemm_residual_model({4, 6}), pass()));
  expect_unchanged(run_pass(gemm_residual_model({4, 1}), pass()));
}

TEST(GemmResidualFusion, GemmOutputReadElsewhere) {
  OnnxBuilder b = gemm_residual_model();
  b.output("g");
  expect_unchanged(run_pass(b, pass()));
}

TEST(GemmResidualFusion, NotAfterAnActivation) {
  OnnxBuilder b;
  b.input("x", 1, {4, 6});
  b.input("r", 1, {4, 6});
  b.initializer("w", {6, 6}, testing::weights(36));
  b.node("Gemm", {"x", "w"}, {"g"}, "gemm");
  b.node("Relu", {"g"}, {"a"}, "relu");
  b.node("Add", {"a", "r"}, {"y"}, "add");
  b.output("y");
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after =
      testing::run_passes(before, {&passes::gemm_activation_fusion_pass(), &pass()}, log);
  EXPECT_EQ(op_types(after), (Ops{"kiln.FusedGemm", "Add"}));
  testing::expect_same_outputs(before, after);
}

// Add(Add(gemm, r), r2): the second Add sees a FusedGemm that already has a residual.
TEST(GemmResidualFusion, NotTwice) {
  OnnxBuilder b = gemm_residual_model();
  b.model().mutable_graph()->mutable_output()->Clear();
  b.input("r2", 1, {4, 6});
  b.node("Add", {"y", "r2"}, {"y2"}, "add2");
  b.output("y2");
  const auto r = run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"kiln.FusedGemm", "Add"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(GemmResidualFusion, UnknownDimsMayBroadcast) {
  OnnxBuilder b;
  b.input("x", 1, {-1, 6});
  b.input("r", 1, {-1, 6});
  b.initializer("w", {6, 6}, testing::weights(36));
  b.node("Gemm", {"x", "w"}, {"g"}, "gemm");
  b.node("Add", {"g", "r"}, {"y"}, "add");
  b.output("y");
  expect_unchanged(run_pass(b, pass()));
}

}  // namespace gemm_residual_fusion_test
}  // namespace kiln
