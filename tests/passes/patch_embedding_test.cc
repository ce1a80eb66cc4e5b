#include "passes/patch_embedding.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"

namespace kiln {
namespace patch_embedding_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;

const passes::PassDef& pass() { return passes::patch_embedding_pass(); }

struct Embed {
  std::vector<int64_t> x = {1, 3, 8, 12};
  int64_t m = 5;       // output channels
  int64_t k = 4;       // kernel and stride
  int64_t stride = 4;  // the Conv's stride (a patch embedding: k)
  int64_t pad = 0;     // on every side
  bool bias = true;
  std::vector<int64_t> perm = {0, 2, 1};
  bool conv_also_output = false;
};

// x -> Conv "conv" (e.m kernels of e.k x e.k, stride e.stride) -> Reshape "flat" ->
// Transpose "tr" -> y, as torchvision's VisionTransformer exports its patch embedding.
OnnxBuilder embed_model(const Embed& e) {
  OnnxBuilder b;
  b.input("x", 1, e.x);
  const int64_t c = e.x[1];
  b.initializer("w", {e.m, c, e.k, e.k}, testing::weights(e.m * c * e.k * e.k));
  std::vector<std::string> inputs = {"x", "w"};
  if (e.bias) {
    b.initializer("b", {e.m}, testing::weights(e.m, 1.0f));
    inputs.push_back("b");
  }
  auto& conv = b.node("Conv", inputs, {"c"}, "conv");
  testing::set_attr_ints(conv, "kernel_shape", {e.k, e.k});
  testing::set_attr_ints(conv, "strides", {e.stride, e.stride});
  testing::set_attr_ints(conv, "pads", {e.pad, e.pad, e.pad, e.pad});
  const int64_t oh = (e.x[2] + 2 * e.pad - e.k) / e.stride + 1;
  const int64_t ow = (e.x[3] + 2 * e.pad - e.k) / e.stride + 1;
  b.initializer_i64("shape", {3}, {e.x[0], e.m, oh * ow});
  b.node("Reshape", {"c", "shape"}, {"f"}, "flat");
  auto& t = b.node("Transpose", {"f"}, {"y"}, "tr");
  testing::set_attr_ints(t, "perm", e.perm);
  b.output("y");
  if (e.conv_also_output) b.output("c");
  return b;
}

TEST(PatchEmbedding, ConvFlattenTransposeBecomesPatchesAndGemm) {
  const auto r = run_pass(embed_model({}), pass());
  EXPECT_EQ(op_types(r.before), (std::vector<std::string>{"Conv", "Reshape", "Transpose"}));
  ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Patches", "kiln.FusedGemm"}));
  const ir::Node& patches = r.after.nodes[0];
  const ir::Node& gemm = r.after.nodes[1];
  EXPECT_EQ(patches.attrs.get_ints("kernel_shape"), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(r.after.value(patches.outputs[0]).desc.to_string(), "float32[1,6,48]");
  EXPECT_EQ(gemm.name, "conv");
  EXPECT_EQ(gemm.inputs[0], patches.outputs[0]);
  EXPECT_EQ(r.after.value(gemm.inputs[1]).desc.to_string(), "float32[48,5]");
  EXPECT_EQ(gemm.inputs[2], r.after.find_value("b"));
  EXPECT_EQ(gemm.fused_from, (std::vector<std::string>{"conv", "flat", "tr"}));
  EXPECT_EQ(r.after.value(r.after.outputs[0]).name, "y");
  EXPECT_EQ(r.after.value(r.after.outputs[0]).desc.to_string(), "float32[1,6,5]");
  EXPECT_EQ(r.after.opset_imports.at("kiln"), 1);
  ASSERT_EQ(r.log.count("patch_embedding"), 1u);
  EXPECT_EQ(r.log.entries()[0].message,
            "fused conv + flat + tr into kiln.Patches + kiln.FusedGemm 'conv'");
  testing::expect_same_outputs(r.before, r.after);
}

TEST(PatchEmbedding, NoBiasBatchAndRectangularImages) {
  for (const Embed& e :
       {Embed{.bias = false}, Embed{.x = {2, 2, 6, 9}, .m = 7, .k = 3, .stride = 3},
        Embed{.x = {1, 1, 16, 16}, .m = 17, .k = 16, .stride = 16}}) {
    SCOPED_TRACE(::testing::Message() << "x " << e.x[0] << "x" << e.x[1] << "x" << e.x[2] << "x"
                                      << e.x[3] << " k " << e.k);
    const auto r = run_pass(embed_model(e), pass());
    ASSERT_EQ(op_types(r.after), (std::vector<std::string>{"kiln.Patches", "kiln.FusedGemm"}));
    testing::expect_same_outputs(r.before, r.after);
  }
}

TEST(PatchEmbedding, LeavesOtherConvolutionsAlone) {
  // Overlapping windows, padding, an uncovered edge (13 columns in patches of 4), another
  // transpose, and a Conv output someone else reads.
  for (const Embed& e : {Embed{.stride = 2}, Embed{.pad = 1}, Embed{.x = {1, 3, 8, 13}},
                         Embed{.perm = {1, 0, 2}}, Embed{.conv_also_output = true}}) {
    const auto r = run_pass(embed_model(e), pass());
    EXPECT_EQ(op_types(r.after), (std::vector<std::string>{"Conv", "Reshape", "Transpose"}));
    EXPECT_EQ(r.log.count("patch_embedding"), 0u);
  }
}

}  // namespace patch_embedding_test
}  // namespace kiln
