#pragma once
// Per-tensor statistics gathered over calibration data: the running min, max and absolute max, and
// a histogram of |x| with a fixed number of bins (2048, as TensorRT's calibrators). The histogram's
// range starts at the first batch's absolute max and doubles (merging bin pairs) whenever a later
// batch exceeds it, so every value ever seen is counted without keeping the data.

#include <cstdint>
#include <span>
#include <vector>

namespace kiln::quant {

inline constexpr int kHistogramBins = 2048;

class AbsHistogram {
 public:
  AbsHistogram() : counts_(kHistogramBins, 0) {}

  void add(std::span<const float> values);
  // Adds another histogram's counts (same bin count), e.g. one gathered on another thread.
  void merge(const AbsHistogram& other);

  // Bin i counts |x| in [i * bin_width, (i + 1) * bin_width); the last bin also takes the top edge.
  double bin_width() const { return range_ / kHistogramBins; }
  double range() const { return range_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t total() const { return total_; }
  float min() const { return min_; }
  float max() const { return max_; }
  float amax() const { return amax_; }
  // NaN and infinities seen (not counted in the histogram).
  uint64_t non_finite() const { return non_finite_; }

  // Restores a histogram from a calibration file.
  static AbsHistogram from_parts(double range, std::vector<uint64_t> counts, float min, float max,
                                 uint64_t non_finite);

 private:
  void grow_to(double amax);

  double range_ = 0;  // 0 until the first non-zero value
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
  uint64_t zeros_before_range_ = 0;  // zeros seen while range_ was still 0
  float min_ = 0, max_ = 0, amax_ = 0;
  bool seen_ = false;
  uint64_t non_finite_ = 0;
};

}  // namespace kiln::quant
