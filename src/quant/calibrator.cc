#include "quant/calibrator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln::quant {
namespace {

// The first candidate threshold, in bins; a signed tensor's |x| maps to 0..127 (the magnitude
// half of int8), a tensor that is never negative to 0..255 (kiln encodes it in uint8 from 0).
constexpr int kFirstThreshold = 128;
constexpr int kSignedLevels = 128;
constexpr int kUnsignedLevels = 256;

// KL(P || Q) over the bins where P is non-zero; Q is smoothed where P has mass and Q has none.
double kl_divergence(const std::vector<double>& p, const std::vector<double>& q) {
  const double p_sum = std::accumulate(p.begin(), p.end(), 0.0);
  const double q_sum = std::accumulate(q.begin(), q.end(), 0.0);
  if (p_sum == 0 || q_sum == 0) return std::numeric_limits<double>::infinity();
  double kl = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == 0) continue;
    const double pi = p[i] / p_sum;
    const double qi = q[i] == 0 ? 1e-12 : q[i] / q_sum;
    kl += pi * std::log(pi / qi);
  }
  return kl;
}

// Q: the kept bins (without the clipped outliers) merged into `levels` levels, each level's mass
// spread evenly over the bins of that level where the reference P is non-zero (as in TensorRT's
// algorithm).
std::vector<double> quantized(const std::vector<double>& kept, const std::vector<double>& p,
                              int levels) {
  const size_t n = p.size();
  std::vector<double> q(n, 0.0);
  const double per_level = static_cast<double>(n) / levels;
  for (int level = 0; level < levels; ++level) {
    const auto begin = static_cast<size_t>(std::floor(level * per_level));
    const auto end = std::min(n, static_cast<size_t>(std::floor((level + 1) * per_level)));
    double mass = 0;
    size_t nonzero = 0;
    for (size_t j = begin; j < end; ++j) {
      mass += kept[j];
      nonzero += p[j] != 0 ? 1 : 0;
    }
    if (nonzero == 0) continue;
    for (size_t j = begin; j < end; ++j) q[j] = p[j] != 0 ? mass / static_cast<double>(nonzero) : 0;
  }
  return q;
}

}  // namespace

std::string_view calibration_algo_name(CalibrationAlgo a) {
  switch (a) {
    case CalibrationAlgo::kEntropy:
      return "entropy";
    case CalibrationAlgo::kMinMax:
      return "minmax";
    case CalibrationAlgo::kPercentile:
      return "percentile";
  }
  return "?";
}

Result<CalibrationAlgo> parse_calibration_algo(std::string_view name) {
  for (CalibrationAlgo a :
       {CalibrationAlgo::kEntropy, CalibrationAlgo::kMinMax, CalibrationAlgo::kPercentile}) {
    if (calibration_algo_name(a) == name) return a;
  }
  return invalid_argument("unknown calibration algorithm '{}' (entropy, minmax, percentile)", name);
}

double percentile_amax(const AbsHistogram& h, double percentile) {
  if (h.total() == 0 || h.amax() == 0) return 0;
  const auto wanted =
      static_cast<uint64_t>(std::ceil(percentile / 100.0 * static_cast<double>(h.total())));
  uint64_t seen = 0;
  for (int i = 0; i < kHistogramBins; ++i) {
    seen += h.counts()[static_cast<size_t>(i)];
    if (seen >= wanted) return std::min<double>(h.amax(), (i + 1) * h.bin_width());
  }
  return h.amax();
}

double entropy_amax(const AbsHistogram& h) {
  if (h.total() == 0 || h.amax() == 0) return 0;
  // Only bins up to the data's amax matter; the histogram's range may be up to 2x larger.
  const int used =
      std::clamp(static_cast<int>(std::ceil(h.amax() / h.bin_width())), 1, kHistogramBins);
  if (used <= kFirstThreshold) return h.amax();  // 128 levels already cover every bin exactly
  const int levels = h.min() >= 0 ? kUnsignedLevels : kSignedLevels;
  // The spike of exact zeros a ReLU leaves in bin 0 would dominate both distributions and pull the
  // threshold down: bin 0 counts as its neighbour does (as NVIDIA's TensorRT calibration tools do).
  std::vector<uint64_t> c = h.counts();
  c[0] = c[1];
  double best_kl = std::numeric_limits<double>::infinity();
  int best_i = used;
  for (int i = kFirstThreshold; i <= used; ++i) {
    const std::vector<double> kept(c.begin(), c.begin() + i);
    // Values beyond the threshold are clipped to it: in P their mass lands in the last kept bin.
    std::vector<double> p = kept;
    for (int j = i; j < kHistogramBins; ++j)
      p.back() += static_cast<double>(c[static_cast<size_t>(j)]);
    const double kl = kl_divergence(p, quantized(kept, p, levels));
    if (kl < best_kl) {
      best_kl = kl;
      best_i = i;
    }
  }
  return std::min<double>(h.amax(), best_i * h.bin_width());
}

double choose_amax(const AbsHistogram& h, const CalibrationMethod& method) {
  switch (method.algo) {
    case CalibrationAlgo::kMinMax:
      return h.amax();
    case CalibrationAlgo::kPercentile:
      return percentile_amax(h, method.percentile);
    case CalibrationAlgo::kEntropy:
      return entropy_amax(h);
  }
  return h.amax();
}

}  // namespace kiln::quant
