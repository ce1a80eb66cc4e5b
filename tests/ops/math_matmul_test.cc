// MatMul, Gemm, MatMulInteger and QLinearMatMul: hand-computed values, numpy 1-D/batch semantics,
// symbolic shape inference and validation errors.
#include "ops/math_test_util.h"

namespace kiln::testing::math {
namespace math_matmul_test {

// A = [[1,2,3],[4,5,6]], B = [[7,8],[9,10],[11,12]]: A*B = [[58,64],[139,154]].
Tensor mat_a() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor mat_b() { return f32({3, 2}, {7, 8, 9, 10, 11, 12}); }

TEST(MathMatMul, TwoD) {
  expect_output({.op_type = "MatMul", .inputs = {in(mat_a()), in(mat_b())}},
                f32({2, 2}, {58, 64, 139, 154}));
}

TEST(MathMatMul, OneDOperandsArePromotedAndRemoved) {
  expect_output({.op_type = "MatMul", .inputs = {in(f32({3}, {1, 2, 3})), in(f32({3}, {4, 5, 6}))}},
                f32({}, {32}));
  expect_output({.op_type = "MatMul", .inputs = {in(f32({3}, {1, 2, 3})), in(mat_b())}},
                f32({2}, {58, 64}));
  expect_output({.op_type = "MatMul", .inputs = {in(mat_a()), in(f32({3}, {1, 1, 1}))}},
                f32({2}, {6, 15}));
}

TEST(MathMatMul, BatchDimsBroadcast) {
  // A: two 1x2 matrices [1,2] and [3,4]; B: three 2x1 matrices (1,0), (0,1), (1,1).
  const Tensor a = f32({2, 1, 1, 2}, {1, 2, 3, 4});
  const Tensor b = f32({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  expect_output({.op_type = "MatMul", .inputs = {in(a), in(b)}},
                f32({2, 3, 1, 1}, {1, 2, 3, 3, 4, 7}));
  // A 3-D batch against a single 2-D matrix.
  expect_output(
      {.op_type = "MatMul", .inputs = {in(f32({2, 1, 3}, {1, 2, 3, 4, 5, 6})), in(mat_b())}},
      f32({2, 1, 2}, {58, 64, 139, 154}));
}

TEST(MathMatMul, IntegerAndHalfTypes) {
  expect_output({.op_type = "MatMul",
                 .inputs = {in(tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6})),
                            in(tensor<int32_t>({3, 2}, {7, 8, 9, 10, 11, 12}))}},
                tensor<int32_t>({2, 2}, {58, 64, 139, 154}));
  auto a16 = cast_tensor(mat_a(), DType::kF16);
  auto b16 = cast_tensor(mat_b(), DType::kF16);
  auto want = cast_tensor(f32({2, 2}, {58, 64, 139, 154}), DType::kF16);
  expect_output({.op_type = "MatMul", .inputs = {in(*a16), in(*b16)}}, *want);
}

TEST(MathMatMul, KeepsSymbolicDims) {
  auto out = infer_one("MatMul", 17, {},
                       {ir::TensorDesc::of(DType::kF32, {sym("batch"), sym("seq"), num(768)}),
                        ir::TensorDesc::of(DType::kF32, {num(768), num(3072)})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].to_string(), "float32[batch,seq,3072]");
  auto bmm = infer_one("MatMul", 17, {},
                       {ir::TensorDesc::of(DType::kF32, {sym("b"), sym("h"), sym("s"), num(64)}),
                        ir::TensorDesc::of(DType::kF32, {sym("b"), sym("h"), num(64), sym("s")})});
  ASSERT_TRUE(bmm.is_ok()) << bmm.status().to_string();
  EXPECT_EQ((*bmm)[0].to_string(), "float32[b,h,s,s]");
}

TEST(MathMatMul, InnerDimMismatchNamesBothShapes) {
  expect_error(
      {.op_type = "MatMul", .inputs = {in(mat_a()), in(f32({4, 2}, std::vector<float>(8)))}},
      StatusCode::kInvalidModel, "A [2,3] has K=3 but B [4,2] has K=4");
  expect_error({.op_type = "MatMul", .inputs = {in(f32({}, {1})), in(mat_b())}},
               StatusCode::kInvalidModel, "rank >= 1");
  expect_error({.op_type = "MatMul",
                .inputs = {in(f32({2, 2, 3}, std::vector<float>(12))),
                           in(f32({3, 3, 2}, std::vector<float>(18)))}},
               StatusCode::kInvalidModel, "cannot be broadcast");
  expect_error({.op_type = "MatMul", .inputs = {in(mat_a()), in(i64({3, 2}, {1, 2, 3, 4, 5, 6}))}},
               StatusCode::kInvalidModel, "dtype int64");
}

TEST(MathGemm, BiasBroadcasts) {
  expect_output({.op_type = "Gemm", .inputs = {in(mat_a()), in(mat_b()), in(f32({}, {1}))}},
                f32({2, 2}, {59, 65, 140, 155}));
  expect_output({.op_type = "Gemm", .inputs = {in(mat_a()), in(mat_b()), in(f32({2, 1}, {1, 2}))}},
                f32({2, 2}, {59, 65, 141, 156}));
  expect_output(
      {.op_type = "Gemm", .inputs = {in(mat_a()), in(mat_b()), in(f32({2, 2}, {1, 2, 3, 4}))}},
      f32({2, 2}, {59, 66, 142, 158}));
}

TEST(MathGemm, TransposesAndScales) {
  ir::Attributes attrs;
  attrs.set("transA", int64_t{1});
  attrs.set("transB", int64_t{1});
  attrs.set("alpha", 2.0f);
  attrs.set("beta", 0.5f);
  const Tensor at = f32({3, 2}, {1, 4, 2, 5, 3, 6});
  const Tensor bt = f32({2, 3}, {7, 9, 11, 8, 10, 12});
  expect_output(
      {.op_type = "Gemm", .attrs = attrs, .inputs = {in(at), in(bt), in(f32({2}, {10, 20}))}},
      f32({2, 2}, {121, 138, 283, 318}));
}

TEST(MathGemm, CIsOptionalFromOpset11) {
  expect_output({.op_type = "Gemm", .opset = 11, .inputs = {in(mat_a()), in(mat_b())}},
                f32({2, 2}, {58, 64, 139, 154}));
  expect_error({.op_type = "Gemm", .opset = 9, .inputs = {in(mat_a()), in(mat_b())}},
               StatusCode::kInvalidModel, "(C) is required");
}

TEST(MathGemm, Validation) {
  expect_error(
      {.op_type = "Gemm", .inputs = {in(f32({2, 3, 1}, std::vector<float>(6))), in(mat_b())}},
      StatusCode::kInvalidModel, "must be 2-D");
  expect_error({.op_type = "Gemm", .inputs = {in(mat_a()), in(f32({2, 2}, {1, 2, 3, 4}))}},
               StatusCode::kInvalidModel, "inner dimensions do not match");
  expect_error({.op_type = "Gemm", .inputs = {in(mat_a()), in(mat_b()), in(f32({3}, {1, 2, 3}))}},
               StatusCode::kInvalidModel, "C [3] cannot be broadcast to the output [2,2]");
}

TEST(MathGemm, SymbolicRows) {
  auto out = infer_one("Gemm", 13, {},
                       {ir::TensorDesc::of(DType::kF32, {sym("batch"), num(512)}),
                        ir::TensorDesc::of(DType::kF32, {num(512), num(10)}),
                        ir::TensorDesc::of(DType::kF32, {num(10)})});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].to_string(), "float32[batch,10]");
}

TEST(MathMatMulInteger, ZeroPointsPerTensorAndPerRow) {
  const Tensor a = tensor<uint8_t>({2, 2}, {11, 12, 13, 14});
  const Tensor b = tensor<uint8_t>({2, 2}, {1, 2, 3, 4});
  // (a - 10) = [[1,2],[3,4]]; b - 0 = [[1,2],[3,4]] -> [[7,10],[15,22]].
  expect_output(
      {.op_type = "MatMulInteger", .inputs = {in(a), in(b), in(tensor<uint8_t>({}, {10}))}},
      tensor<int32_t>({2, 2}, {7, 10, 15, 22}));
  // Per-row a zero points [10, 12]: rows [1,2] and [1,2] -> [[7,10],[7,10]].
  expect_output(
      {.op_type = "MatMulInteger", .inputs = {in(a), in(b), in(tensor<uint8_t>({2}, {10, 12}))}},
      tensor<int32_t>({2, 2}, {7, 10, 7, 10}));
  expect_error({.op_type = "MatMulInteger", .inputs = {in(a), in(b), in(tensor<int8_t>({}, {1}))}},
               StatusCode::kInvalidModel, "zero point 2 has dtype int8");
}

TEST(MathQLinearMatMul, Requantizes) {
  // a = [[2,4]] with scale 0.5 -> [1,2]; b = [[2],[2]] scale 1 -> [2,2]; real product 6;
  // y_scale 2, y_zero 10 -> 6/2 + 10 = 13.
  expect_output({.op_type = "QLinearMatMul",
                 .inputs = {in(tensor<uint8_t>({1, 2}, {2, 4})), in(f32({}, {0.5f})),
                            in(tensor<uint8_t>({}, {0})), in(tensor<uint8_t>({2, 1}, {2, 2})),
                            in(f32({}, {1})), in(tensor<uint8_t>({}, {0})), in(f32({}, {2})),
                            in(tensor<uint8_t>({}, {10}))}},
                tensor<uint8_t>({1, 1}, {13}));
}

}  // namespace math_matmul_test
}  // namespace kiln::testing::math
