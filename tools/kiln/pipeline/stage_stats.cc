#include "pipeline/stage_stats.h"

#include <fmt/format.h>

#include <algorithm>

#include "exec/statistics.h"

namespace kiln::cli::pipeline {
namespace {

StageStats stats_of(std::string stage, std::vector<double> values, double e2e_mean) {
  std::sort(values.begin(), values.end());
  StageStats s{std::move(stage)};
  s.p50 = exec::median_of_sorted(values);
  s.p99 = exec::percentile_of_sorted(values, 99);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  s.share_percent = e2e_mean > 0 ? 100.0 * s.mean / e2e_mean : 0;
  return s;
}

}  // namespace

PipelineStats summarize(const std::vector<ImageResult>& timed, double wall_ms,
                        std::optional<double> budget_ms) {
  PipelineStats p;
  p.images = timed.size();
  p.wall_ms = wall_ms;
  p.images_per_s = wall_ms > 0 ? 1000.0 * static_cast<double>(timed.size()) / wall_ms : 0;
  std::vector<double> e2e;
  for (const ImageResult& r : timed) e2e.push_back(r.end_to_end_ms());
  p.end_to_end = stats_of("end-to-end", e2e, 0);
  p.end_to_end.share_percent = 100;
  for (size_t k = 0; k < kStages.size(); ++k) {
    std::vector<double> v;
    for (const ImageResult& r : timed) v.push_back(r.stage_ms[k]);
    p.stages.push_back(stats_of(kStages[k], std::move(v), p.end_to_end.mean));
  }
  p.budget_ms = budget_ms;
  if (budget_ms) {
    std::vector<StageTime> at50, at99;
    for (const StageStats& s : p.stages) {
      at50.push_back({s.stage, s.p50});
      at99.push_back({s.stage, s.p99});
    }
    p.budget.push_back(budget_level("p50", p.end_to_end.p50, at50, *budget_ms));
    p.budget.push_back(budget_level("p99", p.end_to_end.p99, at99, *budget_ms));
  }
  return p;
}

std::vector<std::string> stats_lines(const PipelineStats& p) {
  std::vector<std::string> out;
  out.push_back(fmt::format("{:<12} {:>10} {:>10} {:>10} {:>7}", "stage", "p50 ms", "p99 ms",
                            "mean ms", "share"));
  auto row = [&](const StageStats& s) {
    out.push_back(fmt::format("{:<12} {:>10.3f} {:>10.3f} {:>10.3f} {:>6.1f}%", s.stage, s.p50,
                              s.p99, s.mean, s.share_percent));
  };
  for (const StageStats& s : p.stages) row(s);
  row(p.end_to_end);
  out.push_back(fmt::format("{} images in {:.3f} ms wall time: {:.1f} images/s", p.images,
                            p.wall_ms, p.images_per_s));
  for (const BudgetLevel& l : p.budget) out.push_back("budget: " + describe(l, *p.budget_ms));
  return out;
}

}  // namespace kiln::cli::pipeline
