#pragma once
// The statistics `kiln exec` reports, as pure functions of a vector of timings (milliseconds).
//
// The rules are trtexec's (samples/common/sampleReporting.cpp), so that kiln's numbers mean what a
// trtexec user expects:
//   - percentile(p) of N sorted values is the nearest-rank value sorted[max(N - 1 - e, 0)] with
//     e = floor((1 - p/100) * N): no interpolation, and percentile(100) is the maximum.
//     trtexec evaluates e in float32, which can land one rank higher when (1 - p/100) * N is an
//     integer (p = 99.9, N = 1000 gives the maximum instead of sorted[998]); kiln evaluates it
//     exactly, taking p to 6 decimal places;
//   - the median averages the two middle values when N is even;
//   - the coefficient of variation is the population standard deviation (divided by N, not N - 1)
//     over the mean, in percent.
// An empty vector gives infinity for every figure except the count, as trtexec prints it.

#include <cstddef>
#include <span>
#include <vector>

namespace kiln::cli::exec {

struct Stats {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0;
  double stddev = 0;       // population standard deviation
  double cov_percent = 0;  // stddev / mean * 100; infinity when the mean is 0 and stddev is not
  double sum = 0;
  std::vector<double> percentiles;  // one per requested percentile, in request order
};

// The index trtexec's rule picks among n > 0 sorted values: max(n - 1 - floor((1 - p/100) n), 0).
size_t percentile_index(size_t n, double p);

// `sorted` is ascending; p in [0, 100] (the option parser guarantees it).
double percentile_of_sorted(std::span<const double> sorted, double p);
double median_of_sorted(std::span<const double> sorted);

// Every figure of `values` (any order), with the percentiles asked for.
Stats compute_stats(std::vector<double> values, std::span<const double> percentiles);

}  // namespace kiln::cli::exec
