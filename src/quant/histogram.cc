#include "quant/histogram.h"

#include <algorithm>
#include <cmath>

namespace kiln::quant {

void AbsHistogram::grow_to(double amax) {
  if (range_ == 0) {
    range_ = amax;
    counts_[0] += zeros_before_range_;
    zeros_before_range_ = 0;
    return;
  }
  while (range_ < amax) {
    // Doubling the range merges bins 2i and 2i+1 into bin i: no count changes bins wrongly.
    for (int i = 0; i < kHistogramBins / 2; ++i) counts_[i] = counts_[2 * i] + counts_[2 * i + 1];
    std::fill(counts_.begin() + kHistogramBins / 2, counts_.end(), 0);
    range_ *= 2;
  }
}

void AbsHistogram::add(std::span<const float> values) {
  float lo = seen_ ? min_ : INFINITY, hi = seen_ ? max_ : -INFINITY;
  float batch_amax = 0;
  for (float v : values) {
    if (!std::isfinite(v)) {
      ++non_finite_;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    batch_amax = std::max(batch_amax, std::fabs(v));
  }
  if (lo <= hi) {
    min_ = lo;
    max_ = hi;
    seen_ = true;
  }
  amax_ = std::max(amax_, batch_amax);
  if (batch_amax > range_) grow_to(batch_amax);
  for (float v : values) {
    if (!std::isfinite(v)) continue;
    ++total_;
    if (range_ == 0) {
      ++zeros_before_range_;
      continue;
    }
    const double bin = std::fabs(v) / bin_width();
    counts_[static_cast<size_t>(std::min<double>(bin, kHistogramBins - 1))] += 1;
  }
}

void AbsHistogram::merge(const AbsHistogram& other) {
  if (other.total_ == 0 && other.non_finite_ == 0) return;
  const AbsHistogram& o = other;
  if (o.range_ > range_) grow_to(o.range_);
  // Each range is a power-of-two multiple of its own first batch's amax, so the two may differ by
  // any factor: the other's counts are re-binned by their bin centres (exact when ranges match).
  if (o.range_ > 0 && o.range_ != range_) {
    for (int i = 0; i < kHistogramBins; ++i) {
      const double centre = (i + 0.5) * o.bin_width();
      counts_[static_cast<size_t>(std::min<double>(centre / bin_width(), kHistogramBins - 1))] +=
          o.counts_[static_cast<size_t>(i)];
    }
  } else {
    for (int i = 0; i < kHistogramBins; ++i)
      counts_[static_cast<size_t>(i)] += o.counts_[static_cast<size_t>(i)];
  }
  if (range_ == 0) {
    zeros_before_range_ += o.zeros_before_range_;
  } else {
    counts_[0] += o.zeros_before_range_;
  }
  total_ += o.total_;
  non_finite_ += o.non_finite_;
  if (o.seen_) {
    min_ = seen_ ? std::min(min_, o.min_) : o.min_;
    max_ = seen_ ? std::max(max_, o.max_) : o.max_;
    seen_ = true;
  }
  amax_ = std::max(amax_, o.amax_);
}

AbsHistogram AbsHistogram::from_parts(double range, std::vector<uint64_t> counts, float min,
                                      float max, uint64_t non_finite) {
  AbsHistogram h;
  h.range_ = range;
  h.counts_ = std::move(counts);
  h.counts_.resize(kHistogramBins, 0);
  for (uint64_t c : h.counts_) h.total_ += c;
  h.min_ = min;
  h.max_ = max;
  h.amax_ = std::max(std::fabs(min), std::fabs(max));
  h.seen_ = h.total_ > 0;
  h.non_finite_ = non_finite;
  return h;
}

}  // namespace kiln::quant
