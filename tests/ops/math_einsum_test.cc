// Einsum: matmul/transpose/reduction/diagonal forms, implicit output, ellipsis broadcasting,
// symbolic inference and equation errors.
#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace {

OpCase einsum(const std::string& eq, std::vector<Tensor> operands) {
  ir::Attributes a;
  a.set("equation", eq);
  OpCase c{.op_type = "Einsum", .opset = 12, .attrs = a};
  for (Tensor& t : operands) c.inputs.push_back(in(std::move(t)));
  return c;
}

Tensor mat_a() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor mat_b() { return f32({3, 2}, {7, 8, 9, 10, 11, 12}); }

TEST(MathEinsum, MatmulTransposeAndReduction) {
  expect_output(einsum("ij,jk->ik", {mat_a(), mat_b()}), f32({2, 2}, {58, 64, 139, 154}));
  expect_output(einsum("ij->ji", {mat_a()}), f32({3, 2}, {1, 4, 2, 5, 3, 6}));
  expect_output(einsum("ij->i", {mat_a()}), f32({2}, {6, 15}));
  expect_output(einsum("ij->", {mat_a()}), f32({}, {21}));
  expect_output(einsum("i,i", {f32({3}, {1, 2, 3}), f32({3}, {4, 5, 6})}), f32({}, {32}));
}

TEST(MathEinsum, ImplicitOutputIsAlphabetical) {
  // "ji": labels sorted give output "ij", i.e. the transpose.
  expect_output(einsum("ji", {mat_a()}), f32({3, 2}, {1, 4, 2, 5, 3, 6}));
  expect_output(einsum("ij", {mat_a()}), mat_a());
}

TEST(MathEinsum, DiagonalAndTrace) {
  const Tensor m = f32({2, 2}, {1, 2, 3, 4});
  expect_output(einsum("ii->i", {m}), f32({2}, {1, 4}));
  expect_output(einsum("ii", {m}), f32({}, {5}));
}

TEST(MathEinsum, AttentionScores) {
  // q rows (1,0) and (0,1) against k rows (1,2) and (3,4): q k^T = [[1,3],[2,4]].
  const Tensor q = f32({1, 1, 2, 2}, {1, 0, 0, 1});
  const Tensor k = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  expect_output(einsum("bhid,bhjd->bhij", {q, k}), f32({1, 1, 2, 2}, {1, 3, 2, 4}));
}

TEST(MathEinsum, EllipsisBroadcasts) {
  expect_output(einsum("...ij,jk->...ik", {f32({2, 1, 3}, {1, 2, 3, 4, 5, 6}), mat_b()}),
                f32({2, 1, 2}, {58, 64, 139, 154}));
  expect_output(einsum("...i,...i->...", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {1, 1})}),
                f32({2}, {3, 7}));
}

TEST(MathEinsum, IntegerOperands) {
  expect_output(einsum("ij,jk->ik", {i64({1, 2}, {2, 3}), i64({2, 1}, {4, 5})}), i64({1, 1}, {23}));
}

TEST(MathEinsum, ErrorsQuoteTheEquation) {
  expect_error(einsum("ij,jk->i$", {mat_a(), mat_b()}), StatusCode::kInvalidModel,
               "equation 'ij,jk->i$': unexpected character '$'");
  expect_error(einsum("ij->i", {mat_a(), mat_b()}), StatusCode::kInvalidModel,
               "has 1 operand terms but the node has 2 inputs");
  expect_error(einsum("ijk->i", {mat_a()}), StatusCode::kInvalidModel,
               "equation 'ijk->i': operand 0 has rank 2 but its term 'ijk' needs 3");
  expect_error(einsum("ij,jk->ik", {mat_a(), mat_a()}), StatusCode::kInvalidModel,
               "label 'j' has sizes 3 and 2");
  expect_error(einsum("ij->k", {mat_a()}), StatusCode::kInvalidModel,
               "output label 'k' is not in any input");
  expect_error(einsum("i...j...->i", {mat_a()}), StatusCode::kInvalidModel, "two ellipses");
}

TEST(MathEinsum, SymbolicInference) {
  ir::Attributes a;
  a.set("equation", std::string("bhid,bhjd->bhij"));
  auto out = infer_one("Einsum", 12, a,
                       {ir::TensorDesc::of(DType::kF32, {sym("b"), num(12), sym("s"), num(64)}),
                        ir::TensorDesc::of(DType::kF32, {sym("b"), num(12), sym("t"), num(64)})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].to_string(), "float32[b,12,s,t]");
  ir::Attributes e;
  e.set("equation", std::string("...ij->...ji"));
  auto ell = infer_one("Einsum", 12, e,
                       {ir::TensorDesc::of(DType::kF32, {sym("n"), num(2), num(3), num(4)})});
  ASSERT_TRUE(ell.is_ok()) << ell.status().to_string();
  EXPECT_EQ((*ell)[0].to_string(), "float32[n,2,4,3]");
}

}  // namespace
}  // namespace kiln::testing::math
