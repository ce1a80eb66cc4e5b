#include "passes/nchw16c_scale_fusion.h"

#include <gtest/gtest.h>

#include "io/random_input.h"
#include "nchw16c_models.h"
#include "ops/kiln_layout.h"
#include "passes/conv_activation_fusion.h"
#include "passes/nchw16c_layout.h"

namespace kiln {
namespace nchw16c_scale_fusion_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::pointwise;
using Ops = std::vector<std::string>;

// conv_activation_fusion, nchw16c_layout and nchw16c_scale_fusion, as the builder runs them.
ir::Graph run_layout(const ir::Graph& before, passes::PassLog& log,
                     passes::BlockedConvCheck runs_blocked = {}) {
  return testing::run_passes(before,
                             {&passes::conv_activation_fusion_pass(),
                              &passes::nchw16c_layout_pass(), &passes::nchw16c_scale_fusion_pass()},
                             log, std::move(runs_blocked));
}

// The squeeze-and-excitation's scaled tensor m read by a 1x1 "pw" -> y, as in EfficientNet.
OnnxBuilder scale_then_projection() {
  OnnxBuilder b = testing::squeeze_excitation_model();
  pointwise(b, "pw", "m", "y", 20, 24);
  b.output("y");
  return b;
}

size_t count(const Ops& ops, const std::string& op) {
  return static_cast<size_t>(std::count(ops.begin(), ops.end(), op));
}

TEST(Nchw16cScaleFusion, TheScaleFusesIntoTheProjection) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = scale_then_projection();
  passes::PassLog log;
  const ir::Graph before = testing::import_model(b);
  const ir::Graph after = run_layout(before, log);
  EXPECT_EQ(count(op_types(after), "kiln.MulNchw16c"), 0u) << after.dump();
  const ir::Node* pw = testing::producer_of(after, "y.nchw16c");
  ASSERT_NE(pw, nullptr) << after.dump();
  ASSERT_EQ(pw->inputs.size(), ops::kConvNchw16cScaleInput + 1);
  EXPECT_EQ(after.value(pw->inputs[0]).name, "d.nchw16c");
  EXPECT_EQ(after.value(pw->inputs[ops::kConvNchw16cScaleInput]).name, "s.nchw16c");
  EXPECT_EQ(log.entries().back().pass, "nchw16c_scale_fusion");
  EXPECT_EQ(log.entries().back().message, "fused scale + pw into kiln.ConvNchw16c 'pw'");
  // Two images: each scales by its own squeeze.
  testing::expect_same_outputs(before, after,
                               {{"x", *io::random_tensor(DType::kF32, {2, 20, 6, 7}, 5)}});
}

TEST(Nchw16cScaleFusion, AScaledTensorReadTwiceIsWrittenOnce) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = testing::squeeze_excitation_model();
  pointwise(b, "pw", "m", "y", 20, 24);
  pointwise(b, "pw2", "m", "y2", 20, 16);
  b.output("y");
  b.output("y2");
  passes::PassLog log;
  const ir::Graph before = testing::import_model(b);
  const ir::Graph after = run_layout(before, log);
  EXPECT_EQ(count(op_types(after), "kiln.MulNchw16c"), 1u) << after.dump();
  EXPECT_EQ(log.count("nchw16c_scale_fusion"), 0u);
}

TEST(Nchw16cScaleFusion, NotIntoADepthwiseConvolution) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = testing::squeeze_excitation_model();
  b.initializer("wd2", {20, 1, 3, 3}, testing::weights(180, 0.2f));
  auto& dw = b.node("Conv", {"m", "wd2"}, {"y"}, "dw2");
  testing::set_attr_int(dw, "group", 20);
  testing::set_attr_ints(dw, "pads", {1, 1, 1, 1});
  b.output("y");
  passes::PassLog log;
  const ir::Graph after = run_layout(testing::import_model(b), log);
  EXPECT_EQ(count(op_types(after), "kiln.MulNchw16c"), 1u) << after.dump();
}

TEST(Nchw16cScaleFusion, NotWhenNoTacticRunsTheFusedConvolution) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = scale_then_projection();
  passes::PassLog log;
  // Every blocked convolution runs, but none with a channel scale (as with only oneDNN's).
  const auto no_scale = [](const ir::Graph&, const ir::Node& conv) {
    return conv.inputs.size() <= ops::kConvNchw16cScaleInput;
  };
  const ir::Graph after = run_layout(testing::import_model(b), log, no_scale);
  EXPECT_EQ(count(op_types(after), "kiln.MulNchw16c"), 1u) << after.dump();
  EXPECT_EQ(count(op_types(after), "kiln.ConvNchw16c"), 4u) << after.dump();
}

}  // namespace nchw16c_scale_fusion_test
}  // namespace kiln
