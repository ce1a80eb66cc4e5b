#include "passes/conv_activation_fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"
#include "passes/conv_residual_fusion.h"

namespace kiln {
namespace conv_activation_fusion_test {

using testing::conv_model;
using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;

const passes::PassDef& pass() { return passes::conv_activation_fusion_pass(); }

TEST(ConvActivationFusion, ConvRelu) {
  OnnxBuilder b = conv_model();
  b.node("Relu", {"c"}, {"y"}, "relu");
  b.output("y");
  const auto r = run_pass(b, pass());
  EXPECT_EQ(op_types(r.before), (std::vector<std::string>{"Conv", "Relu"}));
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
  const ir::Node& fused = r.after.nodes[0];
  EXPECT_EQ(fused.name, "conv");
  EXPECT_EQ(fused.opset, 1);
  EXPECT_EQ(fused.attrs.get_string("activation", ""), "Relu");
  EXPECT_FALSE(fused.attrs.has("activation_params"));
  EXPECT_EQ(fused.attrs.get_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(fused.fused_from, (std::vector<std::string>{"conv", "relu"}));
  EXPECT_EQ(r.after.opset_imports.at("kiln"), 1);
  // The graph output keeps its name and is produced by the fused node.
  EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
  EXPECT_EQ(testing::producer_of(r.after, "y"), &r.after.nodes[0]);
  ASSERT_EQ(r.log.count("conv_activation_fusion"), 1u);
  EXPECT_EQ(r.log.entries()[0].message, "fused conv + relu into kiln.FusedConv 'conv'");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvActivationFusion, ParametersAndConvWithoutBias) {
  OnnxBuilder b = conv_model(17, /*bias=*/false);
  testing::set_attr_float(b.node("LeakyRelu", {"c"}, {"y"}, "leaky"), "alpha", 0.2f);
  b.output("y");
  const auto r = run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
  EXPECT_EQ(r.after.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(r.after.nodes[0].attrs.get_floats("activation_params"), (std::vector<float>{0.2f}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvActivationFusion, Relu6WithConstantNodes) {
  OnnxBuilder b = conv_model();
  testing::constant_node(b, "lo", {}, {0});
  testing::constant_node(b, "hi", {}, {6});
  b.node("Clip", {"c", "lo", "hi"}, {"y"}, "relu6");
  b.output("y");
  const auto r = run_pass(b, pass());
  // The Constant nodes stay for dead-node elimination.
  ASSERT_EQ(op_types(r.after),
            (std::vector<std::string>{"Constant", "Constant", "kiln.FusedConv"}));
  const ir::Node& fused = r.after.nodes[2];
  EXPECT_EQ(fused.attrs.get_string("activation", ""), "Clip");
  EXPECT_EQ(fused.attrs.get_floats("activation_params"), (std::vector<float>{0, 6}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvActivationFusion, SiluAndTorchHardSwish) {
  OnnxBuilder silu = conv_model();
  silu.node("Sigmoid", {"c"}, {"s"}, "sigmoid");
  silu.node("Mul", {"c", "s"}, {"y"}, "mul");
  silu.output("y");
  auto r = run_pass(silu, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
  EXPECT_EQ(r.after.nodes[0].attrs.get_string("activation", ""), "Silu");
  EXPECT_EQ(r.after.nodes[0].fused_from, (std::vector<std::string>{"conv", "sigmoid", "mul"}));
  testing::expect_same_outputs(r.before, r.after);

  OnnxBuilder hswish = conv_model(13);
  testing::set_attr_float(hswish.node("HardSigmoid", {"c"}, {"g"}, "gate"), "alpha", 1.0f / 6);
  hswish.node("Mul", {"c", "g"}, {"y"}, "mul");
  hswish.output("y");
  r = run_pass(hswish, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
  EXPECT_EQ(r.after.nodes[0].attrs.get_string("activation", ""), "HardSwish");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvActivationFusion, TakesAFusedConvWithResidual) {
  // ResNet's block end: Add(conv, identity) -> Relu, after conv_residual_fusion.
  OnnxBuilder b = conv_model();
  b.input("z", 1, {1, 3, 5, 5});
  b.node("Add", {"c", "z"}, {"s"}, "add");
  b.node("Relu", {"s"}, {"y"}, "relu");
  b.output("y");
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after =
      testing::run_passes(before, {&passes::conv_residual_fusion_pass(), &pass()}, log);
  ASSERT_EQ(op_types(after), (std::vector<std::string>{"kiln.FusedConv"}));
  EXPECT_EQ(after.nodes[0].inputs.size(), 4u);
  EXPECT_EQ(after.nodes[0].attrs.get_string("activation", ""), "Relu");
  EXPECT_EQ(after.nodes[0].fused_from, (std::vector<std::string>{"conv", "add", "relu"}));
  EXPECT_EQ(log.entries().back().message, "fused conv + add + relu into kiln.FusedConv 'conv'");
  testing::expect_same_outputs(before, after);
}

TEST(ConvActivationFusion, ConvOutputReadElsewhere) {
  OnnxBuilder b = conv_model();
  b.node("Relu", {"c"}, {"y"}, "relu");
  b.node("Neg", {"c"}, {"n"}, "neg");
  b.output("y");
  b.output("n");
  EXPECT_EQ(op_types(run_pass(b, pass()).after), (std::vector<std::string>{"Conv", "Relu", "Neg"}));

  OnnxBuilder out = conv_model();
  out.node("Relu", {"c"}, {"y"}, "relu");
  out.output("c");
  out.output("y");
  EXPECT_EQ(op_types(run_pass(out, pass()).after), (std::vector<std::string>{"Conv", "Relu"}));
}

TEST(ConvActivationFusion, OneActivationOnly) {
  OnnxBuilder b = conv_model();
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Sigmoid", {"r"}, {"y"}, "sigmoid");
  b.output("y");
  const auto r = run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv", "Sigmoid"}));
  EXPECT_EQ(r.log.count("conv_activation_fusion"), 1u);
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvActivationFusion, LeavesFloat64AndOtherOps) {
  OnnxBuilder f64(17);
  f64.input("x", 11, {1, 1, 3, 3});
  f64.input("w", 11, {1, 1, 2, 2});
  f64.node("Conv", {"x", "w"}, {"c"}, "conv");
  f64.node("Relu", {"c"}, {"y"}, "relu");
  f64.output("y");
  EXPECT_EQ(op_types(run_pass(f64, pass()).after), (std::vector<std::string>{"Conv", "Relu"}));

  OnnxBuilder mm(17);
  mm.input("x", 1, {2, 3});
  mm.initializer("w", {3, 2}, testing::weights(6));
  mm.node("MatMul", {"x", "w"}, {"m"}, "mm");
  mm.node("Relu", {"m"}, {"y"}, "relu");
  mm.output("y");
  EXPECT_EQ(op_types(run_pass(mm, pass()).after), (std::vector<std::string>{"MatMul", "Relu"}));
}

}  // namespace conv_activation_fusion_test
}  // namespace kiln
