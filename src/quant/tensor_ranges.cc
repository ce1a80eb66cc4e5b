#include "quant/tensor_ranges.h"

#include <cmath>

namespace kiln::quant {

RangeTable RangeTable::from_calibration(const Calibration& c) {
  RangeTable t;
  t.origin_ = c.origin;
  for (const auto& [name, tc] : c.tensors) {
    TensorRange r{tc.amax, {}};
    if (tc.stats && tc.stats->total() > 0) r.min = tc.stats->min();
    t.ranges_.emplace(name, r);
  }
  return t;
}

RangeTable RangeTable::placeholders() {
  RangeTable t;
  t.placeholder_ = true;
  t.origin_ = "placeholder ranges (no calibration)";
  return t;
}

const TensorRange* RangeTable::find(std::string_view tensor, bool is_graph_input) const {
  if (placeholder_) return is_graph_input ? &input_placeholder_ : &other_placeholder_;
  auto it = ranges_.find(tensor);
  return it == ranges_.end() ? nullptr : &it->second;
}

Uint8Encoding uint8_encoding(double amax, bool nonnegative) {
  if (!(amax > 0) || !std::isfinite(amax)) return {1.0f, nonnegative ? 0 : 128};
  if (nonnegative) return {static_cast<float>(amax / 255.0), 0};
  return {static_cast<float>(amax / 127.0), 128};
}

}  // namespace kiln::quant
