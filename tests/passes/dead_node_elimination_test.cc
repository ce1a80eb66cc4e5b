#include "passes/dead_node_elimination.h"

#include <gtest/gtest.h>

#include "ir/graph_edit.h"
#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"

namespace kiln {
namespace dead_node_elimination_test {

using testing::OnnxBuilder;
using testing::op_types;
using Ops = std::vector<std::string>;

constexpr int kFloat = onnx::TensorProto::FLOAT;

const passes::PassDef& pass() { return passes::dead_node_elimination_pass(); }

TEST(DeadNodeElimination, RemovesUnreadNodesAndTheirInitializers) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.initializer("w", {3}, {1, 2, 3});        // read only by the dead Mul
  b.initializer("never_read", {2}, {5, 6});  // read by nobody
  b.initializer("kept", {3}, {1, 1, 1});
  b.node("Mul", {"x", "w"}, {"m"}, "dead_mul");
  b.node("Sigmoid", {"m"}, {"s"}, "dead_sigmoid");
  b.node("Add", {"x", "kept"}, {"y"}, "add");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Add"}));
  for (const char* gone : {"w", "never_read", "m", "s"}) {
    EXPECT_EQ(r.after.find_value(gone), ir::kNoValue) << gone;
  }
  ASSERT_NE(r.after.find_value("kept"), ir::kNoValue);
  EXPECT_TRUE(r.after.value(r.after.find_value("kept")).initializer.has_value());
  EXPECT_EQ(r.after.values.size(), 3u);  // x, kept, y
  EXPECT_TRUE(testing::logged(r.log, "dead_node_elimination", {"dead_mul", "Mul"}));
  EXPECT_TRUE(testing::logged(r.log, "dead_node_elimination", {"dead_sigmoid"}));
  EXPECT_TRUE(testing::logged(r.log, "dead_node_elimination",
                              {"2 unused initializer", "20 bytes", "w", "never_read"}));
  testing::expect_same_outputs(r.before, r.after);
}

// Guard: graph inputs (with or without a default) and graph outputs are the model's interface.
TEST(DeadNodeElimination, KeepsGraphInputsAndOutputs) {
  OnnxBuilder b;
  b.input("x", kFloat, {2});
  b.input("unused_input", kFloat, {2});
  b.input("unused_default", kFloat, {2});
  b.initializer("unused_default", {2}, {1, 2});
  b.initializer("const_out", {2}, {3, 4});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y").output("const_out");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu"}));
  EXPECT_EQ(r.after.inputs.size(), 3u);
  const ir::ValueId def = r.after.find_value("unused_default");
  ASSERT_NE(def, ir::kNoValue);
  EXPECT_TRUE(r.after.value(def).initializer.has_value());
  const ir::ValueId out = r.after.find_value("const_out");
  ASSERT_NE(out, ir::kNoValue);
  EXPECT_TRUE(r.after.value(out).initializer.has_value());
  EXPECT_EQ(r.log.count("dead_node_elimination"), 0u);
  testing::expect_same_outputs(r.before, r.after);
}

// A graph whose values are all live: the pass changes nothing, ids included.
TEST(DeadNodeElimination, LeavesALiveGraphAlone) {
  OnnxBuilder b;
  b.input("x", kFloat, {2});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(r.after.dump(), r.before.dump());
  EXPECT_EQ(r.log.entries().size(), 0u);
}

// compact_values renumbers every reference consistently.
TEST(CompactValues, RenumbersNodesInputsOutputsAndNames) {
  OnnxBuilder b;
  b.input("x", kFloat, {2});
  b.initializer("w", {2}, {1, 2});
  b.node("Neg", {"x"}, {"dead"}, "neg");
  b.node("Mul", {"x", "w"}, {"m"}, "mul");
  b.node("Relu", {"m"}, {"y"}, "relu");
  b.node("Abs", {"m"}, {"z"}, "abs");
  b.output("z").output("y");
  ir::Graph g = testing::import_model(b);
  const ir::Graph before = g;
  g.nodes.erase(g.nodes.begin());  // "dead" now has no reference
  EXPECT_EQ(ir::compact_values(g), 1);
  ASSERT_TRUE(g.verify().is_ok()) << g.dump();
  EXPECT_EQ(g.values.size(), before.values.size() - 1);
  EXPECT_EQ(g.find_value("dead"), ir::kNoValue);
  for (size_t v = 0; v < g.values.size(); ++v) {
    EXPECT_EQ(g.find_value(g.values[v].name), static_cast<ir::ValueId>(v)) << g.values[v].name;
  }
  EXPECT_EQ(g.value(g.inputs[0]).name, "x");
  EXPECT_EQ(g.value(g.outputs[0]).name, "z");
  EXPECT_EQ(g.value(g.outputs[1]).name, "y");
  EXPECT_TRUE(g.value(g.outputs[0]).is_graph_output);
  EXPECT_EQ(g.value(g.nodes[0].inputs[1]).name, "w");
  EXPECT_TRUE(g.value(g.nodes[0].inputs[1]).initializer.has_value());
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[0].outputs[0]);
  EXPECT_EQ(g.nodes[2].inputs[0], g.nodes[0].outputs[0]);
  EXPECT_EQ(g.name, before.name);
  EXPECT_EQ(g.opset_imports, before.opset_imports);
  testing::expect_same_outputs(before, g);
  EXPECT_EQ(ir::compact_values(g), 0);
}

}  // namespace dead_node_elimination_test
}  // namespace kiln
