#include "passes/matmul_add_fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"

namespace kiln {
namespace matmul_add_fusion_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;

const passes::PassDef& pass() { return passes::matmul_add_fusion_pass(); }

// x [a_dims] @ w [3, 5] + bias -> y, the bias an initializer of `bias_dims` unless `as_constant`.
OnnxBuilder linear(std::vector<int64_t> a_dims, std::vector<int64_t> bias_dims,
                   bool bias_first = false, bool as_constant = false) {
  OnnxBuilder b;
  b.input("x", 1, std::move(a_dims));
  b.initializer("w", {3, 5}, testing::weights(15));
  std::vector<float> bias = testing::weights(dims_numel(bias_dims), 2.0f);
  if (as_constant) {
    testing::constant_node(b, "bias", bias_dims, bias);
  } else {
    b.initializer("bias", bias_dims, bias);
  }
  b.node("MatMul", {"x", "w"}, {"m"}, "mm");
  b.node("Add",
         bias_first ? std::vector<std::string>{"bias", "m"} : std::vector<std::string>{"m", "bias"},
         {"y"}, "add");
  b.output("y");
  return b;
}

TEST(MatMulAddFusion, BatchedLinear) {
  const auto r = run_pass(linear({2, 4, 3}, {5}), pass());
  EXPECT_EQ(op_types(r.before), (std::vector<std::string>{"MatMul", "Add"}));
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedGemm"}));
  const ir::Node& fused = r.after.nodes[0];
  EXPECT_EQ(fused.name, "mm");
  EXPECT_EQ(fused.inputs,
            (std::vector<ir::ValueId>{r.after.find_value("x"), r.after.find_value("w"),
                                      r.after.find_value("bias")}));
  EXPECT_TRUE(fused.attrs.all().empty());
  EXPECT_EQ(fused.fused_from, (std::vector<std::string>{"mm", "add"}));
  EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
  EXPECT_EQ(r.after.value(r.after.outputs[0]).desc.to_string(), "float32[2,4,5]");
  EXPECT_EQ(r.after.opset_imports.at("kiln"), 1);
  ASSERT_EQ(r.log.entries().size(), 1u);
  EXPECT_EQ(r.log.entries()[0].message, "fused mm + add into kiln.FusedGemm 'mm'");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(MatMulAddFusion, BiasShapesOrderAndConstantNodes) {
  struct Case {
    std::vector<int64_t> a;
    std::vector<int64_t> bias;
    bool bias_first;
    bool as_constant;
  };
  for (const Case& c : {Case{{4, 3}, {5}, false, false}, Case{{4, 3}, {1, 5}, true, false},
                        Case{{2, 4, 3}, {}, true, true}, Case{{1, 2, 4, 3}, {1, 5}, false, true},
                        Case{{4, 3}, {1}, false, false}}) {
    SCOPED_TRACE(::testing::Message() << "A rank " << c.a.size() << " bias rank " << c.bias.size());
    const auto r = run_pass(linear(c.a, c.bias, c.bias_first, c.as_constant), pass());
    ASSERT_EQ(op_types(r.after).back(), "kiln.FusedGemm");
    testing::expect_same_outputs(r.before, r.after);
  }
}

TEST(MatMulAddFusion, BiasThatIsNotPerColumn) {
  // Per-row ([4, 1], [4, 5]) and batched ([2, 1, 5]) biases are not a FusedGemm's C.
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{4, 1}, std::vector<int64_t>{4, 5}, std::vector<int64_t>{2, 1, 5}}) {
    const auto r = run_pass(linear({2, 4, 3}, dims), pass());
    EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"MatMul", "Add"}));
  }
}

TEST(MatMulAddFusion, BiasComputedAtRunTime) {
  OnnxBuilder b;
  b.input("x", 1, {4, 3});
  b.input("bias", 1, {5});
  b.initializer("w", {3, 5}, testing::weights(15));
  b.node("MatMul", {"x", "w"}, {"m"}, "mm");
  b.node("Add", {"m", "bias"}, {"y"}, "add");
  b.output("y");
  EXPECT_EQ(op_types(run_pass(b, pass()).after), (std::vector<std::string>{"MatMul", "Add"}));
}

TEST(MatMulAddFusion, WeightMustBeAConstantMatrix) {
  OnnxBuilder input_w;
  input_w.input("x", 1, {4, 3});
  input_w.input("w", 1, {3, 5});
  input_w.initializer("bias", {5}, testing::weights(5));
  input_w.node("MatMul", {"x", "w"}, {"m"}, "mm");
  input_w.node("Add", {"m", "bias"}, {"y"}, "add");
  input_w.output("y");
  EXPECT_EQ(op_types(run_pass(input_w, pass()).after), (std::vector<std::string>{"MatMul", "Add"}));

  OnnxBuilder batched_w;
  batched_w.input("x", 1, {2, 4, 3});
  batched_w.initializer("w", {2, 3, 5}, testing::weights(30));
  batched_w.initializer("bias", {5}, testing::weights(5));
  batched_w.node("MatMul", {"x", "w"}, {"m"}, "mm");
  batched_w.node("Add", {"m", "bias"}, {"y"}, "add");
  batched_w.output("y");
  EXPECT_EQ(op_types(run_pass(batched_w, pass()).after),
            (std::vector<std::string>{"MatMul", "Add"}));
}

TEST(MatMulAddFusion, VectorA) {
  const auto r = run_pass(linear({3}, {5}), pass());
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"MatMul", "Add"}));
}

TEST(MatMulAddFusion, MatMulOutputReadElsewhere) {
  OnnxBuilder b = linear({4, 3}, {5});
  b.output("m");
  EXPECT_EQ(op_types(run_pass(b, pass()).after), (std::vector<std::string>{"MatMul", "Add"}));
}

TEST(MatMulAddFusion, GemmStaysGemm) {
  OnnxBuilder b;
  b.input("x", 1, {4, 3});
  b.initializer("w", {3, 5}, testing::weights(15));
  b.initializer("c", {5}, testing::weights(5, 1.0f));
  b.initializer("bias", {5}, testing::weights(5, 2.0f));
  b.node("Gemm", {"x", "w", "c"}, {"g"}, "gemm");
  b.node("Add", {"g", "bias"}, {"y"}, "add");
  b.output("y");
  const auto r = run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"Gemm", "Add"}));
  EXPECT_TRUE(r.log.entries().empty());
}

}  // namespace matmul_add_fusion_test
}  // namespace kiln
