#pragma once
// The text `kiln exec` prints, line by line without the log prefix: trtexec's shapes
// (sampleReporting.cpp) with "GPU" dropped from the metric names. Pure functions, so tests can
// parse the lines back.

#include <span>
#include <string>
#include <vector>

#include "exec/benchmark.h"
#include "exec/layer_profiler.h"

namespace kiln::cli::exec {

// As std::ostream prints a number by default (6 significant digits): "130.298", "1.2e-05", "inf".
std::string format_number(double v);

// "min = 1 ms, max = 3 ms, mean = 2 ms, median = 2 ms, percentile(90%) = 3 ms, ..."
std::string perf_figures(const Stats& s, std::span<const double> percentiles);

// "Warmup completed ..." and "Timing trace has ..." lines.
std::vector<std::string> prolog_lines(const BenchmarkSummary& s, double warmup_ms);

// "=== Performance summary ===" through "Total Compute Time: ... s".
std::vector<std::string> summary_lines(const BenchmarkSummary& s,
                                       std::span<const double> percentiles);

// Lines for [W]: unstable compute time (coefficient of variation above kUnstableCovPercent),
// percentiles that are just the maximum for lack of queries, concurrent streams.
inline constexpr double kUnstableCovPercent = 1.0;  // trtexec's threshold
std::vector<std::string> summary_warnings(const BenchmarkSummary& s,
                                          std::span<const double> percentiles);

// "=== Trace details ===" block (printed with --verbose); at most the first and last 200 averages.
std::vector<std::string> trace_lines(const std::vector<QueryTime>& timed, int avg_runs);

// What each figure means, on a CPU (printed with --verbose).
std::vector<std::string> metric_explanations();

// "=== Profile (N iterations ) ===" table; names[i] names layer i of the plan.
std::vector<std::string> profile_table(const ProfileReport& report,
                                       const std::vector<std::string>& names);

}  // namespace kiln::cli::exec
