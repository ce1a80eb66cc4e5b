// kiln.Attention: a hand-computed value, the transposed views, shape inference and validation.
#include <cmath>

#include "nn_test_util.h"

namespace kiln::nn_test {
namespace {

using testing::f32;

OpCase attention(std::vector<OpInput> inputs, ir::Attributes a = {}) {
  return OpCase{.op_type = "Attention",
                .opset = 1,
                .attrs = std::move(a),
                .inputs = std::move(inputs),
                .domain = "kiln"};
}

TEST(KilnAttention, HandComputedRow) {
  // One query [1, 0] against keys K' = [[1, 0], [0, 1]]^T (scores 1, 0), scale ln 3: weights
  // e^{ln 3} : e^0 = 3 : 1, so y = 0.75 v0 + 0.25 v1 with v0 = [4, 8], v1 = [0, 4]: [3, 7].
  auto out = run_ok(attention(
      {in(f32({1, 2}, {1, 0})), in(f32({2, 2}, {1, 0, 0, 1})), in(f32({2, 2}, {4, 8, 0, 4}))},
      attrs({{"scale", std::log(3.0f)}})));
  expect_f32(out, 0, {1, 2}, {3, 7}, 1e-6f);
}

TEST(KilnAttention, TransposedOperandsAndResult) {
  // The same product with K given as rows of keys (perm_k swaps its axes), q as a column, and the
  // result stored transposed.
  auto out = run_ok(attention(
      {in(f32({2, 1}, {1, 0})), in(f32({2, 2}, {1, 0, 0, 1})), in(f32({2, 2}, {4, 8, 0, 4}))},
      attrs({{"scale", std::log(3.0f)},
             {"perm_q", Ints{1, 0}},
             {"perm_k", Ints{1, 0}},
             {"perm_y", Ints{1, 0}}})));
  expect_f32(out, 0, {2, 1}, {3, 7}, 1e-6f);
}

TEST(KilnAttention, BatchesBroadcast) {
  // Q [2, 1, 1, 2] (2 batches) against K' [3, 2, 2] and V [2, 2] (3 heads, one V): Y [2, 3, 1, 2].
  auto out = run_ok(attention({in(f32({2, 1, 1, 2}, {0, 0, 1, 0})),
                               in(f32({3, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0})),
                               in(f32({2, 2}, {4, 8, 0, 4}))}));
  const Tensor& y = out[0];
  ASSERT_EQ(y.dims(), (Dims{2, 3, 1, 2}));
  // Batch 0 (q = 0) and head 2 (K' = 0): equal scores, the mean of V's rows [2, 6].
  for (int64_t i : {0, 1, 2, 5}) {
    EXPECT_NEAR(y.data<float>()[2 * i], 2.0f, 1e-6f) << i;
    EXPECT_NEAR(y.data<float>()[2 * i + 1], 6.0f, 1e-6f) << i;
  }
  // Batch 1 (q = [1, 0]), head 0: scores [1, 0]; head 1: [0, 1].
  const float w = 1.0f / (1.0f + std::exp(-1.0f));  // the weight of the larger score
  EXPECT_NEAR(y.data<float>()[6], 4 * w, 1e-6f);
  EXPECT_NEAR(y.data<float>()[8], 4 * (1 - w), 1e-6f);
}

TEST(KilnAttention, MaskAddsToTheScaledScores) {
  // The hand-computed row with a mask of [0, ln 3] on the keys: scores ln 3 + 0 and 0 + ln 3, equal
  // weights, y = the mean of v0 and v1, [2, 6]. A [2] mask broadcasts over the rows.
  auto out = run_ok(attention({in(f32({1, 2}, {1, 0})), in(f32({2, 2}, {1, 0, 0, 1})),
                               in(f32({2, 2}, {4, 8, 0, 4})), in(f32({2}, {0, std::log(3.0f)}))},
                              attrs({{"scale", std::log(3.0f)}})));
  expect_f32(out, 0, {1, 2}, {2, 6}, 1e-6f);
  // A mask with a batch dim of its own: [3, 1, 2] over one batch matrix gives 3 results.
  out = run_ok(attention(
      {in(f32({1, 2}, {1, 0})), in(f32({2, 2}, {1, 0, 0, 1})), in(f32({2, 2}, {4, 8, 0, 4})),
       in(f32({3, 1, 2}, {0, 0, 0, std::log(3.0f), -1e9f, 0}))},
      attrs({{"scale", std::log(3.0f)}})));
  expect_f32(out, 0, {3, 1, 2}, {3, 7, 2, 6, 0, 4}, 1e-5f);
}

TEST(KilnAttention, ShapeInference) {
  // Q [7, 4, 3], K [6, 4, 3], V [6, 4, 5] as [tokens, heads, depth]: 4 heads, 7 queries, 6 keys.
  const OpCase c = attention(
      {in(f32({7, 4, 3}, std::vector<float>(84))), in(f32({6, 4, 3}, std::vector<float>(72))),
       in(f32({6, 4, 5}, std::vector<float>(120)))},
      attrs({{"perm_q", Ints{1, 0, 2}},
             {"perm_v", Ints{1, 0, 2}},
             {"perm_k", Ints{1, 2, 0}},
             {"perm_y", Ints{1, 0, 2}}}));
  auto out = run_ok(c);
  EXPECT_EQ(out[0].dims(), (Dims{7, 4, 5}));  // [4, 7, 5] stored as perm_y (1, 0, 2)
}

TEST(KilnAttention, Validation) {
  const Tensor q = f32({2, 3}, std::vector<float>(6)), k = f32({3, 4}, std::vector<float>(12)),
               v = f32({4, 5}, std::vector<float>(20));
  expect_error(attention({in(q), in(q), in(v)}), StatusCode::kInvalidModel, "do not chain");
  expect_error(attention({in(q), in(k), in(q)}), StatusCode::kInvalidModel, "do not chain");
  expect_error(attention({in(f32({3}, {1, 2, 3})), in(k), in(v)}), StatusCode::kInvalidModel,
               "rank >= 2");
  expect_error(attention({in(q), in(k), in(v)}, attrs({{"perm_k", Ints{0, 0}}})),
               StatusCode::kInvalidModel, "perm_k [0,0] does not permute");
  expect_error(attention({in(q), in(k), in(v)}, attrs({{"perm_y", Ints{1, 0, 2}}})),
               StatusCode::kInvalidModel, "perm_y");
  expect_error(attention({in(f32({2, 2, 3}, std::vector<float>(12))),
                          in(f32({3, 3, 4}, std::vector<float>(36))), in(v)}),
               StatusCode::kInvalidModel, "broadcast");
  // A mask of 3 query rows for the scores' single one.
  expect_error(attention({in(f32({1, 3}, {1, 2, 3})), in(k), in(v),
                          in(f32({3, 4}, std::vector<float>(12)))}),
               StatusCode::kInvalidModel, "beyond their own rows");
  Tensor d(DType::kF64, {2, 3});
  expect_error(attention({in(d), in(k), in(v)}), StatusCode::kUnsupported, "float64");
}

}  // namespace
}  // namespace kiln::nn_test
