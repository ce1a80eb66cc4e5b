// gemm.packed.f32.*, matmul.packed.f32.* and fused_gemm.packed.f32.* against the reference: row,
// column and depth tails of the register tile and blocks, transposes, alpha, beta and every
// broadcast of C, batched A, every activation, FusedGemm's residual, threads and the prepacked
// (engine) path. Skipped
// where the host lacks the ISA.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <optional>

#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace x86_gemm_test {

constexpr Tolerance kGemmTol{1e-4, 5e-5};
constexpr Tolerance kActTol{1e-4, 1e-4};

std::string name(const std::string& op, const std::string& isa) {
  return op + ".packed.f32." + isa;
}

struct Mnk {
  int64_t m, n, k;
};
const Mnk kShapes[] = {{1, 1, 1},     {3, 17, 7},  {17, 5, 33},  {9, 40, 300},
                       {70, 33, 513}, {8, 32, 16}, {13, 100, 2}, {200, 7, 64}};

OpCase gemm_case(const Mnk& s, bool ta, bool tb, const Dims& c_dims, float alpha = 1.0f,
                 float beta = 1.0f) {
  OpCase c;
  c.op_type = "Gemm";
  c.attrs =
      attrs({{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", alpha}, {"beta", beta}});
  c.inputs = {in(random_f32(ta ? Dims{s.k, s.m} : Dims{s.m, s.k}, 1)),
              constant(random_f32(tb ? Dims{s.n, s.k} : Dims{s.k, s.n}, 2))};
  if (c_dims.size() != 1 || c_dims[0] != -1) c.inputs.push_back(constant(random_f32(c_dims, 3)));
  return c;
}

TEST(X86GemmTactic, MatchesReferenceOverShapesTransposesAndC) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const Mnk& s : kShapes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          expect_matches_reference(name("gemm", isa), gemm_case(s, ta, tb, {-1}), kGemmTol);
        }
      }
      for (const Dims& c : {Dims{}, Dims{s.n}, Dims{s.m, 1}, Dims{s.m, s.n}, Dims{1, s.n}}) {
        expect_matches_reference(name("gemm", isa), gemm_case(s, false, true, c, 0.5f, -2.0f),
                                 kGemmTol);
      }
    }
  }
}

TEST(X86MatMulTactic, MatchesReferenceForTwoDAndBatchedA) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const std::pair<Dims, Dims> cases[] = {
      {{1, 1}, {1, 1}},    {{3, 7}, {7, 17}},         {{17, 33}, {33, 5}},
      {{2, 5, 7}, {7, 3}}, {{2, 3, 5, 16}, {16, 33}}, {{197, 192}, {192, 70}},
  };
  for (const std::string& isa : isas) {
    for (const auto& [a, b] : cases) {
      OpCase c;
      c.op_type = "MatMul";
      c.inputs = {in(random_f32(a, 1)), constant(random_f32(b, 2))};
      expect_matches_reference(name("matmul", isa), c, kGemmTol);
    }
  }
}

TEST(X86FusedGemmTactic, EveryActivationBatchedAndNot) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const std::pair<std::string, std::vector<float>> acts[] = {
      {"", {}},        {"Relu", {}}, {"Clip", {0.0f, 6.0f}}, {"LeakyRelu", {0.1f}},
      {"Sigmoid", {}}, {"Silu", {}}, {"HardSwish", {}},      {"HardSigmoid", {0.2f, 0.5f}},
      {"Gelu", {}},    {"Tanh", {}},
  };
  for (const std::string& isa : isas) {
    for (const auto& [act, params] : acts) {
      for (bool batched : {false, true}) {
        SCOPED_TRACE(act + (batched ? " batched" : ""));
        OpCase c;
        c.op_type = "FusedGemm";
        c.domain = "kiln";
        c.opset = 1;
        if (!act.empty()) c.attrs.set("activation", act);
        if (!params.empty()) c.attrs.set("activation_params", params);
        c.inputs = {in(random_f32(batched ? Dims{2, 9, 20} : Dims{9, 20}, 1)),
                    constant(random_f32({20, 37}, 2)), constant(random_f32({37}, 3))};
        expect_matches_reference(name("fused_gemm", isa), c, kActTol);
      }
    }
  }
}

// FusedGemm's residual Z: C then goes in as a column bias (beta * C), Z as the addend, and the
// activation applies to the sum.
OpCase residual_case(const Dims& a, int64_t n, std::optional<Dims> c_dims, float beta,
                     const std::string& act) {
  OpCase c;
  c.op_type = "FusedGemm";
  c.domain = "kiln";
  c.opset = 1;
  c.attrs = attrs({{"beta", beta}, {"alpha", 0.75f}});
  if (!act.empty()) c.attrs.set("activation", act);
  const int64_t k = a.back();
  Dims y = a;
  y.back() = n;
  c.inputs = {in(random_f32(a, 1)), constant(random_f32({k, n}, 2)),
              c_dims ? constant(random_f32(*c_dims, 3)) : absent(), in(random_f32(y, 4))};
  return c;
}

TEST(X86FusedGemmTactic, AResidualWithEveryOneRowCTailsAndThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const Dims& a :
         {Dims{1, 1}, Dims{9, 20}, Dims{17, 33}, Dims{2, 13, 40}, Dims{1, 197, 64}}) {
      for (const int64_t n : {int64_t{1}, int64_t{37}, int64_t{64}}) {
        for (const std::optional<Dims>& cd :
             {std::optional<Dims>(), std::optional<Dims>(Dims{n}), std::optional<Dims>(Dims{1, n}),
              std::optional<Dims>(Dims{}), std::optional<Dims>(Dims{1})}) {
          SCOPED_TRACE(fmt::format("A [{}] N {} C {}", fmt::join(a, ","), n,
                                   cd ? fmt::format("[{}]", fmt::join(*cd, ",")) : "none"));
          expect_matches_reference(name("fused_gemm", isa), residual_case(a, n, cd, -1.5f, ""),
                                   kGemmTol);
        }
      }
    }
    expect_matches_reference(name("fused_gemm", isa),
                             residual_case({9, 20}, 37, Dims{37}, 1.0f, "Relu"), kActTol);
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(name("fused_gemm", isa),
                                         residual_case({70, 300}, 33, Dims{33}, 1.0f, ""), kGemmTol,
                                         threads);
    }
  }
}

// A C with a row per output row would need the addend Z takes.
TEST(X86FusedGemmTactic, RefusesAResidualWithAFullC) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_rejected(name("fused_gemm", isa), residual_case({9, 20}, 37, Dims{9, 37}, 1.0f, ""),
                    "the epilogue adds one matrix");
  }
}

TEST(X86GemmTactic, PrepackedAndThreadedMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int threads : {1, 2, 3}) {
      expect_matches_reference_prepacked(
          name("gemm", isa), gemm_case({70, 33, 300}, true, true, {70, 1}), kGemmTol, threads);
      expect_matches_reference_prepacked(
          name("gemm", isa), gemm_case({1, 1000, 64}, false, false, {1000}), kGemmTol, threads);
      OpCase c;
      c.op_type = "MatMul";
      c.inputs = {in(random_f32({3, 50, 24}, 1)), constant(random_f32({24, 70}, 2))};
      expect_matches_reference_prepacked(name("matmul", isa), c, kGemmTol, threads);
    }
  }
}

TEST(X86GemmTactic, RefusesWhatItCannotRun) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    OpCase c;
    c.op_type = "MatMul";
    c.inputs = {in(random_f32({3, 7}, 1)), in(random_f32({7, 5}, 2))};
    expect_rejected(name("matmul", isa), c, "not a constant");
    c.inputs = {in(random_f32({2, 3, 7}, 1)), constant(random_f32({2, 7, 5}, 2))};
    expect_rejected(name("matmul", isa), c, "rank 3");
    c.inputs = {in(random_f32({7}, 1)), constant(random_f32({7, 5}, 2))};
    expect_rejected(name("matmul", isa), c, "rank 1");
    c.op_type = "Gemm";
    c.inputs = {in(Tensor(DType::kF64, {2, 2})), constant(Tensor(DType::kF64, {2, 2}))};
    expect_rejected(name("gemm", isa), c, "float64");
  }
}

}  // namespace x86_gemm_test
}  // namespace kiln::testing
