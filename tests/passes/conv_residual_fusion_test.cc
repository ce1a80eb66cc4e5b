#include "passes/conv_residual_fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"
#include "passes/conv_activation_fusion.h"

namespace kiln {
namespace conv_residual_fusion_test {

using testing::conv_model;
using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;

const passes::PassDef& pass() { return passes::conv_residual_fusion_pass(); }

OnnxBuilder residual_model(std::vector<int64_t> z_dims, bool conv_first = true) {
  OnnxBuilder b = conv_model();
  b.input("z", 1, std::move(z_dims));
  b.node("Add",
         conv_first ? std::vector<std::string>{"c", "z"} : std::vector<std::string>{"z", "c"},
         {"y"}, "add");
  b.output("y");
  return b;
}

TEST(ConvResidualFusion, AddOfConvAndSameShapeValue) {
  for (bool conv_first : {true, false}) {
    const auto r = run_pass(residual_model({1, 3, 5, 5}, conv_first), pass());
    ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
    const ir::Node& fused = r.after.nodes[0];
    ASSERT_EQ(fused.inputs.size(), 4u);
    EXPECT_EQ(fused.inputs[3], r.after.find_value("z"));
    EXPECT_FALSE(fused.attrs.has("activation"));
    EXPECT_EQ(fused.fused_from, (std::vector<std::string>{"conv", "add"}));
    EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
    EXPECT_EQ(r.after.opset_imports.at("kiln"), 1);
    ASSERT_EQ(r.log.entries().size(), 1u);
    EXPECT_EQ(r.log.entries()[0].message, "fused conv + add into kiln.FusedConv 'conv'");
    testing::expect_same_outputs(r.before, r.after);
  }
}

TEST(ConvResidualFusion, ConvWithoutBiasLeavesBSlotEmpty) {
  OnnxBuilder b = conv_model(17, /*bias=*/false);
  b.input("z", 1, {1, 3, 5, 5});
  b.node("Add", {"c", "z"}, {"y"}, "add");
  b.output("y");
  const auto r = run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
  EXPECT_EQ(r.after.nodes[0].inputs[2], ir::kNoValue);
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvResidualFusion, BothOperandsConvsFusesTheLaterOne) {
  for (bool later_first : {false, true}) {
    OnnxBuilder b = conv_model();
    b.initializer("w2", {3, 2, 1, 1}, testing::weights(6, 1.0f));
    b.node("Conv", {"x", "w2"}, {"c2"}, "conv2");
    b.node("Add",
           later_first ? std::vector<std::string>{"c2", "c"} : std::vector<std::string>{"c", "c2"},
           {"y"}, "add");
    b.output("y");
    const auto r = run_pass(b, pass());
    ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"Conv", "kiln.FusedConv"}));
    EXPECT_EQ(r.after.nodes[1].name, "conv2");
    EXPECT_EQ(r.after.nodes[1].inputs[3], r.after.find_value("c"));
    testing::expect_same_outputs(r.before, r.after);
  }
}

TEST(ConvResidualFusion, SymbolicDimsMustBeTheSameSymbol) {
  OnnxBuilder same = conv_model();
  same.model().mutable_graph()->clear_input();
  same.input("x", 1, {-1, 2, 5, 5}, {"batch", "", "", ""});
  same.input("z", 1, {-1, 3, 5, 5}, {"batch", "", "", ""});
  same.node("Add", {"c", "z"}, {"y"}, "add");
  same.output("y");
  const auto r = run_pass(same, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv"}));
  testing::expect_same_outputs(r.before, r.after,
                               {{"x", testing::f32({2, 2, 5, 5}, testing::weights(100))},
                                {"z", testing::f32({2, 3, 5, 5}, testing::weights(150, 0.5f))}});

  // Another symbol, or an unnamed unknown dim, could be 1 and broadcast.
  for (const std::string& symbol : {std::string("n"), std::string()}) {
    OnnxBuilder other = conv_model();
    other.model().mutable_graph()->clear_input();
    other.input("x", 1, {-1, 2, 5, 5}, {"batch", "", "", ""});
    other.input("z", 1, {-1, 3, 5, 5}, {symbol, "", "", ""});
    other.node("Add", {"c", "z"}, {"y"}, "add");
    other.output("y");
    EXPECT_EQ(op_types(run_pass(other, pass()).after), (std::vector<std::string>{"Conv", "Add"}));
  }
}

TEST(ConvResidualFusion, BroadcastingOperandIsNot) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{1, 3, 1, 1}, std::vector<int64_t>{3, 5, 5}, std::vector<int64_t>{5}}) {
    const auto r = run_pass(residual_model(dims), pass());
    EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"Conv", "Add"}));
    EXPECT_EQ(r.log.entries().size(), 0u);
  }
}

TEST(ConvResidualFusion, ConvOutputReadElsewhere) {
  OnnxBuilder b = residual_model({1, 3, 5, 5});
  b.output("c");
  EXPECT_EQ(op_types(run_pass(b, pass()).after), (std::vector<std::string>{"Conv", "Add"}));
  // Add(c, c): the conv output is read twice.
  OnnxBuilder twice = conv_model();
  twice.node("Add", {"c", "c"}, {"y"}, "add");
  twice.output("y");
  EXPECT_EQ(op_types(run_pass(twice, pass()).after), (std::vector<std::string>{"Conv", "Add"}));
}

TEST(ConvResidualFusion, NotAfterAnActivation) {
  // conv -> Relu (fused first) -> Add: the residual would have to be added before the Relu.
  OnnxBuilder b = conv_model();
  b.input("z", 1, {1, 3, 5, 5});
  b.node("Relu", {"c"}, {"r"}, "relu");
  b.node("Add", {"r", "z"}, {"y"}, "add");
  b.output("y");
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after =
      testing::run_passes(before, {&passes::conv_activation_fusion_pass(), &pass()}, log);
  EXPECT_EQ(op_types(after), (std::vector<std::string>{"kiln.FusedConv", "Add"}));
  testing::expect_same_outputs(before, after);
}

TEST(ConvResidualFusion, NotTwice) {
  // Add(Add(conv, z), z2): the second Add sees a FusedConv that already has a residual.
  OnnxBuilder b = residual_model({1, 3, 5, 5});
  b.model().mutable_graph()->clear_output();
  b.input("z2", 1, {1, 3, 5, 5});
  b.node("Add", {"y", "z2"}, {"y2"}, "add2");
  b.output("y2");
  const auto r = run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.FusedConv", "Add"}));
  testing::expect_same_outputs(r.before, r.after);
}

}  // namespace conv_residual_fusion_test
}  // namespace kiln
