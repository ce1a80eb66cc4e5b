// transpose.nchw_nhwc.bytes.sse2 against the reference Transpose: both directions, channel and
// pixel counts below, at and past the 16 x 16 blocks, batches, and on the pool's threads.
#include <gtest/gtest.h>

#include "kernels/quant_cases.h"
#include "kernels/tactic_test_util.h"

namespace kiln::testing {
namespace x86_transpose_test {

constexpr char kTactic[] = "transpose.nchw_nhwc.bytes.sse2";

OpCase transpose_case(Tensor x, Ints perm) {
  OpCase c;
  c.op_type = "Transpose";
  c.attrs = attrs({{"perm", std::move(perm)}});
  c.inputs.push_back(in(std::move(x)));
  return c;
}

TEST(X86TransposeBytes, MatchesReferenceBothWays) {
  // The last five have 2-4 rows one way or the other (channels to NHWC, pixels to NCHW): few_rows.
  const std::vector<Dims> shapes = {{1, 3, 5, 7},    {1, 16, 4, 4}, {1, 17, 5, 7},  {2, 64, 7, 7},
                                    {1, 64, 56, 56}, {1, 33, 1, 1}, {3, 1, 16, 17}, {1, 2048, 7, 7},
                                    {1, 2, 9, 9},    {2, 4, 6, 5},  {2, 3, 17, 19}, {1, 2, 2, 9},
                                    {1, 3, 1, 3}};
  for (const Dims& d : shapes) {
    expect_matches_reference(kTactic, transpose_case(random_u8(d, 3), {0, 2, 3, 1}), {0, 0});
    expect_matches_reference(kTactic, transpose_case(random_u8(d, 4), {0, 3, 1, 2}), {0, 0});
  }
}

TEST(X86TransposeBytes, RefusesOtherPermsRanksAndWiderElements) {
  expect_rejected(kTactic, transpose_case(random_u8({1, 4, 5, 6}, 1), {0, 1, 3, 2}),
                  "NCHW <-> NHWC");
  expect_rejected(kTactic, transpose_case(random_u8({4, 5, 6}, 1), {0, 2, 1}), "NCHW <-> NHWC");
  expect_rejected(kTactic, transpose_case(random_f32({1, 4, 5, 6}, 1), {0, 2, 3, 1}),
                  "1-byte elements");
}

}  // namespace x86_transpose_test
}  // namespace kiln::testing
