#include "passes/attention_fusion.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"

namespace kiln {
namespace attention_fusion_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;
using testing::set_attr_int;
using testing::set_attr_ints;

const passes::PassDef& pass() { return passes::attention_fusion_pass(); }

// What torch's multi-head attention exports for 2 heads of 4 over 5 tokens: q, k, v [5, 2, 4]
// (tokens, heads, depth) -> heads first (Transpose), q / sqrt(4), k to [heads, depth, tokens],
// scores, Softmax over the keys, @ v, back to [tokens, heads, depth].
struct Options {
  bool scale_scores = false;  // the 1 / sqrt(d) on the scores instead of on q (Mul by 0.5)
  int softmax_opset = 13;     // the Softmax's axis attribute: -1 (13) or 2 (11)
  int64_t softmax_axis = -1;
  bool out_transpose = true;
  std::vector<int64_t> out_perm = {1, 0, 2};
  bool scores_output = false;  // the scores are a graph output too
  bool reciprocal = false;     // c / q instead of q / c: not a scale
};
OnnxBuilder mha(const Options& o = {}) {
  OnnxBuilder b(o.softmax_opset);
  for (const char* n : {"q", "k", "v"}) b.input(n, 1, {5, 2, 4});
  b.initializer("c", {}, {2.0f});
  b.initializer("half", {}, {0.5f});
  set_attr_ints(b.node("Transpose", {"q"}, {"qt"}, "tq"), "perm", {1, 0, 2});
  set_attr_ints(b.node("Transpose", {"k"}, {"kt"}, "tk"), "perm", {1, 2, 0});
  set_attr_ints(b.node("Transpose", {"v"}, {"vt"}, "tv"), "perm", {1, 0, 2});
  if (o.scale_scores) {
    b.node("MatMul", {"qt", "kt"}, {"s0"}, "mm1");
    b.node("Mul", {"half", "s0"}, {"s"}, "scale");
  } else {
    b.node("Div",
           o.reciprocal ? std::vector<std::string>{"c", "qt"} : std::vector<std::string>{"qt", "c"},
           {"qs"}, "scale");
    b.node("MatMul", {"qs", "kt"}, {"s"}, "mm1");
  }
  set_attr_int(b.node("Softmax", {"s"}, {"p"}, "softmax"), "axis", o.softmax_axis);
  b.node("MatMul", {"p", "vt"}, {o.out_transpose ? "o" : "y"}, "mm2");
  if (o.out_transpose) set_attr_ints(b.node("Transpose", {"o"}, {"y"}, "ty"), "perm", o.out_perm);
  b.output("y");
  if (o.scores_output) b.output("s");
  return b;
}

TEST(AttentionFusion, TorchMultiHeadAttention) {
  const auto r = run_pass(mha(), pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention"}));
  const ir::Node& fused = r.after.nodes[0];
  EXPECT_EQ(fused.name, "mm2");
  EXPECT_EQ(fused.inputs,
            (std::vector<ir::ValueId>{r.after.find_value("q"), r.after.find_value("k"),
                                      r.after.find_value("v")}));
  EXPECT_FLOAT_EQ(fused.attrs.get_float("scale", 0.0f), 0.5f);
  EXPECT_EQ(fused.attrs.get_ints("perm_q"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(fused.attrs.get_ints("perm_k"), (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(fused.attrs.get_ints("perm_v"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(fused.attrs.get_ints("perm_y"), (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(fused.fused_from,
            (std::vector<std::string>{"tq", "tk", "tv", "scale", "mm1", "softmax", "mm2", "ty"}));
  EXPECT_EQ(r.after.value(r.after.outputs[0]).desc.to_string(), "float32[5,2,4]");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(AttentionFusion, ScaleOnTheScoresAndTheOpset11Axis) {
  Options o;
  o.scale_scores = true;
  o.softmax_opset = 11;
  o.softmax_axis = 2;
  const auto r = run_pass(mha(o), pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention"}));
  EXPECT_FLOAT_EQ(r.after.nodes[0].attrs.get_float("scale", 0.0f), 0.5f);
  testing::expect_same_outputs(r.before, r.after);
}

TEST(AttentionFusion, AResultTransposeThatMovesTheRowsStaysOut) {
  Options o;
  o.out_perm = {2, 1, 0};  // the depth axis first: the result's rows would not be contiguous
  const auto r = run_pass(mha(o), pass());
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention", "Transpose"}));
  EXPECT_FALSE(r.after.nodes[0].attrs.has("perm_y"));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(AttentionFusion, AConstantDividedByQIsNotAScale) {
  Options o;
  o.reciprocal = true;
  const auto r = run_pass(mha(o), pass());
  // The Div stays, and so does the transpose behind it: Q is the Div's output.
  EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"Transpose", "Div", "kiln.Attention"}));
  EXPECT_FALSE(r.after.nodes[2].attrs.has("scale"));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(AttentionFusion, NoResultTranspose) {
  Options o;
  o.out_transpose = false;
  const auto r = run_pass(mha(o), pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention"}));
  EXPECT_EQ(r.after.value(r.after.outputs[0]).desc.to_string(), "float32[2,5,4]");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(AttentionFusion, SoftmaxOverAnotherAxisIsLeftAlone) {
  for (const auto& [opset, axis] : {std::pair{13, 1}, std::pair{11, 1}}) {
    Options o;
    o.softmax_opset = opset;
    o.softmax_axis = axis;
    const auto r = run_pass(mha(o), pass());
    EXPECT_EQ(op_types(r.after), op_types(r.before));
  }
}

TEST(AttentionFusion, ScoresReadOutsideTheChainAreLeftAlone) {
  Options o;
  o.scale_scores = true;
  o.scores_output = true;
  const auto r = run_pass(mha(o), pass());
  // The scores are also a graph output: the Mul that reads them may not be absorbed, nor the
  // MatMul behind it; nothing fuses.
  EXPECT_EQ(op_types(r.after), op_types(r.before));
}

// q @ k -> Softmax -> @ v (or v @ probabilities), inputs of `elem_type`.
OnnxBuilder chain(std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v,
                  int elem_type = 1, bool probabilities_second = false) {
  OnnxBuilder b;
  b.input("q", elem_type, std::move(q));
  b.input("k", elem_type, std::move(k));
  b.input("v", elem_type, std::move(v));
  b.node("MatMul", {"q", "k"}, {"s"}, "mm1");
  b.node("Softmax", {"s"}, {"p"}, "softmax");
  b.node("MatMul",
         probabilities_second ? std::vector<std::string>{"v", "p"}
                              : std::vector<std::string>{"p", "v"},
         {"y"}, "mm2");
  b.output("y");
  return b;
}

TEST(AttentionFusion, ProductsOfOtherShapesOrTypesAreLeftAlone) {
  // The plain chain fuses; the second product reading the probabilities as its second operand,
  // a 1-D value operand (MatMul's vector form) and float64 operands do not.
  EXPECT_EQ(op_types(run_pass(chain({2, 3, 4}, {2, 4, 3}, {2, 3, 5}), pass()).after),
            (std::vector<std::string>{"kiln.Attention"}));
  for (const OnnxBuilder& b :
       {chain({2, 3, 3}, {2, 3, 3}, {2, 3, 3}, 1, true), chain({2, 3, 4}, {2, 4, 3}, {3}),
        chain({2, 3, 3}, {2, 3, 3}, {2, 3, 3}, 11)}) {
    const auto r = run_pass(b, pass());
    EXPECT_EQ(op_types(r.after), op_types(r.before));
  }
}

// Hugging Face's BERT attention: q, k, v [batch 2, heads 2, s, 4], scores / 2 + a padding mask
// of `mask_dims`, the Add's operands in either order.
OnnxBuilder bert(int64_t s, std::vector<int64_t> mask_dims, bool mask_first = false,
                 bool divide_after_mask = false) {
  OnnxBuilder b;
  b.input("q", 1, {2, 2, s, 4});
  b.input("k", 1, {2, 2, 5, 4});
  b.input("v", 1, {2, 2, 5, 3});
  b.input("mask", 1, std::move(mask_dims));
  b.initializer("c", {}, {2.0f});
  set_attr_ints(b.node("Transpose", {"k"}, {"kt"}, "tk"), "perm", {0, 1, 3, 2});
  b.node("MatMul", {"q", "kt"}, {"s0"}, "mm1");
  const std::vector<std::string> add_in =
      mask_first ? std::vector<std::string>{"mask", "s1"} : std::vector<std::string>{"s1", "mask"};
  if (divide_after_mask) {
    b.node("Add", {"s0", "mask"}, {"s1"}, "add");
    b.node("Div", {"s1", "c"}, {"s"}, "scale");
  } else {
    b.node("Div", {"s0", "c"}, {"s1"}, "scale");
    b.node("Add", add_in, {"s"}, "add");
  }
  b.node("Softmax", {"s"}, {"p"}, "softmax");
  b.node("MatMul", {"p", "v"}, {"y"}, "mm2");
  b.output("y");
  return b;
}

TEST(AttentionFusion, HuggingFacePaddingMask) {
  for (bool mask_first : {false, true}) {
    const auto r = run_pass(bert(5, {2, 1, 1, 5}, mask_first), pass());
    ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention"}));
    const ir::Node& fused = r.after.nodes[0];
    ASSERT_EQ(fused.inputs.size(), 4u);
    EXPECT_EQ(fused.inputs[3], r.after.find_value("mask"));
    EXPECT_FLOAT_EQ(fused.attrs.get_float("scale", 0.0f), 0.5f);
    EXPECT_EQ(fused.attrs.get_ints("perm_k"), (std::vector<int64_t>{0, 1, 3, 2}));
    testing::expect_same_outputs(r.before, r.after);
  }
  // A [s, keys] mask (causal), and one adding a batch dim the scores lack.
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{5, 5}, {3, 1, 1, 1, 5}}) {
    const auto r = run_pass(bert(5, dims), pass());
    ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention"}));
    testing::expect_same_outputs(r.before, r.after);
  }
}

TEST(AttentionFusion, MasksThatAreNotAddedToTheScaledScoresStayOut) {
  // A mask of 4 query rows for the scores' single one would add rows: not fused.
  auto r = run_pass(bert(1, {2, 1, 4, 5}), pass());
  EXPECT_EQ(op_types(r.after), op_types(r.before));
  // Scaling after the mask scales the mask too: not the op's scale * scores + mask.
  r = run_pass(bert(5, {2, 1, 1, 5}, false, true), pass());
  EXPECT_EQ(op_types(r.after), op_types(r.before));
}

TEST(AttentionFusion, BroadcastBatchesAndATensorScaleStayExact) {
  // q [2, 3, 4] against one k and v for both batches; the Div's divisor is a [1] tensor (scalar
  // by value) and the scores' Mul a [2, 1, 1] tensor (not a scalar: stays out, and so does the
  // chain behind it).
  OnnxBuilder b;
  b.input("q", 1, {2, 3, 4});
  b.input("k", 1, {1, 4, 6});
  b.input("v", 1, {6, 5});
  b.initializer("c", {1}, {4.0f});
  b.node("Div", {"q", "c"}, {"qs"}, "scale");
  b.node("MatMul", {"qs", "k"}, {"s"}, "mm1");
  b.node("Softmax", {"s"}, {"p"}, "softmax");
  b.node("MatMul", {"p", "v"}, {"y"}, "mm2");
  b.output("y");
  auto r = run_pass(b, pass());
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Attention"}));
  EXPECT_FLOAT_EQ(r.after.nodes[0].attrs.get_float("scale", 0.0f), 0.25f);
  EXPECT_EQ(r.after.value(r.after.outputs[0]).desc.to_string(), "float32[2,3,5]");
  testing::expect_same_outputs(r.before, r.after);

  OnnxBuilder c;
  c.input("q", 1, {2, 3, 4});
  c.input("k", 1, {2, 4, 6});
  c.input("v", 1, {2, 6, 5});
  c.initializer("w", {2, 1, 1}, {0.5f, 2.0f});
  c.node("MatMul", {"q", "k"}, {"s0"}, "mm1");
  c.node("Mul", {"s0", "w"}, {"s"}, "scale");
  c.node("Softmax", {"s"}, {"p"}, "softmax");
  c.node("MatMul", {"p", "v"}, {"y"}, "mm2");
  c.output("y");
  r = run_pass(c, pass());
  EXPECT_EQ(op_types(r.after), op_types(r.before));
}

}  // namespace attention_fusion_test
}  // namespace kiln
