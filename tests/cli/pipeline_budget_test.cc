// kiln pipeline's latency budget: parsing the target and the shrink rule, and the stage
// statistics it is computed from.
#include <gtest/gtest.h>

#include "pipeline/budget.h"
#include "pipeline/stage_stats.h"

namespace kiln::cli::pipeline {
namespace pipeline_budget_test {

TEST(PipelineBudget, ParsesUnitsAndRates) {
  EXPECT_DOUBLE_EQ(*parse_budget_ms("33ms"), 33);
  EXPECT_DOUBLE_EQ(*parse_budget_ms("33.5"), 33.5);
  EXPECT_DOUBLE_EQ(*parse_budget_ms("500us"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_budget_ms("0.25s"), 250);
  EXPECT_NEAR(*parse_budget_ms("30fps"), 33.3333333, 1e-6);
  for (const char* bad : {"", "ms", "fast", "-3ms", "0", "0fps", "12 parsecs", "inf", "nanms"}) {
    auto r = parse_budget_ms(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("--budget"), std::string::npos);
  }
}

TEST(PipelineBudget, MeetingTheBudgetNamesNoStage) {
  auto l = budget_level("p50", 20, {{"decode", 5}, {"inference", 15}}, 33);
  EXPECT_TRUE(l.meets);
  EXPECT_TRUE(l.shrinks.empty());
  EXPECT_EQ(l.excess_ms, 0);
  EXPECT_NE(describe(l, 33).find("meets"), std::string::npos);
}

TEST(PipelineBudget, TheLargestStageShrinksFirst) {
  auto l = budget_level("p99", 45.3, {{"decode", 5}, {"inference", 30}, {"postprocess", 10.3}}, 33);
  EXPECT_FALSE(l.meets);
  EXPECT_NEAR(l.excess_ms, 12.3, 1e-9);
  ASSERT_EQ(l.shrinks.size(), 1u);
  EXPECT_EQ(l.shrinks[0].stage, "inference");
  EXPECT_NEAR(l.shrinks[0].ms, 12.3, 1e-9);
  EXPECT_NEAR(l.shrinks[0].percent, 41, 1e-9);
  EXPECT_NE(describe(l, 33).find("inference must shrink by 12.300 ms (41%)"), std::string::npos)
      << describe(l, 33);
}

TEST(PipelineBudget, AnExcessBeyondOneStageSpillsToTheNext) {
  auto l = budget_level("p99", 30, {{"decode", 8}, {"inference", 12}, {"preprocess", 10}}, 5);
  ASSERT_EQ(l.shrinks.size(), 3u);
  EXPECT_EQ(l.shrinks[0].stage, "inference");
  EXPECT_DOUBLE_EQ(l.shrinks[0].percent, 100);
  EXPECT_EQ(l.shrinks[1].stage, "preprocess");
  EXPECT_DOUBLE_EQ(l.shrinks[1].ms, 10);
  EXPECT_EQ(l.shrinks[2].stage, "decode");
  EXPECT_DOUBLE_EQ(l.shrinks[2].ms, 3);
}

ImageResult timed_image(double d, double p, double i, double q) {
  ImageResult r;
  r.stage_ms = {d, p, i, q};
  return r;
}

TEST(PipelineStageStats, MedianPercentileMeanAndShares) {
  std::vector<ImageResult> runs;
  for (int k = 1; k <= 4; ++k) runs.push_back(timed_image(1, 2, 4.0 * k, 1));
  const PipelineStats s = summarize(runs, 100, 10.0);
  ASSERT_EQ(s.stages.size(), 4u);
  EXPECT_EQ(s.stages[2].stage, "inference");
  EXPECT_DOUBLE_EQ(s.stages[2].p50, 10);  // the median averages 8 and 12
  EXPECT_DOUBLE_EQ(s.stages[2].p99, 16);
  EXPECT_DOUBLE_EQ(s.stages[2].mean, 10);
  EXPECT_DOUBLE_EQ(s.end_to_end.mean, 14);
  double shares = 0;
  for (const StageStats& st : s.stages) shares += st.share_percent;
  EXPECT_NEAR(shares, 100, 1e-9);
  EXPECT_DOUBLE_EQ(s.images_per_s, 40);
  ASSERT_EQ(s.budget.size(), 2u);
  EXPECT_FALSE(s.budget[0].meets);  // p50 end-to-end 14 > 10
  EXPECT_EQ(s.budget[1].shrinks[0].stage, "inference");
  EXPECT_DOUBLE_EQ(s.budget[1].excess_ms, 10);  // p99 end-to-end 20
}

}  // namespace pipeline_budget_test
}  // namespace kiln::cli::pipeline
