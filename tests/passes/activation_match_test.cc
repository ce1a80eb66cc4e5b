// passes/activation_match: every spelling it recognises (checked to compute the activation it
// reports), and a negative test for each guard.
#include "passes/activation_match.h"

#include <gtest/gtest.h>

#include <limits>

#include "fusion_test_util.h"
#include "runtime/reference_executor.h"

namespace kiln {
namespace activation_match_test {

using kernels::ref::Activation;
using kernels::ref::ActivationParams;
using testing::constant_node;
using testing::OnnxBuilder;

// x [2, 3, 4] -> (what the test adds) -> y.
OnnxBuilder model(int opset = 17) {
  OnnxBuilder b(opset);
  b.input("x", 1, {2, 3, 4});
  b.output("y");
  return b;
}

std::optional<passes::ActivationMatch> match_on(const ir::Graph& g, const std::string& v = "x") {
  ir::GraphIndex index(g);
  return passes::match_activation(g, index, g.find_value(v));
}

// The match on x is `want`, made of `num_nodes` nodes and ending at y; and the graph computes that
// activation on x over [-5.5, 6].
void expect_activation(const OnnxBuilder& b, ActivationParams want, size_t num_nodes) {
  const ir::Graph g = testing::import_model(b);
  const std::optional<passes::ActivationMatch> m = match_on(g);
  ASSERT_TRUE(m.has_value()) << g.dump();
  EXPECT_EQ(m->params.kind, want.kind) << kernels::ref::activation_name(m->params.kind);
  EXPECT_FLOAT_EQ(m->params.alpha, want.alpha);
  EXPECT_FLOAT_EQ(m->params.beta, want.beta);
  EXPECT_EQ(m->nodes.size(), num_nodes);
  EXPECT_TRUE(std::is_sorted(m->nodes.begin(), m->nodes.end()));
  EXPECT_EQ(m->output, g.find_value("y"));

  std::vector<float> xs(24);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = -5.5f + 0.5f * static_cast<float>(i);
  auto exec = runtime::ReferenceExecutor::create(g);
  ASSERT_TRUE(exec.is_ok()) << exec.status().to_string();
  auto out = exec->run({{"x", testing::f32({2, 3, 4}, xs)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  std::vector<float> expected = xs;
  kernels::ref::apply_activation(want, expected.data(), 24);
  EXPECT_EQ(testing::compare_tensors((*out)[0], testing::f32({2, 3, 4}, expected), {1e-5, 1e-6}),
            "");
}

void expect_no_match(const OnnxBuilder& b, const std::string& v = "x") {
  const ir::Graph g = testing::import_model(b);
  EXPECT_FALSE(match_on(g, v).has_value()) << g.dump();
}

constexpr float kMax = std::numeric_limits<float>::max();

// --- single ops -------------------------------------------------------------------------------

TEST(ActivationMatch, SingleOps) {
  for (const auto& [op, kind] :
       std::vector<std::pair<std::string, Activation>>{{"Relu", Activation::kRelu},
                                                       {"Sigmoid", Activation::kSigmoid},
                                                       {"Tanh", Activation::kTanh},
                                                       {"HardSwish", Activation::kHardSwish}}) {
    OnnxBuilder b = model();
    b.node(op, {"x"}, {"y"}, "act");
    expect_activation(b, {kind}, 1);
  }
}

TEST(ActivationMatch, OpsWithAttributesAndDefaults) {
  OnnxBuilder leaky = model();
  testing::set_attr_float(leaky.node("LeakyRelu", {"x"}, {"y"}, "act"), "alpha", 0.25f);
  expect_activation(leaky, {Activation::kLeakyRelu, 0.25f}, 1);
  OnnxBuilder leaky_default = model();
  leaky_default.node("LeakyRelu", {"x"}, {"y"}, "act");
  expect_activation(leaky_default, {Activation::kLeakyRelu, 0.01f}, 1);
  OnnxBuilder hs = model();
  auto& n = hs.node("HardSigmoid", {"x"}, {"y"}, "act");
  testing::set_attr_float(n, "alpha", 0.3f);
  expect_activation(hs, {Activation::kHardSigmoid, 0.3f, 0.5f}, 1);
}

TEST(ActivationMatch, GeluOpOnlyWithoutApproximation) {
  OnnxBuilder exact = model(20);
  exact.node("Gelu", {"x"}, {"y"}, "act");
  expect_activation(exact, {Activation::kGelu}, 1);
  OnnxBuilder tanh = model(20);
  testing::set_attr_string(tanh.node("Gelu", {"x"}, {"y"}, "act"), "approximate", "tanh");
  expect_no_match(tanh);
}

TEST(ActivationMatch, ClipWithConstantInputs) {
  OnnxBuilder relu6 = model(13);
  constant_node(relu6, "lo", {}, {0});
  constant_node(relu6, "hi", {}, {6});
  relu6.node("Clip", {"x", "lo", "hi"}, {"y"}, "clip");
  expect_activation(relu6, {Activation::kClip, 0, 6}, 1);
  // Bounds as initializers; max left out.
  OnnxBuilder min_only = model(13);
  min_only.initializer("lo", {}, {-1});
  min_only.node("Clip", {"x", "lo"}, {"y"}, "clip");
  expect_activation(min_only, {Activation::kClip, -1, kMax}, 1);
}

TEST(ActivationMatch, ClipWithAttributesBeforeOpset11) {
  OnnxBuilder b = model(10);
  auto& n = b.node("Clip", {"x"}, {"y"}, "clip");
  testing::set_attr_float(n, "min", -1);
  testing::set_attr_float(n, "max", 2);
  expect_activation(b, {Activation::kClip, -1, 2}, 1);
}

TEST(ActivationMatch, ClipWithComputedBoundIsNot) {
  OnnxBuilder b = model(13);
  b.input("hi", 1, {});
  b.initializer("lo", {}, {0});
  b.node("Clip", {"x", "lo", "hi"}, {"y"}, "clip");
  expect_no_match(b);
}

// --- SiLU and HardSwish -----------------------------------------------------------------------

TEST(ActivationMatch, SiluEitherOrder) {
  for (bool x_first : {true, false}) {
    OnnxBuilder b = model();
    b.node("Sigmoid", {"x"}, {"s"}, "sig");
    b.node("Mul", x_first ? std::vector<std::string>{"x", "s"} : std::vector<std::string>{"s", "x"},
           {"y"}, "mul");
    expect_activation(b, {Activation::kSilu}, 2);
  }
}

TEST(ActivationMatch, HardSwishAsHardSigmoidGate) {
  // torch.onnx below opset 14: Mul(x, HardSigmoid(x, alpha=1/6)), beta left at its 0.5 default.
  OnnxBuilder b = model(13);
  testing::set_attr_float(b.node("HardSigmoid", {"x"}, {"g"}, "gate"), "alpha", 1.0f / 6.0f);
  b.node("Mul", {"x", "g"}, {"y"}, "mul");
  expect_activation(b, {Activation::kHardSwish}, 2);
  // HardSigmoid's default alpha 0.2 is a different function.
  OnnxBuilder wrong = model(13);
  wrong.node("HardSigmoid", {"x"}, {"g"}, "gate");
  wrong.node("Mul", {"x", "g"}, {"y"}, "mul");
  expect_no_match(wrong);
}

// x * Clip(x + 3, 0, 6) scaled by 1/6 in one of four ways.
enum class Scale { kDivProduct, kMulProduct, kDivGate, kMulGate };

OnnxBuilder hardswish(Scale scale, float three = 3, float six = 6,
                      std::vector<int64_t> three_dims = {}) {
  OnnxBuilder b = model(13);
  std::vector<float> three_values(static_cast<size_t>(dims_numel(three_dims)), three);
  b.initializer("three", three_dims, three_values);
  constant_node(b, "zero", {}, {0});
  constant_node(b, "six", {}, {six});
  constant_node(b, "sixth", {}, {1.0f / six});
  b.node("Add", {"three", "x"}, {"p"}, "add");
  b.node("Clip", {"p", "zero", "six"}, {"r"}, "clip");
  switch (scale) {
    case Scale::kDivProduct:
      b.node("Mul", {"x", "r"}, {"m"}, "mul");
      b.node("Div", {"m", "six"}, {"y"}, "div");
      break;
    case Scale::kMulProduct:
      b.node("Mul", {"r", "x"}, {"m"}, "mul");
      b.node("Mul", {"sixth", "m"}, {"y"}, "scale");
      break;
    case Scale::kDivGate:
      b.node("Div", {"r", "six"}, {"g"}, "div");
      b.node("Mul", {"g", "x"}, {"y"}, "mul");
      break;
    case Scale::kMulGate:
      b.node("Mul", {"r", "sixth"}, {"g"}, "scale");
      b.node("Mul", {"x", "g"}, {"y"}, "mul");
      break;
  }
  return b;
}

TEST(ActivationMatch, HardSwishClipSpellings) {
  for (Scale s : {Scale::kDivProduct, Scale::kMulProduct, Scale::kDivGate, Scale::kMulGate}) {
    SCOPED_TRACE(static_cast<int>(s));
    expect_activation(hardswish(s), {Activation::kHardSwish}, 4);
  }
}

TEST(ActivationMatch, HardSwishWrongConstants) {
  expect_no_match(hardswish(Scale::kDivProduct, 2.5f));
  expect_no_match(hardswish(Scale::kDivProduct, 3, 5));  // Clip(0, 5) and / 5
  expect_no_match(hardswish(Scale::kMulGate, 3.001f));
}

TEST(ActivationMatch, ConstantsThatWouldBroadcastAreNot) {
  // A [1, 1, 1, 1] three makes the result 4-D; a two-element one is not a scalar.
  expect_no_match(hardswish(Scale::kDivProduct, 3, 6, {1, 1, 1, 1}));
  expect_no_match(hardswish(Scale::kDivProduct, 3, 6, {2, 1, 1}));
  // Rank <= x's rank and one element: same result shape, accepted.
  expect_activation(hardswish(Scale::kDivProduct, 3, 6, {1, 1, 1}), {Activation::kHardSwish}, 4);
}

// --- GELU ---------------------------------------------------------------------------------------

enum class GeluHalf { kLast, kOnX, kOnErf };

OnnxBuilder gelu(GeluHalf half, bool div = true, float root2 = 1.4142135f) {
  OnnxBuilder b = model(13);
  constant_node(b, "root2", {}, {div ? root2 : 1.0f / root2});
  constant_node(b, "one", {}, {1});
  constant_node(b, "half", {}, {0.5f});
  b.node(div ? "Div" : "Mul", {"x", "root2"}, {"d"}, "scale");
  b.node("Erf", {"d"}, {"e"}, "erf");
  b.node("Add", {"e", "one"}, {"a"}, "add");
  switch (half) {
    case GeluHalf::kLast:  // torch.onnx 1.13 at opsets 13 and 17
      b.node("Mul", {"x", "a"}, {"m"}, "mul");
      b.node("Mul", {"m", "half"}, {"y"}, "mul_half");
      break;
    case GeluHalf::kOnX:
      b.node("Mul", {"half", "x"}, {"h"}, "mul_half");
      b.node("Mul", {"a", "h"}, {"y"}, "mul");
      break;
    case GeluHalf::kOnErf:
      b.node("Mul", {"a", "half"}, {"h"}, "mul_half");
      b.node("Mul", {"x", "h"}, {"y"}, "mul");
      break;
  }
  return b;
}

TEST(ActivationMatch, GeluErfSpellings) {
  for (GeluHalf h : {GeluHalf::kLast, GeluHalf::kOnX, GeluHalf::kOnErf}) {
    for (bool div : {true, false}) {
      SCOPED_TRACE(::testing::Message() << static_cast<int>(h) << " div " << div);
      expect_activation(gelu(h, div), {Activation::kGelu}, 5);
    }
  }
}

TEST(ActivationMatch, GeluWrongConstant) {
  expect_no_match(gelu(GeluHalf::kLast, true, 1.5f));
  expect_no_match(gelu(GeluHalf::kOnErf, false, 1.5f));
}

// --- guards on readers --------------------------------------------------------------------------

TEST(ActivationMatch, IntermediateReadElsewhere) {
  OnnxBuilder silu = model();
  silu.node("Sigmoid", {"x"}, {"s"}, "sig");
  silu.node("Mul", {"x", "s"}, {"y"}, "mul");
  silu.node("Neg", {"s"}, {"other"}, "neg");
  silu.output("other");
  expect_no_match(silu);

  OnnxBuilder g = gelu(GeluHalf::kLast);
  g.output("e");  // the Erf's result is also a graph output
  expect_no_match(g);
}

TEST(ActivationMatch, ValueReadOutsideTheActivation) {
  OnnxBuilder silu = model();
  silu.node("Sigmoid", {"x"}, {"s"}, "sig");
  silu.node("Mul", {"x", "s"}, {"y"}, "mul");
  silu.node("Neg", {"x"}, {"other"}, "neg");
  silu.output("other");
  expect_no_match(silu);

  OnnxBuilder relu = model();
  relu.node("Relu", {"x"}, {"y"}, "relu");
  relu.node("Neg", {"x"}, {"other"}, "neg");
  relu.output("other");
  expect_no_match(relu);
}

TEST(ActivationMatch, GraphOutputValueIsNot) {
  OnnxBuilder b = model();
  b.node("Neg", {"x"}, {"n"}, "neg");
  b.node("Relu", {"n"}, {"y"}, "relu");
  b.output("n");
  expect_no_match(b, "n");
}

TEST(ActivationMatch, OtherOpsAreNot) {
  OnnxBuilder neg = model();
  neg.node("Neg", {"x"}, {"y"}, "neg");
  expect_no_match(neg);
  OnnxBuilder square = model();
  square.node("Mul", {"x", "x"}, {"y"}, "mul");
  expect_no_match(square);
}

}  // namespace activation_match_test
}  // namespace kiln
