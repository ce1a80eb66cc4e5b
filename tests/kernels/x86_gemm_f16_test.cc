// gemm.packed.f16w.*, matmul.packed.f16w.* and fused_gemm.packed.f16w.* (FP16 layers: B packed as
// binary16, widened in the microkernel) against the reference run with B rounded to binary16: the
// same float32 arithmetic on the same weights, so the float32 tolerance holds. Row, column and
// depth tails (n not a multiple of the panel width, odd k, m = 1..), transposes, C, activations,
// threads. Skipped where the host (or KILN_MAX_ISA) lacks the ISA.
#include <gtest/gtest.h>

#include <cmath>

#include "base/half.h"
#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

constexpr Tolerance kF16gTol{1e-4, 5e-5};

std::string f16g_name(const std::string& op, const std::string& isa) {
  return op + ".packed.f16w." + isa;
}

Tensor f16g_round(const Tensor& t) {
  Tensor out(DType::kF32, t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) {
    out.data<float>()[i] = static_cast<float>(Half(t.data<float>()[i]));
  }
  return out;
}

// The case with its constant B (input 1) rounded to binary16: the reference an FP16 layer matches.
OpCase f16g_rounded(OpCase c) {
  c.inputs[1].tensor = f16g_round(*c.inputs[1].tensor);
  return c;
}

// Runs the tactic on an FP16 layer made from `c` (B as given: the kernel rounds it when it packs)
// and compares with the reference on the rounded B.
void f16g_expect_matches(const std::string& tactic_name, const OpCase& c, int threads = 1) {
  const OpCase rounded = f16g_rounded(c);
  expect_matches_reference_prepacked(
      tactic_name, c, kF16gTol,
      PrepackedRun{.threads = threads, .fp16_weights = true, .reference = &rounded});
}

struct F16gMnk {
  int64_t m, n, k;
};
// Panel widths are 32 (AVX-512) and 16 (AVX2) columns, depth blocks 128 / 256.
const F16gMnk kF16gShapes[] = {{1, 1, 1},    {1, 33, 7},    {2, 17, 129},
                               {3, 64, 257}, {9, 40, 300},  {1, 1000, 64},
                               {17, 5, 33},  {70, 31, 513}, {1, 70, 1100}};

OpCase f16g_gemm(const F16gMnk& s, bool ta, bool tb, bool with_c) {
  OpCase c;
  c.op_type = "Gemm";
  c.attrs = attrs({{"transA", int64_t{ta}}, {"transB", int64_t{tb}}, {"alpha", 0.5f}});
  c.inputs = {in(random_f32(ta ? Dims{s.k, s.m} : Dims{s.m, s.k}, 1)),
              constant(random_f32(tb ? Dims{s.n, s.k} : Dims{s.k, s.n}, 2))};
  if (with_c) c.inputs.push_back(constant(random_f32({s.n}, 3)));
  return c;
}

TEST(X86GemmF16Tactic, MatchesTheReferenceOnRoundedWeights) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const F16gMnk& s : kF16gShapes) {
      for (bool ta : {false, true}) {
        for (bool tb : {false, true}) {
          f16g_expect_matches(f16g_name("gemm", isa), f16g_gemm(s, ta, tb, tb));
        }
      }
    }
  }
}

TEST(X86GemmF16Tactic, MatMulAndFusedGemmAndThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (const auto& [a, b] : std::vector<std::pair<Dims, Dims>>{{{1, 7}, {7, 17}},
                                                                 {{2, 5, 33}, {33, 3}},
                                                                 {{197, 192}, {192, 70}},
                                                                 {{1, 769}, {769, 45}}}) {
      OpCase c;
      c.op_type = "MatMul";
      c.inputs = {in(random_f32(a, 1)), constant(random_f32(b, 2))};
      for (int threads : {1, 2, 3}) f16g_expect_matches(f16g_name("matmul", isa), c, threads);
    }
    OpCase c;
    c.op_type = "FusedGemm";
    c.domain = "kiln";
    c.opset = 1;
    c.attrs.set("activation", std::string("Relu"));
    c.inputs = {in(random_f32({2, 9, 20}, 1)), constant(random_f32({20, 37}, 2)),
                constant(random_f32({37}, 3))};
    f16g_expect_matches(f16g_name("fused_gemm", isa), c, 2);
  }
}

TEST(X86GemmF16Tactic, TakesFp16LayersOnly) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_rejected(f16g_name("gemm", isa), f16g_gemm({3, 5, 7}, false, false, false), "not fp16");
  }
}

// The packing rounds as base/half.h does (nearest, ties to even) and the microkernel widens
// exactly: with B = I (k = n) and A holding values binary16 cannot represent, Y = A exactly, and
// with A = I, Y is B rounded.
TEST(X86GemmF16Tactic, PacksWithRoundToNearestEven) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  const int64_t n = 37;
  Tensor eye(DType::kF32, {n, n});
  for (int64_t i = 0; i < n; ++i) eye.data<float>()[i * n + i] = 1.0f;
  Tensor b = random_f32({n, n}, 9);
  b.data<float>()[0] = 1.0f + 1.0f / 2048;  // a tie: rounds to 1
  b.data<float>()[1] = 1.0f + 3.0f / 2048;  // a tie: rounds to 1 + 2/1024
  b.data<float>()[2] = 70000.0f;            // beyond binary16: inf
  for (const std::string& isa : isas) {
    OpCase c;
    c.op_type = "MatMul";
    c.inputs = {in(eye), constant(b)};
    auto og = build_op_graph(c);
    ASSERT_TRUE(og.is_ok());
    tactics::LayerSpec spec = layer_spec(og->graph);
    spec.fp16_weights = true;
    auto kernel = tactics::find_tactic(f16g_name("matmul", isa))->instantiate(spec);
    ASSERT_TRUE(kernel.is_ok());
    auto got = run_layer_kernel(**kernel, *og);
    ASSERT_TRUE(got.is_ok());
    const float* y = got->outputs[0].data<float>();
    EXPECT_EQ(y[0], 1.0f);
    EXPECT_EQ(y[1], 1.0f + 2.0f / 1024);
    EXPECT_TRUE(std::isinf(y[2]) && y[2] > 0);
    for (int64_t i = 3; i < n * n; ++i) {
      if (i % n == 2) continue;  // 0 x inf in the other rows of the inf's column: NaN
      ASSERT_EQ(y[i], static_cast<float>(Half(b.data<float>()[i]))) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::testing
