// `kiln compare`'s figures on vectors small enough to compute by hand, and its layer ranking.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "compare/layer_compare.h"
#include "compare/metrics.h"

namespace kiln::cli::compare {
namespace compare_metrics_test {

ErrorStats stats_of(const std::vector<float>& got, const std::vector<float>& ref,
                    Tolerance tol = {}) {
  ErrorStats s;
  s.add(got, ref, tol);
  return s;
}

TEST(CompareMetrics, HandComputedErrors) {
  // ref (3, 4), got (3, 5): err (0, 1); |ref| = 5, |got| = sqrt(34), <got, ref> = 29.
  const ErrorStats s = stats_of({3, 5}, {3, 4});
  EXPECT_EQ(s.elements(), 2);
  EXPECT_DOUBLE_EQ(s.max_abs_err(), 1.0);
  EXPECT_DOUBLE_EQ(s.mean_abs_err(), 0.5);
  EXPECT_NEAR(s.max_rel_err(), 1.0 / (4.0 + kRelFloor), 1e-12);
  EXPECT_NEAR(s.cosine(), 29.0 / (5.0 * std::sqrt(34.0)), 1e-12);
  EXPECT_NEAR(s.sqnr_db(), 10 * std::log10(25.0 / 1.0), 1e-12);
  EXPECT_NEAR(s.rel_l2_err(), 1.0 / 5.0, 1e-12);
}

TEST(CompareMetrics, AccumulatesOverBatchesLikeOneCall) {
  ErrorStats split;
  const std::vector<float> g1{3}, r1{3}, g2{5}, r2{4};
  split.add(g1, r1, {});
  split.add(g2, r2, {});
  const ErrorStats whole = stats_of({3, 5}, {3, 4});
  EXPECT_DOUBLE_EQ(split.cosine(), whole.cosine());
  EXPECT_DOUBLE_EQ(split.sqnr_db(), whole.sqnr_db());
  EXPECT_DOUBLE_EQ(split.mean_abs_err(), whole.mean_abs_err());
}

TEST(CompareMetrics, ExactMatchAndZeros) {
  const ErrorStats same = stats_of({1, -2}, {1, -2});
  EXPECT_EQ(same.max_abs_err(), 0);
  EXPECT_DOUBLE_EQ(same.cosine(), 1.0);
  EXPECT_TRUE(std::isinf(same.sqnr_db()) && same.sqnr_db() > 0);
  EXPECT_EQ(same.rel_l2_err(), 0);
  EXPECT_DOUBLE_EQ(stats_of({0, 0}, {0, 0}).cosine(), 1.0);
  EXPECT_DOUBLE_EQ(stats_of({1, 0}, {0, 0}).cosine(), 0.0);
  // A reference zero: the relative error divides by the floor, not by zero.
  EXPECT_NEAR(stats_of({1e-9f}, {0}).max_rel_err(), 1e-9 / kRelFloor, 1e-6);
  EXPECT_NEAR(stats_of({1e-9f}, {0}, {1e-3, 0, true}).max_rel_err(), 1e-9 / 1e-3, 1e-9);
}

TEST(CompareMetrics, AllcloseCountsAsNumpyDoes) {
  // |a - r| > atol + rtol |r|: 0.1 > 0.05 + 0.1 * 1 is false; 0.2 > 0.05 + 0.1 is true.
  const Tolerance tol{0.05, 0.1, true};
  EXPECT_EQ(stats_of({1.1f, 1.2f}, {1, 1}, tol).allclose_failures(), 1);
  EXPECT_EQ(stats_of({1.1f, 1.2f}, {1, 1}, {0, 0, false}).allclose_failures(), 0);
}

TEST(CompareMetrics, NanInOnlyOneSideIsAFailure) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const ErrorStats s = stats_of({nan, 1}, {1, 1}, {1, 1, true});
  EXPECT_EQ(s.nonfinite(), 1);
  EXPECT_EQ(s.allclose_failures(), 1);
  EXPECT_EQ(stats_of({nan}, {nan}, {0, 0, true}).allclose_failures(), 0);
}

TEST(CompareMetrics, TopKBreaksTiesTowardsTheLowerIndex) {
  const std::vector<float> scores{1, 3, 3, 0, 3, 2};
  EXPECT_EQ(top_k(scores, 1), (std::vector<int64_t>{1}));
  EXPECT_EQ(top_k(scores, 4), (std::vector<int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(top_k(scores, 10).size(), 6u);
}

TEST(CompareMetrics, TopKAgreement) {
  // Row 0: same top class. Row 1: the engine's top is 0, the reference's top (2) is its second.
  // Row 2: a tie in the engine between 1 and 3 resolves to 1, the reference's top is 3.
  const std::vector<float> ref{0, 9, 1, 0, /**/ 1, 0, 5, 0, /**/ 0, 1, 0, 2};
  const std::vector<float> got{0, 8, 1, 0, /**/ 6, 0, 5, 0, /**/ 0, 2, 0, 2};
  TopKAgreement a;
  a.add(got, ref, 4);
  EXPECT_EQ(a.rows, 3);
  EXPECT_EQ(a.top1, 1);
  EXPECT_EQ(a.top5, 3);  // 4 classes: every class is in the top min(5, 4)
  EXPECT_NEAR(a.top1_percent(), 100.0 / 3, 1e-9);
  TopKAgreement b;  // 6 classes: the reference's top (5) is sixth in the engine's order
  b.add(std::vector<float>{6, 5, 4, 3, 2, 1}, std::vector<float>{0, 0, 0, 0, 0, 1}, 6);
  EXPECT_EQ(b.top5, 0);
}

TEST(CompareMetrics, CountCorrect) {
  const std::vector<float> scores{0, 1, /**/ 2, 1, /**/ 5, 5};
  const std::vector<int64_t> labels{1, 1, 0};
  EXPECT_EQ(count_correct(scores, labels, 2), 2);  // the tie picks class 0
}

LayerRecord record(std::string tensor, std::vector<std::string> inputs, float err) {
  LayerRecord r;
  r.tensor = std::move(tensor);
  r.layer = r.tensor;
  r.inputs = std::move(inputs);
  const std::vector<float> ref{1, 0}, got{1 + err, 0};
  r.err.add(got, ref, {});
  return r;
}

TEST(CompareRanking, RanksByTheErrorALayerAdds) {
  // a: 0.01 from the input; b: 0.011 after a (adds 0.001); c: 0.05 after b (adds 0.039).
  std::vector<LayerRecord> layers{record("a", {"x"}, 0.01f), record("b", {"a"}, 0.011f),
                                  record("c", {"b", "a"}, 0.05f)};
  layers.push_back(record("d", {"c"}, 0));
  layers.back().not_comparable = "not comparable (uint8)";
  const std::vector<RankedLayer> ranked = rank_layers(layers, {"x"});
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].record->tensor, "c");
  EXPECT_NEAR(ranked[0].added, 0.05 - 0.011, 1e-6);
  EXPECT_NEAR(ranked[0].input_rel_err, 0.011, 1e-6);
  EXPECT_EQ(ranked[1].record->tensor, "a");
  EXPECT_EQ(ranked[2].record->tensor, "b");
  EXPECT_NEAR(ranked[2].added, 0.001, 1e-6);
}

}  // namespace compare_metrics_test
}  // namespace kiln::cli::compare
