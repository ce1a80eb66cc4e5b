#include "exec/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

namespace kiln::cli::exec {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Percentiles are taken to this many parts per hundred, so that e is computed in integers.
constexpr int64_t kPercentScale = 1'000'000;

}  // namespace

size_t percentile_index(size_t n, double p) {
  if (n == 0) return 0;
  const auto count = static_cast<int64_t>(n);
  const int64_t p_scaled = std::llround(std::clamp(p, 0.0, 100.0) * kPercentScale);
  // e = floor((1 - p/100) * n) = floor((100 - p) * n / 100), exactly. Overflow-free while
  // n < 2^63 / 1e8, far beyond any timing vector.
  const int64_t excluded = (100 * kPercentScale - p_scaled) * count / (100 * kPercentScale);
  return static_cast<size_t>(std::max<int64_t>(count - 1 - excluded, 0));
}

double percentile_of_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return kInf;
  return sorted[percentile_index(sorted.size(), p)];
}

double median_of_sorted(std::span<const double> sorted) {
  if (sorted.empty()) return kInf;
  const size_t m = sorted.size() / 2;
  if (sorted.size() % 2 == 1) return sorted[m];
  return (sorted[m - 1] + sorted[m]) / 2;
}

Stats compute_stats(std::vector<double> values, std::span<const double> percentiles) {
  Stats s;
  s.count = values.size();
  if (values.empty()) {
    s.min = s.max = s.mean = s.median = kInf;
    s.percentiles.assign(percentiles.size(), kInf);
    return s;
  }
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  s.sum = std::accumulate(values.begin(), values.end(), 0.0);
  const auto n = static_cast<double>(values.size());
  s.mean = s.sum / n;
  s.median = median_of_sorted(values);
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(squares / n);
  if (s.mean != 0) {
    s.cov_percent = s.stddev / s.mean * 100;
  } else {
    s.cov_percent = s.stddev == 0 ? 0 : kInf;
  }
  for (double p : percentiles) s.percentiles.push_back(percentile_of_sorted(values, p));
  return s;
}

}  // namespace kiln::cli::exec
