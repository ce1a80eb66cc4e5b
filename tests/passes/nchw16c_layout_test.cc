#include "passes/nchw16c_layout.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "base/cpu_features.h"
#include "fusion_test_util.h"
#include "io/random_input.h"
#include "ir/graph_edit.h"
#include "nchw16c_models.h"
#include "passes/conv_activation_fusion.h"
#include "passes/conv_residual_fusion.h"

namespace kiln {
namespace nchw16c_layout_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::pointwise;
using testing::set_attr_int;
using testing::set_attr_ints;
using Ops = std::vector<std::string>;

const passes::PassDef& layout() { return passes::nchw16c_layout_pass(); }

// x [1, 20, 6, 7] -> depthwise 3x3 "dw" -> d.
OnnxBuilder depthwise_model() {
  OnnxBuilder b;
  b.input("x", 1, {1, 20, 6, 7});
  b.initializer("wd", {20, 1, 3, 3}, testing::weights(180));
  b.initializer("bd", {20}, testing::weights(20, 0.3f));
  auto& dw = b.node("Conv", {"x", "wd", "bd"}, {"d"}, "dw");
  set_attr_int(dw, "group", 20);
  set_attr_ints(dw, "pads", {1, 1, 1, 1});
  return b;
}

TEST(Nchw16cLayout, AChainRunsBlockedBetweenTwoReorders) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = depthwise_model();
  pointwise(b, "pw", "d", "y", 20, 24);
  b.output("y");
  const auto r = testing::run_pass(b, layout());
  EXPECT_EQ(op_types(r.after),
            (Ops{"kiln.ToNchw16c", "kiln.ConvNchw16c", "kiln.ConvNchw16c", "kiln.FromNchw16c"}));
  // Node names stay (inspect, --layerPrecisions); the output keeps its name and shape.
  EXPECT_EQ(r.after.nodes[1].name, "dw");
  EXPECT_EQ(r.after.nodes[2].name, "pw");
  const ir::Value& y = r.after.value(r.after.outputs[0]);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.desc.to_string(), "float32[1,24,6,7]");
  EXPECT_EQ(r.after.value(r.after.nodes[1].outputs[0]).desc.to_string(), "float32[1,32,6,7]");
  EXPECT_EQ(r.after.nodes[3].attrs.get_int("channels", 0), 24);
  EXPECT_EQ(r.log.entries().back().message,
            "2 layers run on nChw16c tensors; 1 reorders in, 1 out");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(Nchw16cLayout, ALoneConvolutionStaysNchw) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b;
  b.input("x", 1, {1, 8, 5, 5});
  b.node("Relu", {"x"}, {"r"}, "relu");
  pointwise(b, "pw", "r", "p", 8, 8);
  b.node("Relu", {"p"}, {"y"}, "relu2");
  b.output("y");
  const auto r = testing::run_pass(b, layout());
  EXPECT_EQ(op_types(r.after), (Ops{"Relu", "Conv", "Relu"}));
  EXPECT_TRUE(r.log.entries().empty());
}

TEST(Nchw16cLayout, APlainReaderGetsItsOwnReorderAndTheChainStaysBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = depthwise_model();
  pointwise(b, "pw", "d", "p", 20, 16);
  b.node("Relu", {"d"}, {"r"}, "relu");  // reads dw's output in NCHW
  b.output("p");
  b.output("r");
  const auto r = testing::run_pass(b, layout());
  EXPECT_EQ(op_types(r.after), (Ops{"kiln.ToNchw16c", "kiln.ConvNchw16c", "kiln.FromNchw16c",
                                    "kiln.ConvNchw16c", "kiln.FromNchw16c", "Relu"}));
  EXPECT_EQ(r.after.nodes[2].outputs[0], r.after.find_value("d"));
  EXPECT_EQ(r.after.nodes[3].inputs[0], r.after.nodes[1].outputs[0]);  // pw reads blocked d
  testing::expect_same_outputs(r.before, r.after);
}

TEST(Nchw16cLayout, AResidualIsReadBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b;
  b.input("x", 1, {2, 17, 4, 3});
  pointwise(b, "pw1", "x", "a", 17, 17);
  pointwise(b, "pw2", "a", "c", 17, 17);
  b.node("Add", {"c", "a"}, {"y"}, "add");
  b.output("y");
  passes::PassLog log;
  const ir::Graph before = testing::import_model(b);
  const ir::Graph after =
      testing::run_passes(before, {&passes::conv_residual_fusion_pass(), &layout()}, log);
  ASSERT_EQ(op_types(after),
            (Ops{"kiln.ToNchw16c", "kiln.ConvNchw16c", "kiln.ConvNchw16c", "kiln.FromNchw16c"}));
  const ir::Node& pw2 = after.nodes[2];
  ASSERT_EQ(pw2.inputs.size(), 4u);
  EXPECT_EQ(pw2.inputs[0], after.nodes[1].outputs[0]);
  EXPECT_EQ(pw2.inputs[3], after.nodes[1].outputs[0]);  // a, blocked, as X and as Z
  EXPECT_EQ(after.find_value("a"), ir::kNoValue);       // nobody reads a in NCHW
  testing::expect_same_outputs(before, after);
}

// Fewer than 8 channels would pad to at least twice their bytes: such a chain stays NCHW, unless
// its plane is one pixel.
TEST(Nchw16cLayout, FewChannelsStayNchwExceptOnOnePixel) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  for (const int64_t side : {5, 1}) {
    OnnxBuilder b;
    b.input("x", 1, {1, 4, side, side});
    pointwise(b, "pw1", "x", "a", 4, 6);
    pointwise(b, "pw2", "a", "y", 6, 4);
    b.output("y");
    const auto r = testing::run_pass(b, layout());
    EXPECT_EQ(op_types(r.after)[1], side == 1 ? "kiln.ConvNchw16c" : "Conv") << side;
  }
}

// A reorder needs the channel count: a layer whose input desc does not say it (a Concat's output
// in DeepLabV3) stays NCHW, the layers after it are blocked.
TEST(Nchw16cLayout, AnInputOfUnknownChannelsStaysNchw) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b;
  b.input("x", 1, {1, -1, 5, 5});
  pointwise(b, "pw1", "x", "a", 8, 16);
  pointwise(b, "pw2", "a", "c", 16, 16);
  pointwise(b, "pw3", "c", "y", 16, 16);
  b.output("y");
  const auto r = testing::run_pass(b, layout());
  EXPECT_EQ(op_types(r.after), (Ops{"Conv", "kiln.ToNchw16c", "kiln.ConvNchw16c",
                                    "kiln.ConvNchw16c", "kiln.FromNchw16c"}));
}

// kiln's kernels run a 3x3 and a padded 1x1 (group 1) on blocked tensors; a grouped, not
// depthwise, convolution stays NCHW, with the reorders around it.
TEST(Nchw16cLayout, DenseConvolutionsAreBlockedGroupedOnesStayNchw) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b;
  b.input("x", 1, {1, 8, 5, 5});
  b.initializer("w3", {8, 8, 3, 3}, testing::weights(576));
  auto& dense = b.node("Conv", {"x", "w3"}, {"a"}, "dense");
  set_attr_ints(dense, "pads", {1, 1, 1, 1});
  b.initializer("w1", {8, 8, 1, 1}, testing::weights(64));
  auto& padded = b.node("Conv", {"a", "w1"}, {"c"}, "padded");
  set_attr_ints(padded, "pads", {1, 0, 0, 0});
  b.initializer("wg", {8, 4, 3, 3}, testing::weights(288));
  auto& grouped = b.node("Conv", {"c", "wg"}, {"y"}, "grouped");
  testing::set_attr_int(grouped, "group", 2);
  b.output("y");
  const auto r = testing::run_pass(b, layout());
  EXPECT_EQ(op_types(r.after), (Ops{"kiln.ToNchw16c", "kiln.ConvNchw16c", "kiln.ConvNchw16c",
                                    "kiln.FromNchw16c", "Conv"}));
}

}  // namespace nchw16c_layout_test
}  // namespace kiln

namespace kiln {
namespace nchw16c_layout_test {

// A squeeze-and-excitation between blocked convolutions (EfficientNet's), then a 1x1 "pw".
TEST(Nchw16cLayout, ASqueezeAndExcitationStaysBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = testing::squeeze_excitation_model();
  testing::pointwise(b, "pw", "m", "y", 20, 24);
  b.output("y");
  passes::PassLog log;
  const ir::Graph before = testing::import_model(b);
  const ir::Graph after =
      testing::run_passes(before, {&passes::conv_activation_fusion_pass(), &layout()}, log);
  const Ops ops = op_types(after);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.GlobalAveragePoolNchw16c"), 1) << after.dump();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.MulNchw16c"), 1) << after.dump();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.ToNchw16c"), 1) << after.dump();  // x only
  // Two images: each scales by its own squeeze.
  testing::expect_same_outputs(before, after,
                               {{"x", *io::random_tensor(DType::kF32, {2, 20, 6, 7}, 5)}});
}

}  // namespace nchw16c_layout_test
}  // namespace kiln

namespace kiln {
namespace nchw16c_layout_test {

// x [1, 3, 20, 21] -> a 3x3 stride-2 stem to 16 channels ("stem", X read as NCHW) -> `pools`
// MaxPools with window k, stride s, pad p -> a 1x1 to 24 ("pw") -> y.
OnnxBuilder stem_pool_model(int pools, int64_t k, int64_t s, int64_t p) {
  OnnxBuilder b;
  b.input("x", 1, {1, 3, 20, 21});
  b.initializer("ws", {16, 3, 3, 3}, testing::weights(16 * 27));
  auto& stem = b.node("Conv", {"x", "ws"}, {"c"}, "stem");
  set_attr_ints(stem, "strides", {2, 2});
  set_attr_ints(stem, "pads", {1, 1, 1, 1});
  std::string in = "c";
  for (int i = 0; i < pools; ++i) {
    const std::string out = "p" + std::to_string(i);
    auto& pool = b.node("MaxPool", {in}, {out}, "pool" + std::to_string(i));
    set_attr_ints(pool, "kernel_shape", {k, k});
    set_attr_ints(pool, "strides", {s, s});
    set_attr_ints(pool, "pads", {p, p, p, p});
    in = out;
  }
  pointwise(b, "pw", in, "y", 16, 24);
  b.output("y");
  return b;
}

// ResNet's stem: the max pool between two blocked convolutions reads and writes blocked tensors,
// so no reorder follows the stem.
TEST(Nchw16cLayout, AMaxPoolAfterABlockedConvolutionStaysBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  const auto r = testing::run_pass(stem_pool_model(1, 3, 2, 1), layout());
  EXPECT_EQ(op_types(r.after), (Ops{"kiln.ConvNchw16c", "kiln.MaxPoolNchw16c", "kiln.ConvNchw16c",
                                    "kiln.FromNchw16c"}));
  EXPECT_EQ(r.after.nodes[1].name, "pool0");
  EXPECT_EQ(r.after.nodes[1].attrs.get_int("channels", 0), 16);
  EXPECT_EQ(r.after.value(r.after.nodes[1].outputs[0]).desc.to_string(), "float32[1,16,5,6]");
  testing::expect_same_outputs(r.before, r.after);
}

// YOLO's SPPF: max pools that read max pools stay blocked along the chain.
TEST(Nchw16cLayout, ChainedMaxPoolsStayBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  const auto r = testing::run_pass(stem_pool_model(3, 5, 1, 2), layout());
  const Ops ops = op_types(r.after);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.MaxPoolNchw16c"), 3) << r.after.dump();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.FromNchw16c"), 1) << r.after.dump();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.ToNchw16c"), 0) << r.after.dump();
  testing::expect_same_outputs(r.before, r.after);
}

// A max pool whose input no blocked convolution writes, or whose Indices are read, stays NCHW.
TEST(Nchw16cLayout, AMaxPoolWithoutABlockedProducerOrWithIndicesStaysNchw) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder lone;
  lone.input("x", 1, {1, 16, 8, 8});
  auto& pool = lone.node("MaxPool", {"x"}, {"p"}, "pool");
  set_attr_ints(pool, "kernel_shape", {2, 2});
  pointwise(lone, "pw", "p", "y", 16, 24);
  lone.output("y");
  const auto r = testing::run_pass(lone, layout());
  EXPECT_EQ(op_types(r.after), (Ops{"MaxPool", "Conv"}));

  OnnxBuilder indices = stem_pool_model(0, 1, 1, 0);
  auto& with = indices.node("MaxPool", {"y"}, {"q", "i"}, "pool_indices");
  set_attr_ints(with, "kernel_shape", {2, 2});
  indices.output("q");
  indices.output("i");
  const auto ri = testing::run_pass(indices, layout());
  const Ops ops = op_types(ri.after);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.MaxPoolNchw16c"), 0) << ri.after.dump();
}

// YOLOv8's C2f block: x -> 1x1 "cv1" -> a; Split(a) -> s0, s1 (16 + 16 channels); s1 -> 1x1 "m1"
// -> 1x1 "m2" -> Add(m2's, s1) -> c; Concat(s0, s1, c) -> 1x1 "cv2" -> y.
OnnxBuilder c2f_model(int64_t split_at = 16) {
  OnnxBuilder b;
  b.input("x", 1, {2, 32, 6, 7});
  pointwise(b, "cv1", "x", "a", 32, 32);
  b.initializer_i64("sizes", {2}, {split_at, 32 - split_at});
  set_attr_int(b.node("Split", {"a", "sizes"}, {"s0", "s1"}, "split"), "axis", 1);
  pointwise(b, "m1", "s1", "b1", 32 - split_at, 16);
  pointwise(b, "m2", "b1", "b2", 16, 32 - split_at);
  b.node("Add", {"b2", "s1"}, {"c"}, "add");
  set_attr_int(b.node("Concat", {"s0", "s1", "c"}, {"k"}, "concat"), "axis", 1);
  pointwise(b, "cv2", "k", "y", 64 - split_at, 32);
  b.output("y");
  return b;
}

// Split, the shortcut Add and the Concat run on the blocked tensors their producers write: one
// reorder in and one out for the whole block, as for a chain of convolutions.
TEST(Nchw16cLayout, ChannelSplitsAddsAndConcatsOfWholeBlocksStayBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  const auto r = testing::run_pass(c2f_model(), layout());
  EXPECT_EQ(op_types(r.after),
            (Ops{"kiln.ToNchw16c", "kiln.ConvNchw16c", "Split", "kiln.ConvNchw16c",
                 "kiln.ConvNchw16c", "Add", "Concat", "kiln.ConvNchw16c", "kiln.FromNchw16c"}))
      << r.after.dump();
  const ir::Node& split = r.after.nodes[2];
  EXPECT_EQ(split.name, "split");
  EXPECT_EQ(split.inputs[0], r.after.nodes[1].outputs[0]);  // cv1's blocked output
  EXPECT_EQ(r.after.value(split.inputs[1]).name, "sizes");  // the sizes stay as they are
  EXPECT_FALSE(split.attrs.has("channels"));                // an ONNX Split, unchanged
  EXPECT_EQ(r.after.nodes[6].inputs[1], split.outputs[1]);  // Concat reads s1 blocked
  EXPECT_EQ(r.log.entries().back().message,
            "7 layers run on nChw16c tensors; 1 reorders in, 1 out");
  testing::expect_same_outputs(r.before, r.after);
}

// A Split output read as NCHW too gets its own reorder; the others stay blocked.
TEST(Nchw16cLayout, APlainReaderOfOneSplitOutputGetsItsOwnReorder) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b = c2f_model();
  b.node("Relu", {"s0"}, {"r"}, "relu");
  b.output("r");
  const auto r = testing::run_pass(b, layout());
  const Ops ops = op_types(r.after);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "kiln.FromNchw16c"), 2) << r.after.dump();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Split"), 1);
  const ir::ValueId s0 = r.after.find_value("s0");
  ASSERT_NE(s0, ir::kNoValue);
  EXPECT_EQ(r.after.nodes[static_cast<size_t>(ir::GraphIndex(r.after).producer(s0))].op_type,
            "FromNchw16c");
  testing::expect_same_outputs(r.before, r.after);
}

// Channels that are not whole blocks (a Split 8 + 24), an input nobody blocked, a broadcasting Add
// or a split along another axis keep those ops on NCHW tensors.
TEST(Nchw16cLayout, PartsNotOfWholeBlocksOrNotAllBlockedStayNchw) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  const auto part = testing::run_pass(c2f_model(8), layout());
  for (const char* op : {"Split", "Add", "Concat"}) {
    const auto it = std::find_if(part.after.nodes.begin(), part.after.nodes.end(),
                                 [&](const ir::Node& n) { return n.op_type == op; });
    ASSERT_NE(it, part.after.nodes.end()) << op;
    EXPECT_EQ(part.after.value(it->outputs[0]).name.find(".nchw16c"), std::string::npos) << op;
  }
  testing::expect_same_outputs(part.before, part.after);

  OnnxBuilder plain;
  plain.input("x", 1, {1, 16, 6, 5});
  plain.input("z", 1, {1, 16, 6, 5});
  plain.input("bias", 1, {1, 16, 1, 1});
  pointwise(plain, "pw", "x", "p", 16, 16);
  set_attr_int(plain.node("Concat", {"p", "z"}, {"k"}, "concat"), "axis", 1);
  plain.node("Add", {"p", "bias"}, {"q"}, "broadcast");
  set_attr_int(plain.node("Split", {"p"}, {"h0", "h1"}, "rows"), "axis", 2);
  pointwise(plain, "pk", "k", "y", 32, 16);
  pointwise(plain, "pq", "q", "y2", 16, 16);
  for (const char* y : {"y", "y2", "h0", "h1"}) plain.output(y);
  const auto r = testing::run_pass(plain, layout());
  const Ops ops = op_types(r.after);
  for (const char* op : {"Concat", "Add", "Split"}) {
    EXPECT_EQ(std::count(ops.begin(), ops.end(), op), 1) << op << "\n" << r.after.dump();
  }
  for (const ir::Node& n : r.after.nodes) {
    if (n.op_type == "Concat" || n.op_type == "Add" || n.op_type == "Split") {
      EXPECT_EQ(r.after.value(n.outputs[0]).name.find(".nchw16c"), std::string::npos) << n.name;
    }
  }
  testing::expect_same_outputs(r.before, r.after);
}

// YOLO's upsampling between blocked convolutions: kiln.ResizeNchw16c keeps the layout. A resize by
// sizes of channels that are not whole blocks (sizes name the real count) stays NCHW.
TEST(Nchw16cLayout, AResizeBetweenBlockedConvolutionsStaysBlocked) {
  KILN_REQUIRE_BLOCKED_KERNELS();
  OnnxBuilder b;
  b.input("x", 1, {1, 16, 5, 6});
  pointwise(b, "pw1", "x", "a", 16, 24);
  b.initializer("roi", {0}, {});
  b.initializer("scales", {4}, {1, 1, 2, 2});
  testing::set_attr_string(b.node("Resize", {"a", "roi", "scales"}, {"u"}, "up"), "mode",
                           "nearest");
  pointwise(b, "pw2", "u", "y", 24, 16);
  b.output("y");
  const auto r = testing::run_pass(b, layout());
  EXPECT_EQ(op_types(r.after), (Ops{"kiln.ToNchw16c", "kiln.ConvNchw16c", "kiln.ResizeNchw16c",
                                    "kiln.ConvNchw16c", "kiln.FromNchw16c"}))
      << r.after.dump();
  EXPECT_EQ(r.after.nodes[2].name, "up");
  EXPECT_EQ(r.after.nodes[2].attrs.get_int("resize_version", 0), 13);
  EXPECT_EQ(r.after.nodes[2].attrs.get_int("channels", 0), 24);
  EXPECT_EQ(r.after.value(r.after.nodes[2].outputs[0]).desc.to_string(), "float32[1,32,10,12]");
  testing::expect_same_outputs(r.before, r.after);

  OnnxBuilder by_sizes;
  by_sizes.input("x", 1, {1, 16, 5, 6});
  pointwise(by_sizes, "pw1", "x", "a", 16, 20);
  by_sizes.initializer("roi", {0}, {});
  by_sizes.initializer("scales", {0}, {});
  by_sizes.initializer_i64("sizes", {4}, {1, 20, 9, 9});
  by_sizes.node("Resize", {"a", "roi", "scales", "sizes"}, {"u"}, "up");
  pointwise(by_sizes, "pw2", "u", "y", 20, 16);
  by_sizes.output("y");
  const auto rs = testing::run_pass(by_sizes, layout());
  const Ops ops = op_types(rs.after);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Resize"), 1) << rs.after.dump();
  testing::expect_same_outputs(rs.before, rs.after);
}

}  // namespace nchw16c_layout_test
}  // namespace kiln
