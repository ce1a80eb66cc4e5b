#include "passes/gemm_activation_fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"
#include "passes/matmul_add_fusion.h"

namespace kiln {
namespace gemm_activation_fusion_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;

const passes::PassDef& pass() { return passes::gemm_activation_fusion_pass(); }

// x [4, 3] -> Gemm "gemm" (w [5, 3] transposed, c [5]) -> "g".
OnnxBuilder gemm_model(int opset = 17) {
  OnnxBuilder b(opset);
  b.input("x", 1, {4, 3});
  b.initializer("w", {5, 3}, testing::weights(15));
  b.initializer("c", {5}, testing::weights(5, 1.0f));
  auto& g = b.node("Gemm", {"x", "w", "c"}, {"g"}, "gemm");
  testing::set_attr_int(g, "transB", 1);
  testing::set_attr_float(g, "alpha", 0.5f);
  return b;
}

TEST(GemmActivationFusion, GemmRelu) {
  OnnxBuilder b = gemm_model();
  b.node("Relu", {"g"}, {"y"}, "relu");
  b.output("y");
  const auto r = run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedGemm"}));
  const ir::Node& fused = r.after.nodes[0];
  EXPECT_EQ(fused.name, "gemm");
  EXPECT_EQ(fused.attrs.get_string("activation", ""), "Relu");
  EXPECT_EQ(fused.attrs.get_int("transB", 0), 1);
  EXPECT_EQ(fused.attrs.get_float("alpha", 1), 0.5f);
  EXPECT_EQ(fused.fused_from, (std::vector<std::string>{"gemm", "relu"}));
  EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
  ASSERT_EQ(r.log.entries().size(), 1u);
  EXPECT_EQ(r.log.entries()[0].message, "fused gemm + relu into kiln.FusedGemm 'gemm'");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(GemmActivationFusion, Opset6GemmDropsBroadcast) {
  OnnxBuilder b = gemm_model(6);
  testing::set_attr_int(*b.model().mutable_graph()->mutable_node(0), "broadcast", 1);
  b.node("Sigmoid", {"g"}, {"y"}, "sigmoid");
  b.output("y");
  const auto r = run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedGemm"}));
  EXPECT_FALSE(r.after.nodes[0].attrs.has("broadcast"));
  testing::expect_same_outputs(r.before, r.after);
}

// The MLP of ViT and BERT as torch.onnx exports it: MatMul + Add, then GELU spelled with Erf.
TEST(GemmActivationFusion, TransformerMlpAfterMatMulAddFusion) {
  OnnxBuilder b(17);
  b.input("x", 1, {2, 4, 3});
  b.initializer("w", {3, 5}, testing::weights(15));
  b.initializer("bias", {5}, testing::weights(5, 2.0f));
  testing::constant_node(b, "root2", {}, {1.4142135f});
  testing::constant_node(b, "one", {}, {1});
  testing::constant_node(b, "half", {}, {0.5f});
  b.node("MatMul", {"x", "w"}, {"m"}, "mm");
  b.node("Add", {"bias", "m"}, {"h"}, "add");
  b.node("Div", {"h", "root2"}, {"d"}, "div");
  b.node("Erf", {"d"}, {"e"}, "erf");
  b.node("Add", {"e", "one"}, {"a"}, "add1");
  b.node("Mul", {"h", "a"}, {"p"}, "mul");
  b.node("Mul", {"p", "half"}, {"y"}, "mul_half");
  b.output("y");
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after =
      testing::run_passes(before, {&passes::matmul_add_fusion_pass(), &pass()}, log);
  ASSERT_EQ(op_types(after),
            (std::vector<std::string>{"Constant", "Constant", "Constant", "kiln.FusedGemm"}));
  EXPECT_EQ(after.nodes[3].attrs.get_string("activation", ""), "Gelu");
  EXPECT_EQ(after.nodes[3].fused_from,
            (std::vector<std::string>{"mm", "add", "div", "erf", "add1", "mul", "mul_half"}));
  EXPECT_EQ(log.entries().back().message,
            "fused mm + add + div + erf + add1 + mul + mul_half into kiln.FusedGemm 'mm'");
  testing::expect_same_outputs(before, after);
}

TEST(GemmActivationFusion, NotTwiceAndNotWhenReadElsewhere) {
  OnnxBuilder twice = gemm_model();
  twice.node("Relu", {"g"}, {"r"}, "relu");
  twice.node("Tanh", {"r"}, {"y"}, "tanh");
  twice.output("y");
  auto r = run_pass(twice, pass());
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedGemm", "Tanh"}));
  testing::expect_same_outputs(r.before, r.after);

  OnnxBuilder shared = gemm_model();
  shared.node("Relu", {"g"}, {"y"}, "relu");
  shared.output("y");
  shared.output("g");
  EXPECT_EQ(op_types(run_pass(shared, pass()).after), (std::vector<std::string>{"Gemm", "Relu"}));
}

TEST(GemmActivationFusion, IntegerGemmIsNot) {
  OnnxBuilder b(17);
  b.input("a", 6, {2, 2});
  b.input("w", 6, {2, 2});
  b.node("Gemm", {"a", "w"}, {"g"}, "gemm");
  b.node("Relu", {"g"}, {"y"}, "relu");
  b.output("y");
  EXPECT_EQ(op_types(run_pass(b, pass()).after), (std::vector<std::string>{"Gemm", "Relu"}));
}

}  // namespace gemm_activation_fusion_test
}  // namespace kiln
