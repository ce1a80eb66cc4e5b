#pragma once
// Per-image stage times of `kiln pipeline` and their statistics: p50, p99, mean and share of the
// end-to-end time per stage, images per second and the budget verdict.
//
// p50 is the median and p99 the nearest-rank percentile of exec/statistics.h (trtexec's rules).
// A stage's share is its mean over the mean end-to-end time, so the shares add up to 100%.

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/budget.h"
#include "pipeline/classify.h"
#include "pipeline/detection.h"

namespace kiln::cli::pipeline {

inline constexpr std::array<const char*, 4> kStages = {"decode", "preprocess", "inference",
                                                       "postprocess"};

struct ImageResult {
  std::string file;                   // the name inside the folder
  int pass = 0;                       // 0-based pass over the folder
  std::array<double, 4> stage_ms{};   // in kStages order
  std::vector<ClassScore> top;        // --task=classify
  std::vector<Detection> detections;  // --task=detect, in original-image pixels
  double end_to_end_ms() const { return stage_ms[0] + stage_ms[1] + stage_ms[2] + stage_ms[3]; }
};

struct StageStats {
  std::string stage;
  double p50 = 0, p99 = 0, mean = 0, share_percent = 0;
};

struct PipelineStats {
  std::vector<StageStats> stages;  // kStages order
  StageStats end_to_end;           // per image, the sum of its stages
  size_t images = 0;
  double wall_ms = 0;  // the timed passes, measured around the loop
  double images_per_s = 0;
  std::optional<double> budget_ms;
  std::vector<BudgetLevel> budget;  // p50 then p99, when a budget is set
};

// `timed` is non-empty (warm-up runs left out).
PipelineStats summarize(const std::vector<ImageResult>& timed, double wall_ms,
                        std::optional<double> budget_ms);

// The report printed to stdout: a table of the stages, throughput, and the budget lines.
std::vector<std::string> stats_lines(const PipelineStats& s);

}  // namespace kiln::cli::pipeline
