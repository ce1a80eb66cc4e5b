#include "passes/transpose_reshape_elimination.h"

#include <gtest/gtest.h>

#include "io/random_input.h"
#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"

namespace kiln {
namespace transpose_reshape_elimination_test {

using testing::OnnxBuilder;
using testing::op_types;
using Ops = std::vector<std::string>;
using Names = std::vector<std::string>;

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr std::string_view kPass = "transpose_reshape_elimination";

const passes::PassDef& pass() { return passes::transpose_reshape_elimination_pass(); }

void expect_unchanged(const testing::PassResult& r) {
  EXPECT_EQ(r.after.dump(), r.before.dump());
  EXPECT_EQ(r.log.count(kPass), 0u);
}

TEST(TransposeReshapeElimination, RemovesIdentityTranspose) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  b.node("Relu", {"x"}, {"a"}, "relu");
  testing::set_attr_ints(b.node("Transpose", {"a"}, {"t"}, "transpose"), "perm", {0, 1, 2});
  b.node("Neg", {"t"}, {"y"}, "neg");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Neg"}));
  EXPECT_TRUE(testing::logged(r.log, kPass, {"transpose", "identity perm"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(TransposeReshapeElimination, RemovesTransposesThatCancel) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4, 5});
  b.node("Relu", {"x"}, {"a"}, "relu");
  testing::set_attr_ints(b.node("Transpose", {"a"}, {"t1"}, "to_nhwc"), "perm", {0, 2, 3, 1});
  testing::set_attr_ints(b.node("Transpose", {"t1"}, {"y"}, "to_nchw"), "perm", {0, 3, 1, 2});
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Relu"}));
  EXPECT_EQ(r.after.value(r.after.nodes[0].outputs[0]).name, "y");  // the output keeps its name
  EXPECT_TRUE(testing::logged(r.log, kPass, {"to_nhwc + to_nchw", "cancel"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(TransposeReshapeElimination, MergesTwoTransposesIntoOne) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  testing::set_attr_ints(b.node("Transpose", {"x"}, {"t1"}, "t1"), "perm", {1, 0, 2});  // [3,2,4]
  testing::set_attr_ints(b.node("Transpose", {"t1"}, {"y"}, "t2"), "perm", {0, 2, 1});  // [3,4,2]
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Transpose"}));
  const ir::Node& t = r.after.nodes[0];
  EXPECT_EQ(t.name, "t2");
  // out[j] = x[p1[p2[j]]]: [p1[0], p1[2], p1[1]] = [1, 2, 0], and x [2,3,4] -> [3,4,2].
  EXPECT_EQ(t.attrs.get_ints("perm"), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(t.fused_from, (Names{"t1", "t2"}));
  EXPECT_TRUE(testing::logged(r.log, kPass, {"t1 + t2", "[1, 2, 0]"}));
  testing::expect_same_outputs(r.before, r.after);
}

// A Transpose without perm reverses the dims: twice is the identity.
TEST(TransposeReshapeElimination, ComposesDefaultPerms) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Transpose", {"a"}, {"t1"}, "t1");
  b.node("Transpose", {"t1"}, {"t2"}, "t2");
  b.node("Neg", {"t2"}, {"y"}, "neg");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Neg"}));
  testing::expect_same_outputs(r.before, r.after);
}

// Guard: the first Transpose's output is read by another node too.
TEST(TransposeReshapeElimination, KeepsTransposeChainWithSharedIntermediate) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  testing::set_attr_ints(b.node("Transpose", {"x"}, {"t1"}, "t1"), "perm", {1, 0, 2});
  testing::set_attr_ints(b.node("Transpose", {"t1"}, {"y"}, "t2"), "perm", {0, 2, 1});
  b.node("Relu", {"t1"}, {"z"}, "relu");
  b.output("y").output("z");
  expect_unchanged(testing::run_pass(b, pass()));
}

// When the two cancel, the second goes even if the first has other readers (they keep it).
TEST(TransposeReshapeElimination, CancelsTheSecondTransposeOfASharedIntermediate) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  b.node("Relu", {"x"}, {"a"}, "relu");
  testing::set_attr_ints(b.node("Transpose", {"a"}, {"t1"}, "t1"), "perm", {1, 0, 2});
  testing::set_attr_ints(b.node("Transpose", {"t1"}, {"t2"}, "t2"), "perm", {1, 0, 2});
  b.node("Neg", {"t2"}, {"y"}, "neg");
  b.node("Abs", {"t1"}, {"z"}, "abs");
  b.output("y").output("z");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Transpose", "Neg", "Abs"}));
  testing::expect_same_outputs(r.before, r.after);
}

// Guard: a graph input cannot become a graph output under another name.
TEST(TransposeReshapeElimination, KeepsNoOpFromGraphInputToGraphOutput) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  testing::set_attr_ints(b.node("Transpose", {"x"}, {"y"}, "transpose"), "perm", {0, 1});
  b.output("y");
  expect_unchanged(testing::run_pass(b, pass()));
}

TEST(TransposeReshapeElimination, MergesReshapeChains) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  testing::int64_initializer(b, "s1", {2}, {6, 4});
  testing::int64_initializer(b, "s2", {3}, {4, -1, 2});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Flatten", {"a"}, {"f"}, "flatten");    // [2, 12]
  b.node("Reshape", {"f", "s1"}, {"r1"}, "r1");  // [6, 4]
  b.node("Reshape", {"r1", "s2"}, {"y"}, "r2");  // [4, 3, 2]
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Relu", "Reshape"}));
  const ir::Node& merged = r.after.nodes[1];
  EXPECT_EQ(merged.name, "r2");
  EXPECT_EQ(merged.inputs[0], r.after.find_value("a"));
  EXPECT_EQ(merged.fused_from, (Names{"flatten", "r1", "r2"}));
  EXPECT_TRUE(testing::logged(r.log, kPass, {"r1 + r2", "[4, -1, 2]"}));
  testing::expect_same_outputs(r.before, r.after);
}

// Guard: a 0 in the second shape copies a dim of the intermediate, not of x.
TEST(TransposeReshapeElimination, KeepsReshapeChainCopyingIntermediateDims) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  testing::int64_initializer(b, "s1", {2}, {6, 4});
  testing::int64_initializer(b, "s2", {3}, {0, 2, 2});  // [6, 2, 2]: the 6 comes from r1
  b.node("Reshape", {"x", "s1"}, {"r1"}, "r1");
  b.node("Reshape", {"r1", "s2"}, {"y"}, "r2");
  b.output("y");
  expect_unchanged(testing::run_pass(b, pass()));
}

// Guard: the intermediate is read by another node.
TEST(TransposeReshapeElimination, KeepsReshapeChainWithSharedIntermediate) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3, 4});
  testing::int64_initializer(b, "s1", {2}, {6, 4});
  testing::int64_initializer(b, "s2", {2}, {4, 6});
  b.node("Reshape", {"x", "s1"}, {"r1"}, "r1");
  b.node("Reshape", {"r1", "s2"}, {"y"}, "r2");
  b.node("Relu", {"r1"}, {"z"}, "relu");
  b.output("y").output("z");
  expect_unchanged(testing::run_pass(b, pass()));
}

TEST(TransposeReshapeElimination, RemovesReshapesToTheSameShape) {
  OnnxBuilder b;
  b.input("x", kFloat, {2, 3});
  testing::int64_initializer(b, "same", {2}, {2, 3});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Reshape", {"a", "same"}, {"r"}, "reshape");
  b.node("Flatten", {"r"}, {"f"}, "flatten");  // [2, 3] with axis 1: unchanged
  b.node("Neg", {"f"}, {"n"}, "neg");
  testing::int64_initializer(b, "axes", {1}, {0});
  b.node("Unsqueeze", {"n", "axes"}, {"u"}, "unsqueeze");  // [1, 2, 3]: a real change
  b.node("Squeeze", {"u", "axes"}, {"y"}, "squeeze");      // back: its output is a graph output
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  // Unsqueeze -> Squeeze is not a Reshape chain; the Squeeze alone changes the shape.
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Neg", "Unsqueeze", "Squeeze"}));
  EXPECT_TRUE(testing::logged(r.log, kPass, {"reshape", "float32[2,3]"}));
  EXPECT_TRUE(testing::logged(r.log, kPass, {"flatten"}));
  testing::expect_same_outputs(r.before, r.after);
}

// A symbolic dim is the same value wherever it appears: [batch, 3] -> [-1, 3] is [batch, 3].
TEST(TransposeReshapeElimination, RemovesReshapeToTheSameSymbolicShape) {
  OnnxBuilder b;
  b.input("x", kFloat, {-1, 3}, {"batch"});
  testing::int64_initializer(b, "shape", {2}, {-1, 3});
  b.node("Relu", {"x"}, {"a"}, "relu");
  b.node("Reshape", {"a", "shape"}, {"y"}, "reshape");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Relu"}));
  EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
  Result<Tensor> x = io::random_tensor(DType::kF32, {5, 3}, 3);
  ASSERT_TRUE(x.is_ok());
  testing::expect_same_outputs(r.before, r.after, {{"x", *x}});
}

// nn.MultiheadAttention's [1, s, d] -> [s, 1, d] with a batch of 1 moves no data.
TEST(TransposeReshapeElimination, ATransposeOfSize1DimsBecomesAReshape) {
  OnnxBuilder b;
  b.input("x", kFloat, {1, 5, 1, 4});
  b.node("Relu", {"x"}, {"a"}, "relu");
  testing::set_attr_ints(b.node("Transpose", {"a"}, {"t"}, "to_seq_first"), "perm", {1, 2, 0, 3});
  b.node("Neg", {"t"}, {"y"}, "neg");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (Ops{"Relu", "Reshape", "Neg"}));
  const Tensor* shape = r.after.value(r.after.nodes[1].inputs[1]).constant();
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(shape->to_int64_vector(), (std::vector<int64_t>{5, 1, 1, 4}));
  EXPECT_TRUE(testing::logged(r.log, kPass, {"to_seq_first", "moves only dims of size 1"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(TransposeReshapeElimination, TheReshapeOfATransposeOfSize1DimsMergesWithTheNext) {
  OnnxBuilder b;
  b.input("x", kFloat, {5, 1, 4});
  testing::int64_initializer(b, "shape", {2}, {5, 4});
  b.node("Relu", {"x"}, {"a"}, "relu");
  testing::set_attr_ints(b.node("Transpose", {"a"}, {"t"}, "t"), "perm", {1, 0, 2});
  b.node("Reshape", {"t", "shape"}, {"r"}, "reshape");
  b.node("Neg", {"r"}, {"y"}, "neg");
  b.output("y");
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Reshape", "Neg"}));
  testing::expect_same_outputs(r.before, r.after);
}

// Guards: a dim of size > 1 changes place (the data moves), or a symbolic batch may be > 1.
TEST(TransposeReshapeElimination, KeepsATransposeThatMovesData) {
  for (const bool symbolic : {false, true}) {
    OnnxBuilder b;
    if (symbolic) {
      b.input("x", kFloat, {-1, 5, 4}, {"batch"});
    } else {
      b.input("x", kFloat, {1, 5, 4});
    }
    b.node("Relu", {"x"}, {"a"}, "relu");
    testing::set_attr_ints(
        b.node("Transpose", {"a"}, {"t"}, "t"), "perm",
        symbolic ? std::vector<int64_t>{1, 0, 2} : std::vector<int64_t>{0, 2, 1});
    b.node("Neg", {"t"}, {"y"}, "neg");
    b.output("y");
    expect_unchanged(testing::run_pass(b, pass()));
  }
}

// Guard: unknown dims (no symbol) may differ at run time.
TEST(TransposeReshapeElimination, KeepsReshapeBetweenUnknownDims) {
  OnnxBuilder b;
  b.input("x", kFloat, {-1, 3});
  b.input("shape", onnx::TensorProto::INT64, {2});
  b.node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  b.node("Relu", {"r"}, {"y"}, "relu");
  b.output("y");
  expect_unchanged(testing::run_pass(b, pass()));
}

}  // namespace transpose_reshape_elimination_test
}  // namespace kiln
