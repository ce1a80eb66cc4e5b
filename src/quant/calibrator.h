#pragma once
// From a tensor's statistics to the absolute max its INT8 scale is made from (scale = amax / 127):
//   minmax      the largest |x| seen: no clipping, coarse steps when outliers are rare;
//   percentile  the |x| below which `percentile`% of the values fall;
//   entropy     TensorRT's entropy calibrator: the clipping threshold whose 128-level quantized
//               distribution has the smallest KL divergence from the observed one (2048-bin
//               histogram, candidate thresholds at bins 128..2048).

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "quant/histogram.h"

namespace kiln::quant {

enum class CalibrationAlgo { kEntropy, kMinMax, kPercentile };

std::string_view calibration_algo_name(CalibrationAlgo a);  // "entropy", "minmax", "percentile"
Result<CalibrationAlgo> parse_calibration_algo(std::string_view name);

struct CalibrationMethod {
  CalibrationAlgo algo = CalibrationAlgo::kEntropy;
  double percentile = 99.99;  // kPercentile only, in (0, 100]
};

// The amax for `h` under `method`; 0 for a tensor that was always 0.
double choose_amax(const AbsHistogram& h, const CalibrationMethod& method);

// The entropy calibrator's threshold alone (exposed for tests).
double entropy_amax(const AbsHistogram& h);
double percentile_amax(const AbsHistogram& h, double percentile);

}  // namespace kiln::quant
