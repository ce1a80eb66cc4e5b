#include "passes/expand_dw_fusion.h"

#include <gtest/gtest.h>

#include "base/cache_sizes.h"
#include "io/random_input.h"
#include "nchw16c_models.h"
#include "ops/kiln_layout.h"
#include "passes/conv_activation_fusion.h"
#include "passes/nchw16c_layout.h"
#include "passes/nchw16c_scale_fusion.h"

namespace kiln {
namespace expand_dw_fusion_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::pointwise;
using Ops = std::vector<std::string>;

// The layout passes and expand_dw_fusion, as the builder runs them.
ir::Graph run_layout(const ir::Graph& before, passes::PassLog& log,
                     passes::BlockedConvCheck runs_blocked = {}) {
  return testing::run_passes(
      before,
      {&passes::conv_activation_fusion_pass(), &passes::nchw16c_layout_pass(),
       &passes::nchw16c_scale_fusion_pass(), &passes::expand_dw_fusion_pass()},
      log, std::move(runs_blocked));
}

// MobileNetV2's expansion and stride-2 depthwise layers: x [1, 16, hw, hw] -> 1x1 "pw" (16 ->
// channels) -> ReLU6 -> 3x3 depthwise "dw" (stride 2) -> ReLU6 -> y.
OnnxBuilder expansion_block(int64_t channels, int64_t hw) {
  OnnxBuilder b;
  b.input("x", 1, {1, 16, hw, hw});
  b.initializer("lo", {}, {0.0f});
  b.initializer("hi", {}, {6.0f});
  pointwise(b, "pw", "x", "e", 16, channels);
  b.node("Clip", {"e", "lo", "hi"}, {"er"}, "pw_relu6");
  b.initializer("wd", {channels, 1, 3, 3}, testing::weights(channels * 9, 0.2f));
  auto& dw = b.node("Conv", {"er", "wd"}, {"d"}, "dw");
  testing::set_attr_int(dw, "group", channels);
  testing::set_attr_ints(dw, "pads", {1, 1, 1, 1});
  testing::set_attr_ints(dw, "strides", {2, 2});
  b.node("Clip", {"d", "lo", "hi"}, {"y"}, "dw_relu6");
  b.output("y");
  return b;
}

// An expansion of `channels` at hw x hw larger than any core's L2 (4 MiB at 64 x 128 x 128).
constexpr int64_t kBigChannels = 64, kBigHw = 128;

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

TEST(ExpandDwFusion, AnExpansionLargerThanL2FusesIntoItsDepthwiseLayer) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  ASSERT_LT(host_cache_sizes().l2_bytes, size_t{kBigChannels * kBigHw * kBigHw * 4});
  passes::PassLog log;
  const ir::Graph before = testing::import_model(expansion_block(kBigChannels, kBigHw));
  const ir::Graph after = run_layout(before, log);
  const Ops ops = op_types(after);
  EXPECT_EQ(count(ops, "kiln.ExpandDwNchw16c"), 1u) << after.dump();
  EXPECT_EQ(count(ops, "kiln.ConvNchw16c"), 0u) << after.dump();
  const ir::Node* fused = testing::producer_of(after, "y.nchw16c");
  ASSERT_NE(fused, nullptr) << after.dump();
  EXPECT_EQ(fused->attrs.get_string("expand_activation", ""), "Clip");
  EXPECT_EQ(fused->attrs.get_floats("expand_activation_params"), (std::vector<float>{0.0f, 6.0f}));
  EXPECT_EQ(fused->attrs.get_string("activation", ""), "Clip");
  EXPECT_FALSE(fused->attrs.has("x_layout"));
  EXPECT_EQ(log.entries().back().pass, "expand_dw_fusion");
  EXPECT_EQ(log.entries().back().message,
            "fused pw + pw_relu6 + dw + dw_relu6 into kiln.ExpandDwNchw16c 'dw'");
  testing::expect_same_outputs(
      before, after, {{"x", *io::random_tensor(DType::kF32, {1, 16, kBigHw, kBigHw}, 3)}});
}

TEST(ExpandDwFusion, AnExpansionThatFitsL2StaysTwoLayers) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  passes::PassLog log;
  const ir::Graph after = run_layout(testing::import_model(expansion_block(32, 8)), log);
  EXPECT_EQ(count(op_types(after), "kiln.ConvNchw16c"), 2u) << after.dump();
  EXPECT_EQ(log.count("expand_dw_fusion"), 0u);
}

TEST(ExpandDwFusion, NotWhenTheExpansionHasAnotherReader) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = expansion_block(kBigChannels, kBigHw);
  b.output("er");  // the expanded tensor is also a graph output
  passes::PassLog log;
  const ir::Graph after = run_layout(testing::import_model(b), log);
  EXPECT_EQ(log.count("expand_dw_fusion"), 0u) << after.dump();
}

TEST(ExpandDwFusion, NotWithoutATacticForTheFusedLayer) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  passes::PassLog log;
  const passes::BlockedConvCheck convs_only = [](const ir::Graph&, const ir::Node& n) {
    return n.op_type == ops::kConvNchw16c;
  };
  const ir::Graph after =
      run_layout(testing::import_model(expansion_block(kBigChannels, kBigHw)), log, convs_only);
  EXPECT_EQ(count(op_types(after), "kiln.ConvNchw16c"), 2u) << after.dump();
  EXPECT_EQ(log.count("expand_dw_fusion"), 0u);
}

}  // namespace expand_dw_fusion_test
}  // namespace kiln
