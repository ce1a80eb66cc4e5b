// softmax.f32.avx512 / softmax.f32.avx2 against the reference Softmax: rows of every tail length,
// large spreads of values, masked (-inf) entries, the opset-11 coercion to 2-D, rows split over
// threads; axes that are not the innermost (strided columns, with tails and over threads).
#include <gtest/gtest.h>

#include <limits>

#include "kernels/x86_test_util.h"

namespace kiln::testing {
namespace {

std::string sname(const std::string& isa) { return "softmax.f32." + isa; }

// Scores in [-8, 8] (exp spans 7 orders of magnitude), every 5th of a row masked with -inf.
Tensor scores(const Dims& dims, uint64_t seed) {
  Tensor t = random_f32(dims, seed);
  float* p = t.data<float>();
  const int64_t n = dims.back();
  for (int64_t i = 0; i < t.numel(); ++i) {
    p[i] *= 8.0f;
    if (n > 1 && i % 5 == 2) p[i] = -std::numeric_limits<float>::infinity();
  }
  return t;
}

OpCase softmax_case(const Dims& dims, int opset, std::optional<int64_t> axis, uint64_t seed) {
  OpCase c;
  c.op_type = "Softmax";
  c.opset = opset;
  if (axis) c.attrs.set("axis", *axis);
  c.inputs = {in(scores(dims, seed))};
  return c;
}

constexpr Tolerance kSoftmaxTol{1e-6, 1e-5};

TEST(X86SoftmaxTactic, RowsOfEveryLengthMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    for (int64_t n : {1, 7, 8, 16, 17, 31, 197, 1000}) {
      expect_matches_reference(sname(isa), softmax_case({2, 3, n}, 13, std::nullopt, n),
                               kSoftmaxTol);
      expect_matches_reference(sname(isa), softmax_case({3, n}, 13, 1, n + 1), kSoftmaxTol);
    }
    // Opset 11: the rows of the 2-D coercion at the axis (here 3 x 5 = 15 values a row).
    expect_matches_reference(sname(isa), softmax_case({2, 3, 5}, 11, 1, 3), kSoftmaxTol);
    expect_matches_reference(sname(isa), softmax_case({2, 3, 5}, 11, std::nullopt, 4), kSoftmaxTol);
  }
}

TEST(X86SoftmaxTactic, AttentionScoresOverThreads) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_matches_reference_prepacked(sname(isa), softmax_case({1, 3, 50, 197}, 13, -1, 7),
                                       kSoftmaxTol, 2);
  }
}

// Positions of [outer, inner] cut into vectors with tails (inner 17, 37 * 4), several outer slices,
// YOLOv8's bins [1, 16, 4, 2100] over 2 threads (shares that start inside a slice's vectors).
TEST(X86SoftmaxTactic, StridedAxesMatchTheReference) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    expect_matches_reference(sname(isa), softmax_case({3, 5, 17}, 13, 1, 1), kSoftmaxTol);
    expect_matches_reference(sname(isa), softmax_case({2, 16, 4, 37}, 13, 1, 2), kSoftmaxTol);
    expect_matches_reference(sname(isa), softmax_case({7, 3, 2}, 13, 0, 3), kSoftmaxTol);
    expect_matches_reference(sname(isa), softmax_case({2, 1, 9}, 13, -2, 4), kSoftmaxTol);
    expect_matches_reference_prepacked(sname(isa), softmax_case({1, 16, 4, 2100}, 13, 1, 5),
                                       kSoftmaxTol, 2);
    expect_matches_reference_prepacked(sname(isa), softmax_case({3, 16, 1, 333}, 13, 1, 6),
                                       kSoftmaxTol, 3);
  }
}

TEST(X86SoftmaxTactic, RefusesOtherTypes) {
  const auto isas = x86_isas();
  KILN_REQUIRE_X86_ISA(isas);
  for (const std::string& isa : isas) {
    OpCase d = softmax_case({2, 5}, 13, -1, 1);
    d.inputs = {in(Tensor(DType::kF64, {2, 5}))};
    expect_rejected(sname(isa), d, "float64");
  }
}

}  // namespace
}  // namespace kiln::testing
