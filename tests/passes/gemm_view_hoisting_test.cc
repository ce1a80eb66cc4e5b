#include "passes/gemm_view_hoisting.h"

#include <gtest/gtest.h>

#include "fusion_test_util.h"
#include "passes/fold_test_util.h"
#include "passes/gemm_activation_fusion.h"
#include "passes/gemm_residual_fusion.h"

namespace kiln {
namespace gemm_view_hoisting_test {

using testing::OnnxBuilder;
using testing::op_types;
using testing::run_pass;
using Ops = std::vector<std::string>;

const passes::PassDef& pass() { return passes::gemm_view_hoisting_pass(); }

void expect_unchanged(const testing::PassResult& r) {
  EXPECT_EQ(r.after.dump(), r.before.dump());
  EXPECT_EQ(r.log.entries().size(), 0u);
}

// a [6, 4] -> Gemm "proj" (w [4, 5], C c_dims, transA) -> "g" [6, 5] -> Reshape "view" (target)
// -> "y".
OnnxBuilder projection_model(std::vector<int64_t> target, std::vector<int64_t> c_dims = {5},
                             bool trans_a = false) {
  OnnxBuilder b;
  b.input("a", 1, trans_a ? std::vector<int64_t>{4, 6} : std::vector<int64_t>{6, 4});
  b.initializer("w", {4, 5}, testing::weights(20));
  std::vector<std::string> in = {"a", "w"};
  if (!c_dims.empty()) {
    int64_t n = 1;
    for (int64_t d : c_dims) n *= d;
    b.initializer("c", c_dims, testing::weights(n, 0.3f));
    in.push_back("c");
  }
  auto& gemm = b.node("Gemm", in, {"g"}, "proj");
  if (trans_a) testing::set_attr_int(gemm, "transA", 1);
  b.initializer_i64("target", {static_cast<int64_t>(target.size())}, target);
  b.node("Reshape", {"g", "target"}, {"y"}, "view");
  b.output("y");
  return b;
}

TEST(GemmViewHoisting, TheReshapeOfTheRowsMovesToA) {
  for (const std::vector<int64_t>& target :
       {std::vector<int64_t>{2, 3, 5}, std::vector<int64_t>{1, 6, 5},
        std::vector<int64_t>{-1, 2, 5}}) {
    const auto r = run_pass(projection_model(target), pass());
    ASSERT_EQ(op_types(r.after), (Ops{"Reshape", "kiln.FusedGemm"}));
    const ir::Node& view = r.after.nodes[0];
    const Tensor* shape = r.after.value(view.inputs[1]).constant();
    ASSERT_NE(shape, nullptr);
    std::vector<int64_t> want = target;
    want.back() = 4;
    EXPECT_EQ(shape->to_int64_vector(), want);
    EXPECT_EQ(view.inputs[0], r.after.find_value("a"));
    EXPECT_EQ(r.after.nodes[1].inputs[0], view.outputs[0]);
    EXPECT_EQ(r.after.value(r.after.nodes[1].outputs[0]).name, "y");
    EXPECT_TRUE(testing::logged(r.log, "gemm_view_hoisting", {"proj reads A as"}));
    testing::expect_same_outputs(r.before, r.after);
  }
}

// nn.MultiheadAttention's out-projection: Gemm on rows, viewed as [seq, batch, d], then x + that;
// with the Reshape hoisted the residual fuses, and a Relu fused before stays on the GEMM.
TEST(GemmViewHoisting, LetsTheResidualFuseAndKeepsTheActivation) {
  OnnxBuilder b = projection_model({2, 3, 5});
  b.model().mutable_graph()->mutable_output()->Clear();
  b.model().mutable_graph()->mutable_node(0)->set_output(0, "g0");
  b.node("Relu", {"g0"}, {"g"}, "relu");
  b.input("x", 1, {2, 3, 5});
  b.node("Add", {"y", "x"}, {"out"}, "residual");
  b.output("out");
  const ir::Graph before = testing::import_model(b);
  passes::PassLog log;
  const ir::Graph after = testing::run_passes(
      before,
      {&passes::gemm_activation_fusion_pass(), &pass(), &passes::gemm_residual_fusion_pass()}, log);
  // The Relu applies before the sum, so the residual stays an Add; the hoisting still happens.
  EXPECT_EQ(op_types(after), (Ops{"Reshape", "kiln.FusedGemm", "Add"}));
  EXPECT_EQ(after.nodes[1].attrs.get_string("activation", ""), "Relu");
  testing::expect_same_outputs(before, after);

  OnnxBuilder plain = projection_model({2, 3, 5});
  plain.model().mutable_graph()->mutable_output()->Clear();
  plain.input("x", 1, {2, 3, 5});
  plain.node("Add", {"x", "y"}, {"out"}, "residual");
  plain.output("out");
  const ir::Graph plain_before = testing::import_model(plain);
  const ir::Graph plain_after =
      testing::run_passes(plain_before, {&pass(), &passes::gemm_residual_fusion_pass()}, log);
  ASSERT_EQ(op_types(plain_after), (Ops{"Reshape", "kiln.FusedGemm"}));
  EXPECT_EQ(plain_after.nodes[1].inputs[3], plain_after.find_value("x"));
  testing::expect_same_outputs(plain_before, plain_after);
}

// Guards: the last dim changes (columns would mix with rows), A is transposed, C has a row per
// output row (it cannot follow A's new rank), a 0 in the target (it would copy a dim of A), the
// GEMM's output is read elsewhere.
TEST(GemmViewHoisting, LeavesWhatIsNotARegroupingOfRows) {
  expect_unchanged(run_pass(projection_model({3, 10}), pass()));
  expect_unchanged(run_pass(projection_model({2, 3, 5}, {5}, /*trans_a=*/true), pass()));
  expect_unchanged(run_pass(projection_model({2, 3, 5}, {6, 5}), pass()));
  expect_unchanged(run_pass(projection_model({0, 5}), pass()));
  OnnxBuilder shared = projection_model({2, 3, 5});
  shared.output("g");
  expect_unchanged(run_pass(shared, pass()));
}

}  // namespace gemm_view_hoisting_test
}  // namespace kiln
