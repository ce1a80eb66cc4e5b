// gemm.blocked.f32 (Gemm) and matmul.blocked.f32 (MatMul) against the reference kernels.
#include <gtest/gtest.h>

#include <optional>

#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace gemm_tactic_test {

constexpr const char* kGemm = "gemm.blocked.f32";
constexpr const char* kMatMul = "matmul.blocked.f32";

struct GemmCase {
  int64_t m, k, n;
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  std::optional<Dims> c_dims;  // nullopt: no C
  bool const_b = true;
};

OpCase gemm_case(const GemmCase& g, uint64_t seed = 1) {
  OpCase c;
  c.op_type = "Gemm";
  c.opset = 13;
  c.attrs = attrs({{"transA", int64_t{g.trans_a}},
                   {"transB", int64_t{g.trans_b}},
                   {"alpha", g.alpha},
                   {"beta", g.beta}});
  c.inputs.push_back(in(random_f32(g.trans_a ? Dims{g.k, g.m} : Dims{g.m, g.k}, seed)));
  Tensor b = random_f32(g.trans_b ? Dims{g.n, g.k} : Dims{g.k, g.n}, seed + 1);
  c.inputs.push_back(g.const_b ? constant(b) : in(b));
  if (g.c_dims) c.inputs.push_back(constant(random_f32(*g.c_dims, seed + 2)));
  return c;
}

TEST(GemmTactic, MatchesReferenceOverSizesAndTranspositions) {
  for (int64_t m : {1, 3, 17}) {
    for (int64_t k : {1, 5, 33}) {
      for (int64_t n : {1, 7, 33}) {
        for (int t = 0; t < 4; ++t) {
          GemmCase g{m, k, n, (t & 1) != 0, (t & 2) != 0};
          g.c_dims = Dims{n};
          expect_matches_reference(kGemm, gemm_case(g), kSumTol);
        }
      }
    }
  }
}

TEST(GemmTactic, BroadcastsCAndScalesByAlphaAndBeta) {
  const int64_t m = 5, k = 6, n = 7;
  for (const Dims& c : {Dims{}, Dims{1}, Dims{n}, Dims{1, n}, Dims{m, 1}, Dims{m, n}, Dims{1, 1}}) {
    GemmCase g{m, k, n, false, true, 0.5f, -2.0f, c};
    expect_matches_reference(kGemm, gemm_case(g), kSumTol);
  }
  expect_matches_reference(kGemm, gemm_case({m, k, n, true, false, 1.5f}), kSumTol);  // no C
  GemmCase runtime_b{m, k, n, false, false, 1.0f, 1.0f, Dims{m, n}, /*const_b=*/false};
  expect_matches_reference(kGemm, gemm_case(runtime_b), kSumTol);
}

TEST(GemmTactic, CrossesEveryCacheBlock) {
  // m > MC (96), n > NC (256), k > KC (256): several blocks and their tails along every axis.
  for (bool const_b : {true, false}) {
    GemmCase g{100, 300, 270, false, false, 1.0f, 1.0f, Dims{270}, const_b};
    expect_matches_reference(kGemm, gemm_case(g), Tolerance{1e-5, 5e-5});
  }
  GemmCase t{100, 300, 270, true, true, 1.0f, 1.0f, Dims{100, 1}};
  expect_matches_reference(kGemm, gemm_case(t), Tolerance{1e-5, 5e-5});
}

TEST(GemmTactic, RefusesOtherDtypes) {
  OpCase c;
  c.op_type = "Gemm";
  c.inputs = {in(Tensor(DType::kI32, {2, 3})), in(Tensor(DType::kI32, {3, 4}))};
  expect_rejected(kGemm, c, "int32");
}

OpCase matmul_case(const Dims& a, const Dims& b, bool const_b, uint64_t seed = 1) {
  OpCase c;
  c.op_type = "MatMul";
  c.opset = 13;
  c.inputs.push_back(in(random_f32(a, seed)));
  Tensor bt = random_f32(b, seed + 1);
  c.inputs.push_back(const_b ? constant(bt) : in(bt));
  return c;
}

TEST(MatMulTactic, MatchesReferenceWithBatchBroadcasting) {
  const std::pair<Dims, Dims> shapes[] = {
      {{7}, {7}},                          // dot product
      {{5}, {5, 3}},                       // vector x matrix
      {{4, 5}, {5}},                       // matrix x vector
      {{3, 17}, {17, 33}},                 // plain
      {{2, 4, 5}, {5, 6}},                 // shared B: folded into one GEMM
      {{2, 1, 3, 4}, {5, 4, 6}},           // both sides broadcast
      {{3, 4}, {2, 4, 5}},                 // batched B, unbatched A
      {{2, 3, 1, 4, 5}, {1, 3, 2, 5, 2}},  // rank 5
      {{2, 3, 4}, {4}},                    // batched matrix x vector
      {{6}, {2, 6, 3}},                    // vector x batched matrix
  };
  for (const auto& [a, b] : shapes) {
    for (bool const_b : {true, false}) {
      expect_matches_reference(kMatMul, matmul_case(a, b, const_b), kSumTol);
    }
  }
}

TEST(MatMulTactic, HandlesBertSizedProjections) {
  expect_matches_reference(kMatMul, matmul_case({1, 9, 300}, {300, 40}, true),
                           Tolerance{1e-5, 5e-5});
  expect_matches_reference(kMatMul, matmul_case({2, 3, 9, 16}, {2, 3, 16, 9}, false), kSumTol);
}

TEST(MatMulTactic, RefusesOtherDtypes) {
  OpCase c;
  c.op_type = "MatMul";
  c.inputs = {in(Tensor(DType::kF64, {2, 3})), in(Tensor(DType::kF64, {3, 4}))};
  expect_rejected(kMatMul, c, "float64");
}

}  // namespace gemm_tactic_test
}  // namespace kiln::testing
