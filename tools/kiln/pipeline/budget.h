#pragma once
// The latency budget of `kiln pipeline --budget=`: parsing the target and deciding, at p50 and at
// p99, whether the end-to-end time meets it and which stages must shrink by how much.
//
// The rule (docs/pipeline.md): at a level (p50 or p99) the end-to-end time E is that percentile
// of the per-image sums of the stages. When E <= budget B the level meets the budget. Otherwise
// the excess E - B is taken from the stages in descending order of their own time at that level
// (each stage's own percentile): the largest stage gives min(excess, its time), then the next,
// until nothing is left. Each stage named gives "shrink by X ms (Y% of its time)". Percentiles do
// not add up, so the stages' p99s may sum to more than E; they only rank the stages and cap what
// one stage can give.

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::cli::pipeline {

// "33ms", "33.3" (ms), "500us", "0.033s", "30fps" (1000/30 ms); positive and finite.
Result<double> parse_budget_ms(std::string_view text);

struct StageTime {
  std::string stage;
  double ms = 0;  // the stage's time at the level
};

struct Shrink {
  std::string stage;
  double ms = 0;       // by how much it must shrink
  double percent = 0;  // of the stage's time at the level
};

struct BudgetLevel {
  std::string level;  // "p50" or "p99"
  double end_to_end_ms = 0;
  bool meets = false;
  double excess_ms = 0;         // 0 when it meets the budget
  std::vector<Shrink> shrinks;  // empty when it meets the budget
};

BudgetLevel budget_level(std::string level, double end_to_end_ms, std::vector<StageTime> stages,
                         double budget_ms);

// "inference must shrink by 12.3 ms (41%) to meet 33 ms at p99", or "p50 meets 33 ms (21.4 ms)".
std::string describe(const BudgetLevel& l, double budget_ms);

}  // namespace kiln::cli::pipeline
