#include "passes/identity_elimination.h"

#include <gtest/gtest.h>

#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"

namespace kiln {
namespace identity_elimination_test {

using testing::OnnxBuilder;
using testing::op_types;
using Ops = std::vector<std::string>;

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kBool = onnx::TensorProto::BOOL;

const passes::PassDef& pass() { return passes::identity_elimination_pass(); }

TEST(IdentityElimination, RemovesIdentityDropoutAndSameDtypeCast) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Identity", {"a"}, {"b"}, "id");
  b.node("Dropout", {"b"}, {"c"}, "drop");
  testing::set_attr_int(b.node("Cast", {"c"}, {"d"}, "cast"), "to", kFloat);
  b.node("Sigmoid", {"d"}, {"y"}, "sig");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Sigmoid"}));
  EXPECT_EQ(r.after.nodes[1].inputs[0], r.after.find_value("a"));
  EXPECT_EQ(r.log.count("identity_elimination"), 3u);
  EXPECT_TRUE(testing::logged(r.log, "identity_elimination", {"id"}));
  EXPECT_TRUE(testing::logged(r.log, "identity_elimination", {"drop"}));
  EXPECT_TRUE(testing::logged(r.log, "identity_elimination", {"cast", "float32"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(IdentityElimination, RemovesCastLikeToTheSameDtype) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.initializer("like", {1}, {0});
  b.node("CastLike", {"x", "like"}, {"c"}, "cast_like");
  b.node("Relu", {"c"}, {"y"}, "relu");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu"}));
  EXPECT_TRUE(testing::logged(r.log, "identity_elimination", {"cast_like", "CastLike"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(IdentityElimination, KeepsCastToAnotherDtype) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  testing::set_attr_int(b.node("Cast", {"x"}, {"d"}, "cast"), "to", onnx::TensorProto::DOUBLE);
  b.node("Relu", {"d"}, {"y"}, "relu");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Cast", "Relu"}));
  EXPECT_EQ(r.log.count("identity_elimination"), 0u);
}

TEST(IdentityElimination, RemovedProducerOfAGraphOutputKeepsTheOutputName) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Identity", {"a"}, {"y"}, "id");
  b.node("Neg", {"y"}, {"z"}, "neg");  // reads the graph output too
  b.output("y").output("z");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Relu", "Neg"}));
  const ir::ValueId y = r.after.outputs[0];
  EXPECT_EQ(r.after.value(y).name, "y");
  EXPECT_EQ(r.after.nodes[0].outputs[0], y);
  EXPECT_EQ(r.after.nodes[1].inputs[0], y);
  testing::expect_same_outputs(r.before, r.after);
}

// Guard: a graph input cannot also be the graph output under another name.
TEST(IdentityElimination, KeepsIdentityFromGraphInputToGraphOutput) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.node("Identity", {"x"}, {"y"}, "id");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Identity"}));
  EXPECT_EQ(r.log.count("identity_elimination"), 0u);
}

// Guard: likewise for an initializer, and for two graph outputs that would become one value.
TEST(IdentityElimination, KeepsIdentityWhoseInputCannotTakeTheOutputName) {
  OnnxBuilder b;
  b.input("x", kFloat, {2});
  b.initializer("w", {2}, {1, 2});
  b.node("Identity", {"w"}, {"y1"}, "id_w");
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Identity", {"a"}, {"y2"}, "id_a");
  b.output("y1").output("a").output("y2");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Identity", "Relu", "Identity"}));
}

TEST(IdentityElimination, RemovesDropoutWithUnreadMaskAndFalseTrainingMode) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  testing::bool_initializer(b, "training", {}, {false});
  b.initializer("ratio", {}, {0.5f});
  b.node("Dropout", {"x", "ratio", "training"}, {"a", "mask"}, "drop");
  b.node("Relu", {"a"}, {"y"}, "relu");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu"}));
  testing::expect_same_outputs(r.before, r.after);
}

// Guard: the mask is read.
TEST(IdentityElimination, KeepsDropoutWhoseMaskIsRead) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.node("Dropout", {"x"}, {"a", "mask"}, "drop");
  b.node("Not", {"mask"}, {"m"}, "not");
  b.output("a").output("m");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Dropout", "Not"}));
}

// Guard: training_mode given at run time may be true.
TEST(IdentityElimination, KeepsDropoutWithRuntimeTrainingMode) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  b.input("training", kBool, {});
  b.node("Dropout", {"x", "", "training"}, {"a"}, "drop");
  b.node("Relu", {"a"}, {"y"}, "relu");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Dropout", "Relu"}));
}

// Guard: training_mode constant true (import rejects it; the pass must not rely on that).
TEST(IdentityElimination, KeepsDropoutInTrainingMode) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  testing::bool_initializer(b, "training", {}, {false});
  b.node("Dropout", {"x", "", "training"}, {"a"}, "drop");
  b.node("Relu", {"a"}, {"y"}, "relu");
  b.output("y");
  ir::Graph g = testing::import_model(b);
  ir::Value& training = g.value(g.find_value("training"));
  training.initializer = Tensor::scalar<bool>(true);
  passes::PassLog log = testing::run_on(g, pass());
  EXPECT_EQ(op_types(g), (Ops{"Dropout", "Relu"}));
  EXPECT_EQ(log.count("identity_elimination"), 0u);
}

}  // namespace identity_elimination_test
}  // namespace kiln
