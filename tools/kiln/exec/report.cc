#include "exec/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::cli::exec {
namespace {

constexpr size_t kTraceLinesKept = 200;  // trtexec prints the first and last 200 averages

Stats zeros(size_t count, size_t percentiles) {
  Stats s;
  s.count = count;
  s.percentiles.assign(percentiles, 0);
  return s;
}

}  // namespace

std::string format_number(double v) { return fmt::format("{:g}", v); }

std::string perf_figures(const Stats& s, std::span<const double> percentiles) {
  std::string out =
      fmt::format("min = {} ms, max = {} ms, mean = {} ms, median = {} ms", format_number(s.min),
                  format_number(s.max), format_number(s.mean), format_number(s.median));
  for (size_t i = 0; i < percentiles.size() && i < s.percentiles.size(); ++i) {
    out += fmt::format(", percentile({}%) = {} ms", format_number(percentiles[i]),
                       format_number(s.percentiles[i]));
  }
  return out;
}

std::vector<std::string> prolog_lines(const BenchmarkSummary& s, double warmup_ms) {
  return {fmt::format("Warmup completed {} queries over {} ms", s.warmup_queries,
                      format_number(warmup_ms)),
          fmt::format("Timing trace has {} queries over {} s", s.queries,
                      format_number(s.walltime_ms / 1000))};
}

std::vector<std::string> summary_lines(const BenchmarkSummary& s,
                                       std::span<const double> percentiles) {
  // No transfers on a CPU: H2D and D2H are 0, printed as trtexec prints them without transfers.
  const Stats none = zeros(s.queries, percentiles.size());
  return {
      "=== Performance summary ===",
      fmt::format("Throughput: {} qps", format_number(s.throughput_qps)),
      "Latency: " + perf_figures(s.latency, percentiles),
      "Enqueue Time: " + perf_figures(s.enqueue, percentiles),
      "H2D Latency: " + perf_figures(none, percentiles),
      "Compute Time: " + perf_figures(s.compute, percentiles),
      "D2H Latency: " + perf_figures(none, percentiles),
      fmt::format("Total Host Walltime: {} s", format_number(s.walltime_ms / 1000)),
      fmt::format("Total Compute Time: {} s", format_number(s.total_compute_ms / 1000)),
  };
}

std::vector<std::string> summary_warnings(const BenchmarkSummary& s,
                                          std::span<const double> percentiles) {
  std::vector<std::string> out;
  if (s.compute.cov_percent > kUnstableCovPercent) {
    out.push_back(fmt::format("* Compute time is unstable, with coefficient of variance = {}%.",
                              format_number(s.compute.cov_percent)));
    out.push_back(
        "  If not already in use, idle cores (taskset), a fixed CPU frequency (performance "
        "governor) or a longer --duration may improve the stability.");
  }
  for (size_t i = 0; i < percentiles.size(); ++i) {
    // With too few queries a tail percentile is the slowest query, not a tail estimate.
    if (percentiles[i] >= 100 || s.queries < 2 ||
        percentile_index(s.queries, percentiles[i]) != s.queries - 1) {
      continue;
    }
    out.push_back(fmt::format(
        "* percentile({}%) of {} queries is the slowest query: give more --iterations or a longer "
        "--duration for a tail estimate.",
        format_number(percentiles[i]), s.queries));
  }
  if (s.queries_per_stream.size() > 1) {
    out.push_back(fmt::format(
        "* {} inference streams run concurrently: Throughput is their aggregate, and each "
        "query's latency includes the contention between them.",
        s.queries_per_stream.size()));
  }
  return out;
}

std::vector<std::string> trace_lines(const std::vector<QueryTime>& timed, int avg_runs) {
  std::vector<std::string> out = {"=== Trace details ===",
                                  fmt::format("Trace averages of {} runs:", avg_runs)};
  const std::vector<double> averages = block_averages(timed, avg_runs);
  auto line = [&](double ms) {
    const std::string v = format_number(ms);
    return fmt::format(
        "Average on {} runs - Compute latency: {} ms - Host latency: {} ms (enqueue "
        "{} ms)",
        avg_runs, v, v, v);
  };
  const size_t n = averages.size();
  for (size_t i = 0; i < n; ++i) {
    if (n > 2 * kTraceLinesKept && i == kTraceLinesKept) {
      out.push_back(fmt::format("... Omitting {} lines", n - 2 * kTraceLinesKept));
      i = n - kTraceLinesKept;
    }
    out.push_back(line(averages[i]));
  }
  return out;
}

std::vector<std::string> metric_explanations() {
  return {
      "=== Explanations of the performance metrics ===",
      "Total Host Walltime: the host walltime from when the first query (after warm-up) starts to "
      "when the last query completes.",
      "Compute Time: the time execute() takes to run the engine's layers for a query, on the "
      "steady clock of the calling thread.",
      "Total Compute Time: the sum of the Compute Time of all queries. With several streams it "
      "exceeds Total Host Walltime by up to the number of streams.",
      "Throughput: the number of queries divided by Total Host Walltime.",
      "Enqueue Time: the host time to submit a query. kiln's execute() is synchronous, so it is "
      "the Compute Time.",
      "H2D Latency / D2H Latency: 0; inputs and outputs stay in host memory.",
      "Latency: H2D Latency + Compute Time + D2H Latency: the latency to infer a single query.",
  };
}

std::vector<std::string> profile_table(const ProfileReport& report,
                                       const std::vector<std::string>& names) {
  std::vector<std::string> out = {
      fmt::format("=== Profile ({} iterations ) ===", report.iterations),
      "   Time(ms)     Avg.(ms)   Median(ms)   Time(%)   Layer"};
  auto row = [](const ProfileRow& r, std::string_view name) {
    return fmt::format("{:>11.2f}{:>13.4f}{:>13.4f}{:>10.1f}   {}", r.total_ms, r.average_ms,
                       r.median_ms, r.percent, name);
  };
  for (const ProfileRow& r : report.rows) {
    out.push_back(row(r, r.node < names.size() ? names[r.node] : fmt::format("layer {}", r.node)));
  }
  out.push_back(row(report.total, "Total"));
  return out;
}

}  // namespace kiln::cli::exec
