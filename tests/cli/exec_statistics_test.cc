// `kiln exec` statistics, trace summaries and the layer profiler on hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <thread>

#include "exec/benchmark.h"
#include "exec/layer_profiler.h"
#include "exec/statistics.h"

namespace kiln::cli::exec {
namespace exec_statistics_test {

TEST(ExecStatistics, PercentileIndexFollowsTrtexecsNearestRank) {
  // index = max(N - 1 - floor((1 - p/100) N), 0)
  EXPECT_EQ(percentile_index(10, 90), 8u);   // 9 - floor(1.0)
  EXPECT_EQ(percentile_index(10, 95), 9u);   // 9 - floor(0.5)
  EXPECT_EQ(percentile_index(10, 99), 9u);   // 9 - floor(0.1)
  EXPECT_EQ(percentile_index(10, 50), 4u);   // 9 - floor(5.0)
  EXPECT_EQ(percentile_index(10, 0), 0u);    // max(9 - 10, 0)
  EXPECT_EQ(percentile_index(10, 100), 9u);  // the maximum
  EXPECT_EQ(percentile_index(20, 95), 18u);  // 19 - floor(1.0)
  EXPECT_EQ(percentile_index(7, 90), 6u);    // 6 - floor(0.7)
  EXPECT_EQ(percentile_index(1, 50), 0u);
  // Exact decimal arithmetic: (1 - 0.999) * 1000 is exactly 1, so the 999th value (trtexec's
  // float32 evaluation gives 0.99998 and picks the maximum).
  EXPECT_EQ(percentile_index(1000, 99.9), 998u);
  EXPECT_EQ(percentile_index(200, 99.5), 198u);    // 199 - floor(1.0)
  EXPECT_EQ(percentile_index(3, 33.3333333), 0u);  // 2 - floor(2.0000001)
}

TEST(ExecStatistics, PercentileAndMedianOfSortedValues) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile_of_sorted(v, 90), 9);
  EXPECT_EQ(percentile_of_sorted(v, 99), 10);
  EXPECT_EQ(median_of_sorted(v), 5.5);  // even N: mean of 5 and 6
  EXPECT_EQ(median_of_sorted(std::vector<double>{1, 2, 7}), 2);
  EXPECT_EQ(median_of_sorted(std::vector<double>{4}), 4);
  EXPECT_TRUE(std::isinf(median_of_sorted({})));
  EXPECT_TRUE(std::isinf(percentile_of_sorted({}, 90)));
}

TEST(ExecStatistics, ComputeStatsOnAKnownVector) {
  // Unsorted on purpose. Sorted: 2 4 4 4 5 5 7 9; mean 5, population variance 4, sd 2.
  const std::vector<double> p = {50, 90, 25};
  const Stats s = compute_stats({9, 4, 2, 5, 4, 7, 4, 5}, p);
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.min, 2);
  EXPECT_EQ(s.max, 9);
  EXPECT_EQ(s.sum, 40);
  EXPECT_EQ(s.mean, 5);
  EXPECT_EQ(s.median, 4.5);  // (4 + 5) / 2
  EXPECT_DOUBLE_EQ(s.stddev, 2);
  EXPECT_DOUBLE_EQ(s.cov_percent, 40);
  // p50: 7 - floor(4) = 3 -> 4; p90: 7 - floor(0.8) = 7 -> 9; p25: 7 - floor(6) = 1 -> 4.
  EXPECT_EQ(s.percentiles, (std::vector<double>{4, 9, 4}));
}

TEST(ExecStatistics, ConstantAndEmptyVectors) {
  const Stats c = compute_stats({3, 3, 3}, std::vector<double>{99});
  EXPECT_EQ(c.stddev, 0);
  EXPECT_EQ(c.cov_percent, 0);
  EXPECT_EQ(c.percentiles[0], 3);
  const Stats z = compute_stats({0, 0}, {});
  EXPECT_EQ(z.cov_percent, 0);  // no spread: 0, not 0/0
  const Stats e = compute_stats({}, std::vector<double>{90});
  EXPECT_EQ(e.count, 0u);
  EXPECT_TRUE(std::isinf(e.min) && std::isinf(e.max) && std::isinf(e.mean));
  EXPECT_TRUE(std::isinf(e.median) && std::isinf(e.percentiles[0]));
}

TEST(ExecStatistics, CoefficientOfVariationOfTwoValues) {
  // 1 and 3: mean 2, population sd 1 -> 50 %.
  EXPECT_DOUBLE_EQ(compute_stats({1, 3}, {}).cov_percent, 50);
}

BenchmarkTrace hand_trace() {
  // Two streams; times in ms since the start.
  BenchmarkTrace t;
  t.streams = 2;
  t.warmup = {{0, 4, 0}, {0.5, 5, 1}};
  t.timed = {{4, 6, 0}, {5, 8, 1}, {6, 7, 0}, {8, 12, 1}};
  return t;
}

TEST(ExecBenchmarkSummary, FiguresOfAHandMadeTrace) {
  const std::vector<double> p = {50, 99};
  const BenchmarkSummary s = summarize(hand_trace(), p);
  EXPECT_EQ(s.warmup_queries, 2u);
  EXPECT_EQ(s.warmup_end_ms, 5);
  EXPECT_EQ(s.queries, 4u);
  EXPECT_EQ(s.queries_per_stream, (std::vector<size_t>{2, 2}));
  EXPECT_EQ(s.walltime_ms, 8);       // first start 4, last end 12
  EXPECT_EQ(s.throughput_qps, 500);  // 4 queries / 8 ms
  EXPECT_EQ(s.compute.min, 1);       // times 2 3 1 4
  EXPECT_EQ(s.compute.max, 4);
  EXPECT_EQ(s.compute.mean, 2.5);
  EXPECT_EQ(s.compute.median, 2.5);
  EXPECT_EQ(s.compute.percentiles, (std::vector<double>{2, 4}));  // p50: 3 - 2 = 1 -> 2
  EXPECT_EQ(s.total_compute_ms, 10);
  // Synchronous execution: enqueue and latency are the compute interval.
  EXPECT_EQ(s.latency.mean, s.compute.mean);
  EXPECT_EQ(s.enqueue.median, s.compute.median);
}

TEST(ExecBenchmarkSummary, BlockAveragesDropAnIncompleteLastBlock) {
  const std::vector<QueryTime> t = {{0, 1}, {1, 4}, {4, 9}, {9, 10}, {10, 20}};
  EXPECT_EQ(block_averages(t, 2), (std::vector<double>{2, 3}));  // (1+3)/2, (5+1)/2
  EXPECT_EQ(block_averages(t, 5), (std::vector<double>{4}));
  EXPECT_TRUE(block_averages(t, 6).empty());
  EXPECT_TRUE(block_averages(t, 0).empty());
}

TEST(ExecLayerProfiler, RecordsOnlyArmedQueriesInFirstSeenOrder) {
  LayerProfiler p(5);
  p.on_layer(1);  // not armed: ignored
  for (int q = 0; q < 3; ++q) {
    p.start(Clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    p.on_layer(3);
    p.on_layer(1);
    p.on_layer(7);  // out of range: ignored
    p.finish();
  }
  p.finish();  // not armed: no extra iteration
  const ProfileReport r = p.report();
  EXPECT_EQ(r.iterations, 3u);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].node, 3u);
  EXPECT_EQ(r.rows[1].node, 1u);
  EXPECT_GE(r.rows[0].average_ms, 1.0);  // slept 1 ms before layer 3
  EXPECT_NEAR(r.rows[0].percent + r.rows[1].percent, 100, 1e-9);
  EXPECT_NEAR(r.total.total_ms, r.rows[0].total_ms + r.rows[1].total_ms, 1e-9);
  EXPECT_NEAR(r.total.average_ms, r.total.total_ms / 3, 1e-9);
  EXPECT_EQ(r.total.percent, 100);
}

TEST(ExecLayerProfiler, MergeAddsQueriesAndLayers) {
  LayerProfiler a(4), b(4);
  a.start(Clock::now());
  a.on_layer(0);
  a.finish();
  b.start(Clock::now());
  b.on_layer(2);
  b.on_layer(0);
  b.finish();
  a.merge(b);
  const ProfileReport r = a.report();
  EXPECT_EQ(r.iterations, 2u);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].node, 0u);
  EXPECT_EQ(r.rows[1].node, 2u);
}

TEST(ExecLayerProfiler, EmptyReport) {
  const ProfileReport r = LayerProfiler(3).report();
  EXPECT_EQ(r.iterations, 0u);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.total.total_ms, 0);
  EXPECT_EQ(r.total.average_ms, 0);
}

}  // namespace exec_statistics_test
}  // namespace kiln::cli::exec
