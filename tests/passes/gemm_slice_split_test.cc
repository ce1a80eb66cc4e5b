#include "passes/gemm_slice_split.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"
#include "io/random_input.h"
#include "passes/gemm_activation_fusion.h"
#include "passes/matmul_add_fusion.h"

namespace kiln {
namespace gemm_slice_split_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;
using Ops = std::vector<std::string>;

const passes::PassDef& pass() { return passes::gemm_slice_split_pass(); }

void expect_unchanged(const testing::PassResult& r) {
  EXPECT_EQ(r.after.dump(), r.before.dump());
  EXPECT_EQ(r.log.entries().size(), 0u);
}

struct SliceSpec {
  int64_t start, end;
  int64_t axis = -1;
  int64_t step = 1;
};

// x [4, 5] -> Gemm "gemm" (w [5, 12] or, transB, [12, 5]; C c_dims) -> "g", Slices "s<i>" ->
// "y<i>".
OnnxBuilder sliced_gemm(const std::vector<SliceSpec>& slices, std::vector<int64_t> c_dims = {12},
                        bool trans_b = false) {
  OnnxBuilder b;
  b.input("x", 1, {4, 5});
  b.initializer("w", trans_b ? std::vector<int64_t>{12, 5} : std::vector<int64_t>{5, 12},
                testing::weights(60));
  std::vector<std::string> in = {"x", "w"};
  if (!c_dims.empty()) {
    int64_t n = 1;
    for (int64_t d : c_dims) n *= d;
    b.initializer("c", c_dims, testing::weights(n, 0.5f));
    in.push_back("c");
  }
  auto& gemm = b.node("Gemm", in, {"g"}, "gemm");
  if (trans_b) testing::set_attr_int(gemm, "transB", 1);
  for (size_t i = 0; i < slices.size(); ++i) {
    const std::string k = std::to_string(i);
    const SliceSpec& s = slices[i];
    b.initializer_i64("st" + k, {1}, {s.start})
        .initializer_i64("en" + k, {1}, {s.end})
        .initializer_i64("ax" + k, {1}, {s.axis})
        .initializer_i64("sp" + k, {1}, {s.step});
    b.node("Slice", {"g", "st" + k, "en" + k, "ax" + k, "sp" + k}, {"y" + k}, "s" + k);
    b.output("y" + k);
  }
  return b;
}

// Q, K and V of a fused projection: thirds of the columns, with negative and clamped bounds, a
// bias per column or one for all, B transposed or not.
TEST(GemmSliceSplit, OneGemmPerSliceOverItsColumns) {
  const std::vector<SliceSpec> thirds = {{0, 4}, {4, -4}, {-4, 1000}};
  for (const std::vector<int64_t>& c : {std::vector<int64_t>{12}, std::vector<int64_t>{1, 12},
                                        std::vector<int64_t>{1}, std::vector<int64_t>{}}) {
    for (bool trans_b : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "C rank " << c.size() << ", transB " << trans_b);
      const auto r = run_pass(sliced_gemm(thirds, c, trans_b), pass());
      ASSERT_EQ(op_types(r.after), (Ops{"kiln.FusedGemm", "kiln.FusedGemm", "kiln.FusedGemm"}));
      EXPECT_EQ(r.after.nodes[1].name, "gemm.cols4_8");
      EXPECT_EQ(r.after.nodes[1].fused_from, (Ops{"gemm", "s1"}));
      EXPECT_EQ(r.after.value(r.after.nodes[2].outputs[0]).name, "y2");
      EXPECT_EQ(r.after.value(r.after.nodes[0].inputs[1]).desc.to_string(),
                trans_b ? "float32[4,5]" : "float32[5,4]");
      ASSERT_EQ(r.log.entries().size(), 3u);
      EXPECT_EQ(r.log.entries()[0].message, "fused gemm + s0 into kiln.FusedGemm 'gemm.cols0_4'");
      testing::expect_same_outputs(r.before, r.after);
    }
  }
}

// torch's in_proj: MatMul + bias on a [S, 1, D] activation, with the activation fusion before.
TEST(GemmSliceSplit, AfterMatMulAddFusionOnABatchedActivation) {
  OnnxBuilder b;
  b.input("x", 1, {7, 1, 6});
  b.initializer("w", {6, 9}, testing::weights(54));
  b.initializer("bias", {9}, testing::weights(9, 1.0f));
  b.node("MatMul", {"x", "w"}, {"m"}, "in_proj");
  b.node("Add", {"m", "bias"}, {"h"}, "in_proj_bias");
  for (int i = 0; i < 3; ++i) {
    const std::string k = std::to_string(i);
    b.initializer_i64("st" + k, {1}, {3 * i}).initializer_i64("en" + k, {1}, {3 * i + 3});
    b.initializer_i64("ax" + k, {1}, {2});
    b.node("Slice", {"h", "st" + k, "en" + k, "ax" + k}, {"q" + k}, "slice" + k);
    b.output("q" + k);
  }
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after = testing::run_passes(
      before, {&passes::matmul_add_fusion_pass(), &passes::gemm_activation_fusion_pass(), &pass()},
      log);
  EXPECT_EQ(op_types(after), (Ops{"kiln.FusedGemm", "kiln.FusedGemm", "kiln.FusedGemm"}));
  EXPECT_EQ(after.nodes[2].fused_from, (Ops{"in_proj", "in_proj_bias", "slice2"}));
  Result<Tensor> x = io::random_tensor(DType::kF32, {7, 1, 6}, 3);
  ASSERT_TRUE(x.is_ok());
  testing::expect_same_outputs(before, after, {{"x", *x}});
}

// Guards: a Slice of another axis, a step of 2, an empty range, a reader that is no Slice, the
// product as a graph output.
TEST(GemmSliceSplit, LeavesOtherReadersAlone) {
  expect_unchanged(run_pass(sliced_gemm({{0, 6}, {0, 2, 0}}), pass()));
  expect_unchanged(run_pass(sliced_gemm({{0, 6}, {6, 12, -1, 2}}), pass()));
  expect_unchanged(run_pass(sliced_gemm({{0, 6}, {8, 6}}), pass()));
  OnnxBuilder relu = sliced_gemm({{0, 6}});
  relu.node("Relu", {"g"}, {"r"}, "relu");
  relu.output("r");
  expect_unchanged(run_pass(relu, pass()));
  OnnxBuilder out = sliced_gemm({{0, 6}});
  out.output("g");
  expect_unchanged(run_pass(out, pass()));
}

}  // namespace gemm_slice_split_test
}  // namespace kiln
