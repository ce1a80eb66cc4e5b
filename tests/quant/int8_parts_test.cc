// The pieces of INT8 lowering: per-channel weight quantization, uint8 encodings of ranges, range
// tables, and --layerPrecisions matching.
#include <gtest/gtest.h>

#include <cmath>

#include "quant/layer_precision.h"
#include "quant/tensor_ranges.h"
#include "quant/weight_quant.h"

namespace kiln::quant {
namespace {

TEST(WeightQuant, PerChannelSymmetricRoundsHalfToEven) {
  // Channel 0: amax 127 -> scale 1; 0.5 -> 0, 1.5 -> 2 (ties to even). Channel 1: amax 254 ->
  // scale 2; -3 / 2 = -1.5 -> -2.
  const Tensor w =
      Tensor::from_vector<float>({2, 1, 2, 2}, {0.5f, 1.5f, -127, 100, 254, -3, 0, -254});
  auto q = quantize_per_channel(w, 0);
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  EXPECT_EQ(q->scales.data<float>()[0], 1.0f);
  EXPECT_EQ(q->scales.data<float>()[1], 2.0f);
  const std::vector<int8_t> expect = {0, 2, -127, 100, 127, -2, 0, -127};
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(q->q.data<int8_t>()[i], expect[i]) << i;
}

TEST(WeightQuant, InnerAxisAndZeroChannel) {
  // [K=2, N=3] along axis 1 (a GEMM's columns): column 1 is all zero and gets scale 1.
  const Tensor b = Tensor::from_vector<float>({2, 3}, {127, 0, -127, -254, 0, 1});
  auto q = quantize_per_channel(b, 1);
  ASSERT_TRUE(q.is_ok());
  EXPECT_EQ(q->scales.data<float>()[0], 2.0f);
  EXPECT_EQ(q->scales.data<float>()[1], 1.0f);
  EXPECT_EQ(q->scales.data<float>()[2], 1.0f);
  const std::vector<int8_t> expect = {64, 0, -127, -127, 0, 1};  // 63.5 -> 64 (half to even)
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(q->q.data<int8_t>()[i], expect[i]) << i;
}

TEST(WeightQuant, SevenBitRange) {
  // qmax 63: channel 0's amax 126 -> scale 2; channel 1's 63 -> scale 1 (20.5: half to even).
  const Tensor w = Tensor::from_vector<float>({2, 3}, {126, -31, 3, -63, 20.5f, 63});
  auto q = quantize_per_channel(w, 0, 63);
  ASSERT_TRUE(q.is_ok()) << q.status().to_string();
  EXPECT_EQ(q->scales.data<float>()[0], 2.0f);
  EXPECT_EQ(q->scales.data<float>()[1], 1.0f);
  const std::vector<int8_t> expect = {63, -16, 2, -63, 20, 63};
  for (size_t i = 0; i < expect.size(); ++i) EXPECT_EQ(q->q.data<int8_t>()[i], expect[i]) << i;
  EXPECT_FALSE(quantize_per_channel(w, 0, 128).is_ok());
  EXPECT_FALSE(quantize_per_channel(w, 0, 0).is_ok());
}

TEST(WeightQuant, RejectsNonFiniteAndBadAxis) {
  const Tensor w = Tensor::from_vector<float>({2, 1}, {1, NAN});
  auto q = quantize_per_channel(w, 0);
  ASSERT_FALSE(q.is_ok());
  EXPECT_NE(q.status().message().find("channel 1"), std::string::npos);
  EXPECT_FALSE(quantize_per_channel(w, 2).is_ok());
  EXPECT_FALSE(quantize_per_channel(Tensor::from_vector<int32_t>({1}, {1}), 0).is_ok());
}

TEST(WeightQuant, Transpose2d) {
  auto t = transpose_2d(Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->dims(), (Dims{3, 2}));
  const std::vector<float> expect = {1, 4, 2, 5, 3, 6};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(t->data<float>()[i], expect[i]);
  EXPECT_FALSE(transpose_2d(Tensor::from_vector<float>({2}, {1, 2})).is_ok());
}

TEST(Uint8Encoding, NonNegativeUsesAllLevelsSignedIsCentred) {
  const Uint8Encoding pos = uint8_encoding(2.55, true);
  EXPECT_FLOAT_EQ(pos.scale, 0.01f);
  EXPECT_EQ(pos.zero_point, 0);
  const Uint8Encoding sym = uint8_encoding(1.27, false);
  EXPECT_FLOAT_EQ(sym.scale, 0.01f);
  EXPECT_EQ(sym.zero_point, 128);
  EXPECT_FLOAT_EQ(uint8_encoding(0, false).scale, 1.0f);
  EXPECT_FLOAT_EQ(uint8_encoding(NAN, true).scale, 1.0f);
}

TEST(RangeTable, CalibrationAndPlaceholders) {
  Calibration c;
  c.tensors["a"].amax = 3;
  AbsHistogram h;
  h.add(std::vector<float>{0.5f, 2.0f});
  c.tensors["b"] = {2.0, h};
  const RangeTable t = RangeTable::from_calibration(c);
  ASSERT_NE(t.find("a", false), nullptr);
  EXPECT_EQ(t.find("a", false)->amax, 3);
  EXPECT_FALSE(t.find("a", false)->min.has_value());
  EXPECT_EQ(*t.find("b", false)->min, 0.5);
  EXPECT_EQ(t.find("c", false), nullptr);
  const RangeTable p = RangeTable::placeholders();
  EXPECT_TRUE(p.is_placeholder());
  EXPECT_EQ(p.find("anything", true)->amax, 2);
  EXPECT_EQ(p.find("anything", false)->amax, 4);
}

TEST(LayerPrecision, WildcardMatching) {
  EXPECT_TRUE(matches_layer_pattern("conv1", "conv1"));
  EXPECT_FALSE(matches_layer_pattern("conv1", "conv10"));
  EXPECT_TRUE(matches_layer_pattern("*", "anything"));
  EXPECT_TRUE(matches_layer_pattern("layer1*", "layer1.0/conv1"));
  EXPECT_TRUE(matches_layer_pattern("*/conv2", "layer1.0/conv2"));
  EXPECT_TRUE(matches_layer_pattern("a*a", "aa"));
  EXPECT_FALSE(matches_layer_pattern("a*a", "a"));
}

TEST(LayerPrecision, ExactBeatsWildcardLongerWildcardBeatsShorter) {
  const std::vector<LayerPrecisionRule> rules = {
      {"*", "int8"}, {"layer1*", "fp32"}, {"layer1.0/conv1", "int8"}};
  const std::vector<std::string> exact = {"layer1.0/conv1"}, other = {"layer1.0/conv2"},
                                 fused = {"fc", "layer1.0/conv1"}, none = {"head"};
  EXPECT_EQ(find_layer_rule(rules, exact)->pattern, "layer1.0/conv1");
  EXPECT_EQ(find_layer_rule(rules, other)->pattern, "layer1*");
  EXPECT_EQ(find_layer_rule(rules, fused)->pattern, "layer1.0/conv1");
  EXPECT_EQ(find_layer_rule(rules, none)->pattern, "*");
  EXPECT_EQ(find_layer_rule({}, none), nullptr);
}

TEST(LayerPrecision, RuleAndConstraintErrors) {
  const std::vector<LayerPrecisionRule> two_stars = {{"a*b*", "fp32"}};
  EXPECT_FALSE(check_layer_precision_rules(two_stars).is_ok());
  const std::vector<LayerPrecisionRule> bad = {{"a", "int4"}};
  const Status st = check_layer_precision_rules(bad);
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("int4"), std::string::npos);
  EXPECT_EQ(*parse_precision_constraints("obey"), PrecisionConstraints::kObey);
  EXPECT_FALSE(parse_precision_constraints("strict").is_ok());
}

}  // namespace
}  // namespace kiln::quant
