#include "passes/conv_tap_pruning.h"

#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine_test_util.h"
#include "passes/fold_test_util.h"
#include "passes/pass_harness.h"

namespace kiln {
namespace conv_tap_pruning_test {

using testing::OnnxBuilder;
using Ints = std::vector<int64_t>;

constexpr int kFloat = onnx::TensorProto::FLOAT;

const passes::PassDef& pass() { return passes::conv_tap_pruning_pass(); }

std::vector<float> wave(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.37f * static_cast<float>(i) + 0.2f);
  return v;
}

// x [x_dims] -> Conv(w [w_dims], bias) "conv" -> y, with the given attributes.
OnnxBuilder conv_model(Ints x_dims, Ints w_dims, Ints dilations, Ints pads, Ints strides = {},
                       bool kernel_shape = false, std::vector<std::string> x_symbols = {}) {
  OnnxBuilder b;
  b.input("x", kFloat, x_dims, std::move(x_symbols));
  int64_t n = 1;
  for (int64_t d : w_dims) n *= d;
  b.initializer("w", w_dims, wave(static_cast<size_t>(n)));
  b.initializer("bias", {w_dims[0]}, wave(static_cast<size_t>(w_dims[0])));
  onnx::NodeProto& conv = b.node("Conv", {"x", "w", "bias"}, {"y"}, "conv");
  testing::set_attr_ints(conv, "dilations", dilations);
  testing::set_attr_ints(conv, "pads", pads);
  if (!strides.empty()) testing::set_attr_ints(conv, "strides", strides);
  if (kernel_shape)
    testing::set_attr_ints(conv, "kernel_shape", Ints(w_dims.begin() + 2, w_dims.end()));
  b.output("y");
  return b;
}

Ints weight_dims(const ir::Graph& g) { return g.value(g.nodes[0].inputs[1]).constant()->dims(); }

TEST(ConvTapPruning, RateBeyondTheMapBecomesOneByOne) {
  // DeepLab's ASPP at rate 6 on a 5x5 map: the eight outer taps read only padding.
  testing::PassResult r = testing::run_pass(
      conv_model({1, 3, 5, 5}, {4, 3, 3, 3}, {6, 6}, {6, 6, 6, 6}, {}, true), pass());
  const ir::Node& conv = r.after.nodes[0];
  EXPECT_EQ(weight_dims(r.after), (Ints{4, 3, 1, 1}));
  EXPECT_EQ(conv.attrs.get_ints("pads"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ(conv.attrs.get_ints("dilations"), (Ints{1, 1}));
  EXPECT_EQ(conv.attrs.get_ints("kernel_shape"), (Ints{1, 1}));
  EXPECT_TRUE(testing::logged(r.log, "conv_tap_pruning", {"Conv 'conv'", "kernel 3x3 -> 1x1"}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvTapPruning, OneAxisAtATime) {
  // Height 4 at rate 5: the rows' outer taps are dead; width 9 at rate 1 keeps all three.
  testing::PassResult r =
      testing::run_pass(conv_model({1, 2, 4, 9}, {3, 2, 3, 3}, {5, 1}, {5, 1, 5, 1}), pass());
  const ir::Node& conv = r.after.nodes[0];
  EXPECT_EQ(weight_dims(r.after), (Ints{3, 2, 1, 3}));
  EXPECT_EQ(conv.attrs.get_ints("pads"), (Ints{0, 1, 0, 1}));
  EXPECT_EQ(conv.attrs.get_ints("dilations"), (Ints{1, 1}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvTapPruning, LeadingTapsOnlyWithStride) {
  // Height 4, rate 3, pads (6, 0), stride 2: outputs read rows o*2 - 6 + 3k, so taps 0 and 1
  // ({-6,-4} and {-3,-1}) are dead and tap 2 ({0, 2}) stays; the top pad shrinks by 6.
  testing::PassResult r = testing::run_pass(
      conv_model({1, 2, 4, 4}, {2, 2, 3, 1}, {3, 1}, {6, 0, 0, 0}, {2, 1}), pass());
  const ir::Node& conv = r.after.nodes[0];
  EXPECT_EQ(weight_dims(r.after), (Ints{2, 2, 1, 1}));
  EXPECT_EQ(conv.attrs.get_ints("pads"), (Ints{0, 0, 0, 0}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvTapPruning, KeepsTheMiddleRunOfThreeLiveTaps) {
  // 1-D, length 3, kernel 5 at rate 2 with pads 4: taps 0 and 4 read only padding; 1..3 stay,
  // still at rate 2.
  testing::PassResult r = testing::run_pass(conv_model({1, 1, 3}, {2, 1, 5}, {2}, {4, 4}), pass());
  const ir::Node& conv = r.after.nodes[0];
  EXPECT_EQ(weight_dims(r.after), (Ints{2, 1, 3}));
  EXPECT_EQ(conv.attrs.get_ints("pads"), (Ints{2, 2}));
  EXPECT_EQ(conv.attrs.get_ints("dilations"), (Ints{2}));
  testing::expect_same_outputs(r.before, r.after);
}

TEST(ConvTapPruning, LeavesLiveTapsNegativePadsAndUnknownDims) {
  // Every tap reads the input somewhere (rate 2 on 5x5).
  testing::PassResult live =
      testing::run_pass(conv_model({1, 1, 5, 5}, {1, 1, 3, 3}, {2, 2}, {2, 2, 2, 2}), pass());
  EXPECT_EQ(weight_dims(live.after), (Ints{1, 1, 3, 3}));
  EXPECT_EQ(live.log.count("conv_tap_pruning"), 0u);
  // Length 2, kernel 3 at rate 4, pads (0, 7): taps 1 and 2 are dead, but dropping them would
  // leave an end pad of 7 - 8 < 0.
  testing::PassResult negative =
      testing::run_pass(conv_model({1, 1, 2}, {1, 1, 3}, {4}, {0, 7}), pass());
  EXPECT_EQ(weight_dims(negative.after), (Ints{1, 1, 3}));
  // The height is not a number: the dead taps depend on it.
  OnnxBuilder b = conv_model({1, 3, -1, 5}, {4, 3, 3, 3}, {6, 6}, {6, 6, 6, 6});
  testing::PassResult dynamic = testing::run_pass(b, pass());
  EXPECT_EQ(weight_dims(dynamic.after), (Ints{4, 3, 3, 3}));
}

TEST(ConvTapPruning, ASymbolicBatchDoesNotMatter) {
  OnnxBuilder b = conv_model({1, 3, 5, 5}, {4, 3, 3, 3}, {6, 6}, {6, 6, 6, 6}, {}, false,
                             {"batch", "", "", ""});
  testing::PassResult r = testing::run_pass(b, pass());
  EXPECT_EQ(weight_dims(r.after), (Ints{4, 3, 1, 1}));
  testing::expect_same_outputs(r.before, r.after, {{"x", testing::random_f32({3, 3, 5, 5}, 2)}});
}

TEST(ConvTapPruning, CarriesQdqWeightScalesToTheCroppedWeights) {
  ir::Graph g = testing::import_model(conv_model({1, 3, 5, 5}, {4, 3, 3, 3}, {6, 6}, {6, 6, 6, 6}));
  quant::RangeTable table = quant::RangeTable::explicit_scales();
  table.add_weight_scales("w",
                          quant::WeightScales{Tensor::from_vector<float>({4}, {1, 2, 3, 4}), 0});
  passes::PassLog log;
  passes::PassContext ctx{log, &table};
  ASSERT_TRUE(pass().run(g, ctx).is_ok());
  const quant::WeightScales* s = table.weight_scales(g.value(g.nodes[0].inputs[1]).name);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(g.value(g.nodes[0].inputs[1]).name, "w");
  EXPECT_EQ(s->scales.numel(), 4);
  EXPECT_EQ(s->axis, 0);
}

}  // namespace conv_tap_pruning_test
}  // namespace kiln
